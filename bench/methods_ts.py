"""Completion context at TypeScript method calls, `obj.method(`, with the TypeScript compiler's
language service as the oracle: bench/methods.py's measure on TypeScript.

    python bench/methods_ts.py [--per-corpus N] [--out bench/results/methods_ts.md]
    (needs Node and npm; on first use it installs its oracle, a benchmark-only dependency as
    jedi is for bench/methods.py: npm install --prefix .bench-cache/ts-oracle typescript@5)

Corpora, npm packages that ship their TypeScript sources (`src/**/*.ts`), fetched with
`npm pack <name>@<version>` into .bench-cache/ and extracted there:

- prosemirror-view 1.33.8: classes that hold and pass each other across files (EditorView,
  the ViewDesc tree, DOMObserver, InputState), so most receivers are typed ones, a parameter
  `view: EditorView`, a field `this.view.domObserver`, `desc: ViewDesc`; relative imports
  without extensions. Its own imports of prosemirror-model and -state are not installed: those
  types stay unknown to the oracle, and calls on them are not tasks anyway (another package).
- rxjs 7.8.1: larger (251 files) and of another style: classes and interfaces (Observable,
  Subscriber, Subscription, Subject, the schedulers, SchedulerLike) used from operator
  functions whose callbacks' parameters are typed by context, not written
  (`operate((source, subscriber) => ...)`), generics everywhere. Its tsconfig.json is used.

Other packages looked at: @xterm/xterm and langium import by baseUrl path or with `.js`
specifiers, which this project's import resolution does not follow (the bench would measure
that alone); mobx imports everything through an `export * from` barrel, which the TypeScript
facts do not follow either; @tiptap/core gave 42 tasks in all, @microsoft/signalr 178, 101 of
them `ILogger.log`.

Tasks come from bench/ts_oracle.mjs: every `X.m(` call in the non-test .ts files of the
corpus's src/ (no .d.ts, no test or spec file), in a seeded random order (Python's
random.Random(0), as bench/methods.py), is given to the language service
(`getDefinitionAtPosition` at `m`); a call is a task when there is exactly one definition, a
method declaration or method signature (a property whose type is a function is not one:
the engine outlines methods only) of a named class or interface, in another .ts source file
of the corpus, and the receiver is not a namespace or module. Buffers, positions A and B,
rows and figures are bench/methods.py's (its `evaluate` and `render`), except:

- a hit: a snippet shows the method's signature: it holds the declaration's line, or it is
  the outline of the class or interface that declares it with a line declaring the method
  (`[modifiers] name(`, `name<T>(`, `name?(`: the engine's outline lines are the member's
  signature as written, whitespace collapsed);
- no local-only positions (bench/xfile.py builds them from Python files only: its query keeps
  `language = 'python'` and its test of a name bound in the file is Python's scope), so no
  skip rate on them; and no language-server row (its stand-in is jedi, the Python oracle).

The task set is cached in .bench-cache/methods-<corpus>-<limit>.json (the oracle's counts
beside it, -oracle.json) and was fixed before any result was looked at.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from methods import MethodTask, evaluate, render, shows_declaration  # noqa: E402

CACHE = REPO / ".bench-cache"
ORACLE = CACHE / "ts-oracle"
TYPESCRIPT = ORACLE / "node_modules" / "typescript"
HELPER = HERE / "ts_oracle.mjs"
# name: (npm package, version, REPOCONTEXT_HOME under .bench-cache, source folder)
CORPORA = {
    "prosemirror-view": ("prosemirror-view", "1.33.8", "home-prosemirror-view", "src"),
    "rxjs": ("rxjs", "7.8.1", "home-rxjs", "src"),
}
ORACLE_NAME = "the TypeScript language service"
_MODIFIERS = r"(?:(?:public|private|protected|static|async|readonly|abstract|override|declare)\s+)*"
_DECORATORS = r"(?:@[\w.]+(?:\([^)\n]*\))?\s+)*"


def ensure_typescript() -> str:
    """The oracle's TypeScript (installed on first use); its version."""
    if not (TYPESCRIPT / "package.json").exists():
        ORACLE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(ORACLE)]
            + ["typescript@5"],
            check=True,
        )
    return json.loads((TYPESCRIPT / "package.json").read_text())["version"]


