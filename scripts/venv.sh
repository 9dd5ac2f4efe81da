# Sourced by scripts/run and scripts/test: create .venv on first use and keep it in step
# with pyproject.toml (reinstalls only when that file, or the extras asked for, changed).
# Needs python3 >= 3.10.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$here/.venv"
py="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    echo "repocontext: creating a virtual environment in $venv" >&2
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip >&2
fi
# Which extras (pyproject.toml): the caller's `venv_extras` (scripts/run: local,nvim,demo, what
# a user needs to complete in Neovim), else test (the suite's, which holds every other extra).
venv_extras="${venv_extras:-test}"
stamp="$venv/.repocontext-installed"
# the stamp: pyproject.toml's hash and the extras installed with it
want="$(sha256sum < "$here/pyproject.toml" | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$have" != "$want test" ] && [ "$have" != "$want $venv_extras" ]; then
    echo "repocontext: installing the package and its dependencies ($venv_extras) into .venv" >&2
    "$venv/bin/python" -m pip install -q -e "$here[$venv_extras]" >&2
    echo "$want $venv_extras" > "$stamp"
fi
export PATH="$venv/bin:$PATH"
