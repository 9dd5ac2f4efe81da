# Sourced by scripts/run and scripts/test: create .venv on first use and keep it in step
# with pyproject.toml (reinstalls only when that file changed). Needs python3 >= 3.10.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$here/.venv"
py="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    echo "repocontext: creating a virtual environment in $venv" >&2
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip >&2
fi
stamp="$venv/.repocontext-installed"
want="$(cat "$here/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "repocontext: installing the package and its dependencies into .venv" >&2
    "$venv/bin/python" -m pip install -q -e "$here[test]" >&2
    echo "$want" > "$stamp"
fi
export PATH="$venv/bin:$PATH"