def fetch_npm(name: str, version: str) -> Path:
    """The package's tarball from the registry (`npm pack`), extracted once into .bench-cache."""
    CACHE.mkdir(exist_ok=True)
    root = CACHE / f"{name.lstrip('@').replace('/', '-')}-{version}"
    if not root.exists():
        out = subprocess.run(
            ["npm", "pack", "--silent", "--pack-destination", str(CACHE), f"{name}@{version}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        archive = CACHE / out.strip().splitlines()[-1]
        partial = root.with_name(root.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        subprocess.run(
            ["tar", "-xzf", str(archive), "-C", str(partial), "--strip-components=1"], check=True
        )
        partial.rename(root)
    return root


def _oracle(*args: str, stdin: str | None = None):
    out = subprocess.run(
        ["node", str(HELPER), args[0], str(TYPESCRIPT), *args[1:]],
        input=stdin,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def find_tasks(root: Path, src: str, limit: int, rng: random.Random) -> tuple[list, dict]:
    sites = _oracle("sites", str(root), src)
    rng.shuffle(sites)
    found = _oracle("resolve", str(root), src, str(limit), stdin=json.dumps(sites))
    tasks = [MethodTask(**t) for t in found.pop("tasks")]
    return tasks, found


def _cache(name: str, limit: int) -> tuple[Path, Path]:
    return CACHE / f"methods-{name}-{limit}.json", CACHE / f"methods-{name}-{limit}-oracle.json"


def load_tasks(name: str, root: Path, src: str, limit: int) -> list[MethodTask]:
    cache, counts = _cache(name, limit)
    if cache.exists():
        return [MethodTask(**t) for t in json.loads(cache.read_text())]
    t0 = time.time()
    tasks, found = find_tasks(root, src, limit, random.Random(0))
    print(
        f"{name}: {len(tasks)} tasks from the TypeScript language service in "
        f"{time.time() - t0:.0f} s ({found['tried']} of {found['sites']} calls tried; "
        f"skipped: {found['skipped']})",
        file=sys.stderr,
    )
    cache.write_text(json.dumps([asdict(t) for t in tasks]))
    counts.write_text(json.dumps(found))
    return tasks


def shows_signature(snippet, task: MethodTask) -> bool:
    """The declaration's line, or the line of the method in its class's (interface's) outline."""
    declares = rf"^\s*{_DECORATORS}{_MODIFIERS}\*?\s*{re.escape(task.method)}\s*\??\s*[<(]"
    return shows_declaration(snippet, task, declares)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-corpus", type=int, default=120)
    ap.add_argument("--corpora", default=",".join(CORPORA))
    ap.add_argument("--out", default=str(HERE / "results/methods_ts.md"))
    args = ap.parse_args()
    if not shutil.which("node") or not shutil.which("npm"):
        print("bench/methods_ts.py needs Node and npm", file=sys.stderr)
        return 2
    version = ensure_typescript()
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    results, about = [], []
    for key in args.corpora.split(","):
        package, pinned, home, src = CORPORA[key]
        corpus = fetch_npm(package, pinned)
        results.append(
            evaluate(
                key,
                corpus,
                CACHE / home,
                src,
                args.per_corpus,
                load=load_tasks,
                shows=shows_signature,
                python=False,
            )
        )
        counts = _cache(key, args.per_corpus)[1]
        if counts.exists():
            found = json.loads(counts.read_text())
            skipped = "; ".join(f"{why} {k}" for why, k in sorted(found["skipped"].items()))
            about.append(
                f"{key} {pinned} (npm pack, {src}/): {results[-1]['n']} tasks from the first "
                f"{found['tried']} of its {found['sites']} calls `X.m(` in a seeded order (not "
                f"tasks: {skipped}; found with TypeScript {found['typescript']}).  "
            )
    about.append(
        f"Oracle: TypeScript {version} on Node {node}, `getDefinitionAtPosition` at the method "
        "(bench/ts_oracle.mjs). A hit in an outline: the class or interface declaring the "
        "method, with a line `[modifiers] method(` (or `method<`, `method?(`). No local-only "
        "positions (bench/xfile.py builds them for Python only) and no language-server row "
        "(jedi, Python's). Goals: the Python ones, A >= 0.95 and B >= 0.85 at 1,024 tokens."
    )
    command = ("python bench/methods_ts.py " + " ".join(sys.argv[1:])).strip()
    text = render(results, command, oracle=ORACLE_NAME, about=tuple(about))
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
