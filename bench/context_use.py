"""Does the model use the context it is given? One generation per cross-file call site with no
context, with the context the engine retrieved, and with the callee's definition alone; each
with the decoder steered (complete/steering/, the defaults) and not.

    python bench/context_use.py [--per-set 60] [--corpora requests,rich] [--max-tokens 32]
        [--steering off,on] [--out ...]

Why: bench/results/savings.md measures that turning the repository context off saves about as
many keystrokes as leaving it on, and quality.md that first-line exact match barely moves. Two
causes would look the same there: the retrieval does not find what the line needs, or the
model does not copy from what it is given. This bench separates them. Its tasks are
bench/xfile.py's cross-file call sites (built from the index alone: a call of a function or
class defined in another file, A cut just after the callee's name, B just inside `(`), where
the retrieval's definition recall is measured at 93-98% (bench/results/xfile.md). Each task is
generated three times by the product's CompletionEngine, greedy, every gate off, no deadline
pressure (quality.py's generation_config):
- local: `mode="local"`, no context (what `context_budget = 0` sends);
- retrieved: `mode="sequential"`, the context engine's package at the default budget;
- oracle: `mode="sequential"` with a context engine that returns one snippet, the callee's
  definition (its chunk, at most ORACLE_LINES lines from the `def`/`class` line): the best
  context any retrieval could send.
Measures, per mode and cut: first-line exact match (the suggestion's first line, stripped,
equals the rest of the real line, stripped), the first name right (the first identifier of the
suggestion equals the first identifier of the rest: after `(`, usually the first argument),
prompt tokens evaluated, and how often the retrieved package covered the definition (xfile.py's
`covers`). If oracle is no better than local, the model does not use context however good it
is; if oracle is better and retrieved is not, the retrieval is at fault.

Steering: "off" turns every source off (member_bias, line_bias, scope_bias, call_bias,
copy_bias), "on" turns all five on, "shipped" leaves them as the defaults have them (members
and lines), "+calls" (and "+scope", "+copy", ...) is shipped with that source on too. In
local mode the steering reads the buffer only (no index: what `[context] use_repository =
false` steers with); in retrieved and oracle mode it reads the package too (its names, its
signatures, its text for the n-gram cache). With `--cache warm` the steering rows of a mode
share their prompt, so the second one finds it in the KV cache. `--max-tokens` (default 32)
cuts each generation: only its first line is measured.

`--cache cold` (the default) evaluates every generation's prompt from an empty KV cache, so
that a row's text depends on its prompt alone. llama.cpp's numbers depend on how a prompt is
split into batches and on cells moved in the cache (`cache_reuse`), and a small model's first
name is often a near tie: on rich, the same 40 prompts and packages gave 7 exact first lines in
one run and 10 in another, the only difference being which prompt the cache held before
(2026-12-05; 15 of 40 texts differed with cells moved, 4 with the common prefix only).
`--cache warm` keeps the cache between generations, as a session does (the runs before
2026-12-05 were made so): cheaper, and the rows then share a prompt's evaluation.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from quality import CORPORA, fetch, generation_config  # noqa: E402
from requests_seed import fetch_corpus  # noqa: E402
from xfile import Task, build_tasks, covers  # noqa: E402

from repocontext.complete.cache import SuggestionCache  # noqa: E402
from repocontext.config import Config, GenerationConfig  # noqa: E402
from repocontext.context.request import ContextPackage, CursorRequest, Snippet  # noqa: E402
from repocontext.service import Repository  # noqa: E402

MODES = ("local", "retrieved", "oracle")
ORACLE_LINES = 30
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class OracleContext:
    """A context engine that knows the answer: the task's callee definition, nothing else."""

    def __init__(self, root: Path, ends: dict[tuple[str, int], int], index):
        self.root, self.ends, self.task, self.index = root, ends, None, index

    def repository_names(self):
        """The index's names and heads, as the real engine has them: the oracle changes the
        package only."""
        return self.index.repository_names()

    def repository_lines(self):
        """The index's lines, as the real engine has them."""
        return self.index.repository_lines()

    def build(self, request: CursorRequest, top1_probability=None) -> ContextPackage:
        t: Task = self.task
        end = self.ends.get((t.def_path, t.def_line), t.def_line)
        end = min(end, t.def_line + ORACLE_LINES - 1)
        lines = (self.root / t.def_path).read_text(encoding="utf-8", errors="replace").split("\n")
        text = "\n".join(lines[t.def_line - 1 : end])
        snippet = Snippet(t.def_path, t.def_line, end, t.callee, "definition", 1.0, 0, text)
        return ContextPackage(
            request.file, request.line, request.col, True, None, [snippet], 0,
            request.budget or 0, {}, ["oracle"],
        )  # fmt: skip


