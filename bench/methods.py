"""Completion context at method calls, `obj.method(`, with jedi as the oracle.

    python bench/methods.py [--per-corpus N] [--out bench/results/methods.md]
    (needs jedi, a benchmark-only dependency: pip install -e '.[bench]')

Tasks come from real code and an analyser this project does not use: every `X.m(` call in
the non-test Python files of requests 2.32.3 and Django 5.2.19, in a seeded random order, is
given to jedi (`goto` on `m`, following imports); a call is a task when jedi names exactly
one definition, a method of a class, in another file of the corpus, and the receiver is not
a module. The buffer is the file with the call's line cut at the cursor (lines below kept):

- A: right after `obj.m`, the method's name typed;
- B: right after `obj.`, nothing typed yet: the moment a suggestion is most wanted.

A hit: a snippet shows the method's signature, as its own definition or as a line of its
class's outline. Rows, in one run: the CrossCodeEval baseline (BM25 over the last 10 prefix
lines into 10-line windows, top 5); ours at 512 and 1,024 tokens; ours always retrieving.
Also: tokens sent, the share of sent snippets the oracle would not name (neither the method
nor its class), the skip rate on local-only positions (bench/xfile.py's local tasks, which
need nothing from other files) with the recall lost to skipping, and latency in-process.
The task set is cached in .bench-cache/ and was fixed before any result was looked at.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import random
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from requests_seed import fetch_corpus  # noqa: E402
from stats import percentile  # noqa: E402
from xfile import CrossCodeEvalBM25, Task, build_local_tasks  # noqa: E402

from repocontext.context.engine import ContextEngine  # noqa: E402
from repocontext.context.request import CursorRequest  # noqa: E402
from repocontext.service import Repository  # noqa: E402

BUDGETS = (512, 1024)
# requests and Django (mostly unannotated: jedi resolves few calls in requests), and httpx
# (annotated throughout). rich and starlette were held out while the engine was built and
# measured once at the end (--corpora rich,starlette).
CORPORA = {
    "requests": ("requests==2.32.3", "2.32.3", "home-requests", "src/requests"),
    "django": ("django==5.2.19", "5.2.19", "home-django", "django"),
    "httpx": ("httpx==0.28.1", "0.28.1", "home-httpx", "httpx"),
    "rich": ("rich==13.9.4", "13.9.4", "home-rich", "rich"),
    "starlette": ("starlette==0.41.3", "0.41.3", "home-starlette", "starlette"),
}


@dataclass
class MethodTask:
    path: str
    line: int
    col_a: int  # byte offset after `obj.m`
    col_b: int  # byte offset after `obj.`
    method: str
    cls: str  # the class that defines it (jedi)
    def_path: str
    def_line: int


def find_tasks(root: Path, src: str, limit: int, rng: random.Random) -> list[MethodTask]:
    import jedi

    project = jedi.Project(
        str(root), added_sys_path=[str(root / "src")] if (root / "src").is_dir() else []
    )
    files = sorted(
        p for p in (root / src).rglob("*.py") if "tests" not in p.parts and "test" not in p.name
    )
    sites = []
    for path in files:
        code = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                sites.append((path, code, node.func))
    rng.shuffle(sites)
    tasks: list[MethodTask] = []
    scripts: dict[Path, object] = {}
    for path, code, func in sites:
        if len(tasks) >= limit:
            break
        lines = code.split("\n")
        line = func.end_lineno
        text = lines[line - 1]
        end = _char_col(text, func.end_col_offset)
        start = end - len(func.attr)
        if start < 1 or text[start:end] != func.attr or text[start - 1] != ".":
            continue  # the name is not right after a dot on this line (odd formatting)
        if path not in scripts:
            scripts[path] = jedi.Script(code, path=str(path), project=project)
        script = scripts[path]
        try:
            defs = script.goto(line, start, follow_imports=True)
            receiver = script.goto(line, start - 2, follow_imports=True) if start >= 2 else []
        except Exception:
            continue
        if len(defs) != 1 or any(r.type == "module" for r in receiver):
            continue
        d = defs[0]
        parent = d.parent()
        if (
            d.type != "function"
            or d.module_path is None
            or parent is None
            or parent.type != "class"
            or d.line is None
        ):
            continue
        try:
            def_rel = Path(d.module_path).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue  # the standard library or a third-party package
        rel = path.relative_to(root).as_posix()
        if def_rel == rel or not def_rel.endswith(".py"):
            continue
        tasks.append(
            MethodTask(
                rel,
                line,
                len(text[:end].encode()),
                len(text[:start].encode()),
                func.attr,
                parent.name,
                def_rel,
                d.line,
            )
        )
    return tasks


def _char_col(text: str, byte_col: int) -> int:
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", "ignore"))


def buffer_at(root: Path, task: MethodTask, col: int) -> str:
    lines = (root / task.path).read_text(encoding="utf-8", errors="replace").split("\n")
    cut = lines[task.line - 1].encode("utf-8")[:col].decode("utf-8", "ignore")
    return "\n".join(lines[: task.line - 1] + [cut] + lines[task.line :])


def shows_declaration(snippet, task: MethodTask, declares: str) -> bool:
    """The declaration's line, or a line matching `declares` in its class's outline."""
    if snippet.path != task.def_path:
        return False
    if snippet.start_line <= task.def_line <= snippet.end_line:
        return True
    outline_of_class = (snippet.symbol or "").split(".")[-1] == task.cls
    return outline_of_class and re.search(declares, snippet.text, re.M) is not None


def shows_signature(snippet, task: MethodTask) -> bool:
    declares = rf"^\s*(async\s+)?def\s+{re.escape(task.method)}\s*\("
    return shows_declaration(snippet, task, declares)


def named_by_oracle(snippet, task: MethodTask) -> bool:
    """The method's definition or its class's outline: what the oracle says the model needs."""
    return snippet.path == task.def_path and (
        snippet.start_line <= task.def_line <= snippet.end_line
        or (snippet.symbol or "").split(".")[-1] == task.cls
    )


def load_tasks(name: str, root: Path, src: str, limit: int) -> list[MethodTask]:
    cache = REPO / ".bench-cache" / f"methods-{name}-{limit}.json"
    if cache.exists():
        return [MethodTask(**t) for t in json.loads(cache.read_text())]
    t0 = time.time()
    tasks = find_tasks(root, src, limit, random.Random(0))
    print(f"{name}: {len(tasks)} tasks from jedi in {time.time() - t0:.0f} s", file=sys.stderr)
    cache.write_text(json.dumps([asdict(t) for t in tasks]))
    return tasks


def evaluate(
    name: str,
    root: Path,
    home: Path,
    src: str,
    limit: int,
    load=load_tasks,
    shows=shows_signature,
    python: bool = True,
) -> dict:
    """`load` gives the tasks, `shows` says whether a snippet shows the method's signature;
    `python`: also the local-only positions and the language-server row (both Python only)."""
    os.environ["REPOCONTEXT_HOME"] = str(home)
    repo = Repository(root)
    repo.index()
    repo.embed()
    tasks = load(name, root, src, limit)
    out: dict = {"corpus": name, "n": len(tasks)}
    with repo.open_store() as store:
        engine = ContextEngine(repo.root, store, repo.vector_retriever(store, cache=True))
        baseline = CrossCodeEvalBM25(root, sorted(store.file_states()))
        buffers = {
            (id(t), k): buffer_at(root, t, t.col_a if k == "A" else t.col_b)
            for t in tasks
            for k in "AB"
        }
        first = tasks[0]
        engine.build(CursorRequest(first.path, first.line, first.col_b, buffers[(id(first), "B")]))
        rows = {}
        for budget in BUDGETS:
            for forced in (False, True):
                r = {
                    "A": 0,
                    "B": 0,
                    "tokens": [],
                    "lat": [],
                    "skipped": 0,
                    "sent": 0,
                    "irrelevant": 0,
                    "skipped_A": 0,
                }
                for t in tasks:
                    for k in "AB":
                        col = t.col_a if k == "A" else t.col_b
                        t0 = time.perf_counter()
                        pkg = engine.build(
                            CursorRequest(t.path, t.line, col, buffers[(id(t), k)], budget),
                            top1_probability=0.0 if forced else None,
                        )
                        r["lat"].append((time.perf_counter() - t0) * 1000)
                        r[k] += any(shows(s, t) for s in pkg.snippets)
                        r["skipped"] += not pkg.retrieved
                        r["skipped_A"] += k == "A" and not pkg.retrieved
                        r["tokens"].append(pkg.tokens)
                        r["sent"] += len(pkg.snippets)
                        r["irrelevant"] += sum(not named_by_oracle(s, t) for s in pkg.snippets)
                rows[(budget, forced)] = r
        base = {"A": 0, "B": 0, "tokens": []}
        for t in tasks:
            for k in "AB":
                col = t.col_a if k == "A" else t.col_b
                wins = baseline.retrieve(Task(k, t.path, t.line, col, buffers[(id(t), k)]))
                base[k] += any(
                    w.path == t.def_path and w.start_line <= t.def_line <= w.end_line for w in wins
                )
                base["tokens"].append(sum(w.tokens for w in wins))
        texts: dict[str, list[str]] = {}

        def lines_of(path):
            if path not in texts:
                texts[path] = (
                    (root / path).read_text(encoding="utf-8", errors="replace").split("\n")
                )
            return texts[path]

        local = (
            build_local_tasks(root, store, len(tasks), random.Random(0), lines_of) if python else []
        )
        local_skips, local_lat = 0, []
        for t in local:
            t0 = time.perf_counter()
            pkg = engine.build(CursorRequest(t.path, t.line, t.col, t.text, 1024))
            local_lat.append((time.perf_counter() - t0) * 1000)
            local_skips += not pkg.retrieved
        # As typed: the same request right after the one for the keystroke before it (one
        # character less), the way the editor asks; what the engine keeps between keystrokes
        # (the buffer's analysis, the last queries' results) is then in use.
        keystroke = []
        for t in tasks:
            for k in "AB":
                col = t.col_a if k == "A" else t.col_b
                buf = buffers[(id(t), k)]
                lines = buf.split("\n")
                current = lines[t.line - 1].encode("utf-8")
                before = current[: col - 1].decode("utf-8", "ignore")
                prev = "\n".join(lines[: t.line - 1] + [before] + lines[t.line :])
                engine.build(CursorRequest(t.path, t.line, len(before.encode()), prev, 1024))
                t0 = time.perf_counter()
                engine.build(CursorRequest(t.path, t.line, col, buf, 1024))
                keystroke.append((time.perf_counter() - t0) * 1000)
        out.update(
            rows=rows,
            base=base,
            local=len(local) if python else None,
            local_skips=local_skips,
            local_lat=local_lat,
            keystroke=keystroke,
            lsp=with_language_server(engine, root, tasks, buffers) if python else None,
        )
    return out


def with_language_server(engine, root: Path, tasks, buffers) -> dict:
    """The editor's fallback: where our typing finds nothing, a language server's
    typeDefinition for the receiver (here jedi's `infer`, which is what jedi-language-server
    answers with) is passed back as `receiver_location`. jedi is also the oracle, so this row
    is an upper bound of what a language server adds."""
    import jedi

    r = {"A": 0, "B": 0, "asked": 0, "answered": 0}
    for t in tasks:
        for k in "AB":
            col = t.col_a if k == "A" else t.col_b
            buf = buffers[(id(t), k)]
            request = CursorRequest(t.path, t.line, col, buf, 1024)
            pkg = engine.build(request)
            receiver = getattr(pkg, "receiver", None)  # (absent before receiver typing)
            if receiver and not receiver["types"] and receiver["col"] is not None:
                r["asked"] += 1
                line_text = buf.split("\n")[t.line - 1]
                char = len(line_text.encode()[: receiver["col"]].decode("utf-8", "ignore"))
                try:
                    found = jedi.Script(buf, path=str(root / t.path)).infer(t.line, char)
                except Exception:
                    found = []
                where = next(
                    (
                        (d.module_path, d.line)
                        for d in found
                        if d.module_path
                        and d.line
                        and Path(d.module_path).resolve().is_relative_to(root.resolve())
                    ),
                    None,
                )
                if where is not None:
                    r["answered"] += 1
                    rel = Path(where[0]).resolve().relative_to(root.resolve()).as_posix()
                    request.receiver_location = (rel, where[1])
                    pkg = engine.build(request)
            r[k] += any(shows_signature(s, t) for s in pkg.snippets)
    return r


def render(
    results: list[dict], command: str, oracle: str = "jedi", about: tuple[str, ...] = ()
) -> str:
    """`about`: lines after the header's (a corpus without local-only positions, `local` None,
    or without the language-server row, `lsp` None, gets "-" there)."""
    lines = [
        f"# Method calls: completion context at `obj.method` (A) and `obj.` (B), {oracle} as "
        "oracle",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}  ",
        "A hit: a snippet shows the method's signature (its definition, or its line in the "
        "class outline). Irrelevant: a sent snippet that is neither the method nor its class. "
        "Token counts are estimates (3.5 characters per token)." + ("  " if about else ""),
        *about,
        "",
    ]
    goals = []
    for r in results:
        n = r["n"]
        lines += [
            f"## {r['corpus']} ({n} method calls resolved by {oracle} to another file)",
            "",
            "| row | budget | A | B | mean tokens | snippets sent per request | "
            "irrelevant share | skipped |",
            "|---|---|---|---|---|---|---|---|",
        ]
        b = r["base"]
        lines.append(
            f"| CrossCodeEval BM25, 10-line windows, top 5 | - | {b['A'] / n:.2f} | "
            f"{b['B'] / n:.2f} | {sum(b['tokens']) / (2 * n):.0f} | 5 | - | - |"
        )
        for forced in (False, True):
            for budget in BUDGETS:
                row = r["rows"][(budget, forced)]
                label = "ours, always retrieving" if forced else "ours"
                lines.append(
                    f"| {label} | {budget} | {row['A'] / n:.2f} | {row['B'] / n:.2f} | "
                    f"{sum(row['tokens']) / (2 * n):.0f} | {row['sent'] / (2 * n):.2f} | "
                    f"{row['irrelevant'] / max(1, row['sent']):.2f} | {row['skipped']} of {2 * n} |"
                )
        lsp = r["lsp"]
        if lsp is not None:
            lines.append(
                f"| ours + a language server's answer where ours is empty (upper bound: "
                f"jedi, as the oracle) | 1024 | {lsp['A'] / n:.2f} | {lsp['B'] / n:.2f} | - | - "
                f"| - | asked {lsp['asked']}, answered {lsp['answered']} |"
            )
        ours = r["rows"][(1024, False)]
        forced = r["rows"][(1024, True)]
        lost = 100 * ((forced["A"] + forced["B"]) - (ours["A"] + ours["B"])) / (2 * n)
        if r["local"] is not None:
            skip = r["local_skips"] / max(1, r["local"])
            # as in bench/xfile.py: each call site once (position A) and as many local positions
            mixed_skip = (r["local_skips"] + ours["skipped_A"]) / max(1, r["local"] + n)
            local_line = (
                f"Local-only positions (bench/xfile.py's local tasks): {r['local_skips']} of "
                f"{r['local']} skipped ({100 * skip:.0f}%); over the mixed set (these and the "
                f"{n} calls at A) {100 * mixed_skip:.0f}% skipped; recall lost by skipping "
                f"(A+B, 1,024 tokens): {lost:.1f} points.  "
            )
        else:
            mixed_skip = None
            local_line = (
                "Local-only positions: - (bench/xfile.py's local tasks are Python only); "
                f"recall lost by skipping (A+B, 1,024 tokens): {lost:.1f} points.  "
            )
        cold = ours["lat"] + r["local_lat"]
        lat = r["keystroke"]
        lines += [
            "",
            local_line,
            f"Latency at 1,024 tokens, in-process: as typed (right after the request for the "
            f"keystroke before) p50 {percentile(lat, 50):.1f} ms, p95 {percentile(lat, 95):.1f} "
            f"ms; cold (the first request on a buffer) p50 {percentile(cold, 50):.1f} ms, p95 "
            f"{percentile(cold, 95):.1f} ms.",
            "",
        ]
        a, bb = ours["A"] / n, ours["B"] / n
        skipping = (
            f"{100 * mixed_skip:.0f}% / {lost:.1f} (**"
            f"{'met' if mixed_skip >= 0.4 and lost < 3 else 'not met'}**)"
            if mixed_skip is not None
            else f"- / {lost:.1f} (no local-only positions)"
        )
        goals.append(
            f"- {r['corpus']}: A >= 0.95 at 1,024: {a:.2f} (**{'met' if a >= 0.95 else 'not met'}"
            f"**); B >= 0.85: {bb:.2f} (**{'met' if bb >= 0.85 else 'not met'}**); skip >= 40% of "
            f"the mixed set losing < 3 points: {skipping}; context p95 <= 30 ms: "
            f"{percentile(lat, 95):.1f} ms as typed (**"
            f"{'met' if percentile(lat, 95) <= 30 else 'not met'}**)."
        )
    lines += ["## Goals", ""] + goals
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-corpus", type=int, default=120)
    ap.add_argument("--corpora", default="requests,django,httpx")
    ap.add_argument("--out", default=str(HERE / "results/methods.md"))
    args = ap.parse_args()
    try:
        import jedi  # noqa: F401
    except ImportError:
        print("bench/methods.py needs jedi: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    results = []
    for key in args.corpora.split(","):
        spec, version, home, src = CORPORA[key]
        corpus = fetch_corpus(spec, version)
        results.append(
            evaluate(
                spec.split("==")[0], corpus, REPO / ".bench-cache" / home, src, args.per_corpus
            )
        )
    text = render(results, ("python bench/methods.py " + " ".join(sys.argv[1:])).strip())
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