def rest_of(root: Path, t: Task) -> str:
    line = (root / t.path).read_text(encoding="utf-8", errors="replace").split("\n")[t.line - 1]
    return line.encode()[t.col :].decode("utf-8", "replace")


def first_name(text: str) -> str | None:
    m = _NAME.search(text)
    return m.group(0) if m else None


def corpus_root(name: str) -> Path:
    if name == "requests":
        return fetch_corpus("requests==2.32.3", "2.32.3")
    if name == "rich":
        from savings import CORPORA as SAVINGS_CORPORA

        return fetch(SAVINGS_CORPORA["python"])
    corpus = next(c for c in CORPORA if c.name == name)
    return fetch(corpus)


def rows_of(steering: list[str]) -> list[str]:
    return [f"{mode}, steering {on}" for mode in MODES for on in steering]


SOURCES = ("member_bias", "line_bias", "scope_bias", "call_bias", "copy_bias")
# "+name": the sources the defaults turn on, and this one
ONE_MORE = {"+members": "member_bias", "+lines": "line_bias", "+scope": "scope_bias",
            "+calls": "call_bias", "+copy": "copy_bias"}  # fmt: skip
STEERINGS = ("off", "shipped", "on", *ONE_MORE)


def steered(config: GenerationConfig, on: str) -> GenerationConfig:
    """Every source on ("on"), every source off ("off"), the sources the defaults turn on
    ("shipped": what a user gets), or those and one more ("+calls"), to tell each source's
    part."""
    shipped = GenerationConfig()
    if on in ONE_MORE:
        values = {s: getattr(shipped, s) or s == ONE_MORE[on] for s in SOURCES}
    else:
        values = {s: getattr(shipped, s) if on == "shipped" else on == "on" for s in SOURCES}
    return replace(config, **values)


def evaluate(
    name: str,
    root: Path,
    per_set: int,
    max_tokens: int,
    steering: list[str],
    log,
    cold: bool = True,
) -> dict:
    os.environ["REPOCONTEXT_HOME"] = str(REPO / ".bench-cache" / f"home-context-use-{name}")
    config = replace(generation_config(), max_tokens=max_tokens)
    repo = Repository(root, config=Config(generation=config))
    repo.index()
    results: dict[str, list[dict]] = {row: [] for row in rows_of(steering)}
    with repo.open_store() as store:
        tasks = [
            t for t in build_tasks(root, store, per_set, random.Random(0)) if t.kind != "local"
        ]
        ends = {
            (p, s): e
            for p, s, e in store.db.execute(
                "SELECT f.path, c.start_line, c.end_line FROM chunks c JOIN files f "
                "ON f.id = c.file_id WHERE c.name IS NOT NULL"
            )
        }
    engine = repo.completion_engine()
    retrieval = engine.context
    oracle = OracleContext(root, ends, retrieval)
    engine.complete(
        CursorRequest(tasks[0].path, tasks[0].line, tasks[0].col, tasks[0].text), "local"
    )
    for i, t in enumerate(tasks):
        rest = rest_of(root, t).strip()
        request = CursorRequest(t.path, t.line, t.col, t.text)
        for mode, on in ((m, on) for m in MODES for on in steering):
            engine.context = oracle if mode == "oracle" else retrieval
            engine.config = steered(config, on)
            oracle.task = t
            engine.cache = SuggestionCache()  # each mode generates
            engine.last_context.clear()  # each mode builds its own (none for local)
            if cold:
                engine.backend.reset()  # the prompt alone decides (module docstring)
            t0 = time.process_time()
            s = engine.complete(replace(request), "local" if mode == "local" else "sequential")
            first = (s.ungated.split("\n") or [""])[0].strip()
            package = engine.last_context.get(t.path) if mode == "retrieved" else None
            results[f"{mode}, steering {on}"].append({
                "kind": t.kind, "exact": bool(first) and first == rest,
                "name": first_name(first) is not None and first_name(first) == first_name(rest),
                "evaluated": s.tokens_evaluated, "snippets": s.snippets, "cpu": time.process_time() - t0,
                "covered": covers(package.snippets, t) if package is not None else None,
                "text": first, "rest": rest,
            })  # fmt: skip
        if i % 10 == 0:
            last = results[rows_of(steering)[-1]][-1]["text"][:40]
            log(f"{name} {i + 1}/{len(tasks)} {last!r}")
    engine.close()
    return {"corpus": name, "tasks": len(tasks), "results": results, "steering": steering,
            "cache": "cold" if cold else "warm"}  # fmt: skip


def render(all_results: list[dict], command: str) -> str:
    out = [
        "# Does the model use the context? Cross-file call sites, no context / retrieved / the "
        "callee's definition alone",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  ",
        "Model: the embedded default (gemma-3-270m Q4_K_M), greedy, gates off. Method: the "
        "docstring of bench/context_use.py. Steering on: every source (members, lines, scope, "
        "calls, copy; complete/steering/); shipped: the defaults (members, lines). KV cache: "
        f"{all_results[0]['cache'] if all_results else '-'} (cold: every prompt evaluated from an "
        "empty cache; warm: kept between generations).",
        "",
        "| corpus | cut | tasks | mode | first line exact | first name right | retrieved "
        "package has the definition | prompt tokens evaluated, mean | CPU s, mean |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in all_results:
        for kind in ("A", "B", "all"):
            for mode in rows_of(r["steering"]):
                rows = [x for x in r["results"][mode] if kind == "all" or x["kind"] == kind]
                n = len(rows)
                if not n:
                    continue
                cov = [x["covered"] for x in rows if x["covered"] is not None]
                out.append(
                    f"| {r['corpus']} | {kind} | {n} | {mode} | "
                    f"{sum(x['exact'] for x in rows)} ({100 * sum(x['exact'] for x in rows) / n:.0f}%) | "
                    f"{sum(x['name'] for x in rows)} ({100 * sum(x['name'] for x in rows) / n:.0f}%) | "
                    f"{f'{sum(cov)}/{len(cov)}' if cov else '-'} | "
                    f"{sum(x['evaluated'] for x in rows) / n:.0f} | "
                    f"{sum(x['cpu'] for x in rows) / n:.2f} |"
                )  # fmt: skip
    comparisons = [("the oracle and no context differ", "local", "oracle", None)] + [
        (f"steering {on} changes the retrieved row", "retrieved", "retrieved", on)
        for on in STEERINGS[1:]
        if any(on in r["steering"][1:] for r in all_results)
    ]
    for title, left, right, on_right in comparisons:
        out += ["", f"## Where {title} (first 12 per corpus)", ""]
        for r in all_results:
            on = on_right or r["steering"][-1]
            lrow, rrow = f"{left}, steering {r['steering'][0]}", f"{right}, steering {on}"
            if lrow == rrow or rrow not in r["results"]:
                continue
            loc, ora = r["results"][lrow], r["results"][rrow]
            diff = [
                (a, b) for a, b in zip(loc, ora)
                if a["exact"] != b["exact"] or a["name"] != b["name"]
            ]  # fmt: skip
            for a, b in diff[:12]:
                out.append(f"- {r['corpus']} {a['kind']}: rest `{a['rest'][:50]}`; {lrow} "
                           f"`{a['text'][:50]}`; {rrow} `{b['text'][:50]}`")  # fmt: skip
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-set", type=int, default=60)
    ap.add_argument("--corpora", default="requests,rich")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument(
        "--steering", default="off,shipped,on",
        help=f"any of {', '.join(STEERINGS)} (+name: shipped and that source)",
    )  # fmt: skip
    ap.add_argument(
        "--cache", choices=("cold", "warm"), default="cold",
        help="cold: every prompt from an empty KV cache; warm: kept between generations",
    )  # fmt: skip
    ap.add_argument("--out", default=str(HERE / "results/context_use.md"))
    args = ap.parse_args()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    steering = args.steering.split(",")
    if not steering or any(on not in STEERINGS for on in steering):
        ap.error(f"--steering takes {', '.join(STEERINGS)}, separated by commas")
    results = [
        evaluate(
            n, corpus_root(n), args.per_set, args.max_tokens, steering, log, args.cache == "cold"
        )
        for n in args.corpora.split(",")
    ]
    command = ("python bench/context_use.py " + " ".join(sys.argv[1:])).strip()
    text = render(results, command)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
