"""Search on the labelled sets of every repository in bench/labelled/, per kind of query, with
its weights chosen in-sample and with this repository held out, beside a naive baseline.

    python bench/search_sets.py [--out bench/results/search_sets.md] [--only click,gin]
                                [--dump rows.json]

Sets (written blind, before any result was seen; each file's "about" says how): questions,
identifiers, messages and real bug reports from each repository's history, in Python, Go,
JavaScript/TypeScript and Rust. A corpus is a release's source distribution (`name==version`,
from PyPI) or a commit of the repository (`github:owner/name@sha`, from a snapshot the search
tool's `fetch` brought to $REPOCONTEXT_MIRROR, default /work/.mirror, with its history).

Two passes. The first runs every configuration of every family of weights (tuning.py) on the
queries it acts on, in every repository. Then, per family, the configuration with the best
mean over all repositories is the in-sample choice, and for each repository the best over the
*other* repositories is its held-out choice (leave-one-repository-out). A tuned value ships
only if, held out, it beats what ships before on the mean over repositories and lowers no
language's mean (tuning.decide). The second pass measures each repository twice: `in-sample`
is what the code ships, `held-out` what the same procedure, its ship rule included, would ship
had the repository not been in the dev sets (tuning.fold_ships): what a repository the tuning
never saw gets.

Every table is given per kind, per repository and per language (each labelled file's
`language`; JavaScript and TypeScript also together as js/ts), with hits per 25 queries beside
the counts (issue 52). A corpus missing from the mirror stops the run before it starts, with
the `fetch` to run.

Columns: `ours` is the default search (`auto`, no second stage, at most PER_FILE chunks of a
file, one more for each CHUNKS_PER_PLACE chunks of a big file up to PER_FILE_MOST); `second
stage` the same with
the second stage (`[search] rerank = true`, which this script turns on for its own process);
`3 a file` at most PER_FILE chunks of every file; `all chunks` with no cap per file;
`naive` is BM25 over 50-line windows of the same files (the query's words OR'ed, FTS5's bm25),
the baseline of shared/NOTES.md. A hit, for an answer that names a symbol, is a result chunk of
that symbol (ours) or a 50-line window holding its definition line (naive); for an answer that
names only a file, any chunk of the file. For bug reports, also SWE-bench's localisation
figures: file@5 (over distinct files, in rank order), function@10 of the function-level answer
(`functions` in `search --json`), and the within-file step on its own: where the fix's file is
among the answer's files, the changed function's rank among that file's functions.

About 890 lines: the corpora (PyPI and git snapshots), the two passes and the rendering of the
one results file they fill; the grids themselves are in tuning.py.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

import tuning  # noqa: E402
from stats import percentile  # noqa: E402

from repocontext.choices import CHUNKS_PER_PLACE, PER_FILE, PER_FILE_MOST  # noqa: E402
from repocontext.lang.languages import SPECS  # noqa: E402
from repocontext.search import engine, functions  # noqa: E402
from repocontext.service import Repository  # noqa: E402

SETS = [
    ("django==5.2.19", ["django.json", "django_more.json"]),
    ("pytest==8.3.3", ["pytest.json"]),
]
# (label, second stage, chunks per file: "default" is PER_FILE and more in a big file)
VARIANTS = [
    ("ours", False, "default"),
    ("second stage", True, "default"),
    ("3 a file", False, PER_FILE),
    ("all chunks", False, None),
]
KIND_OF_INTENT = {"find_definition": "identifier", "find_references": "references",
                  "impact_analysis": "references", "find_similar": "question",
                  "understand_code": "question", "exact_match": "message"}  # fmt: skip
KINDS = ["identifier", "question", "message", "references", "bug_report"]


def fetch_sdist(spec: str) -> Path:
    """The unpacked source distribution of `spec` (name==version), downloaded once."""
    name, _, version = spec.partition("==")
    cache = REPO / ".bench-cache"
    cache.mkdir(exist_ok=True)  # a fresh checkout has none yet
    want = _normal(f"{name}-{version}")
    for folder in cache.iterdir():
        if folder.is_dir() and _normal(folder.name) == want:
            return folder
    fetched = cache / "sdists"
    fetched.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
                    ":all:", spec, "-d", str(fetched)], check=True)  # fmt: skip
    archive = next(a for a in fetched.glob("*.tar.gz") if _normal(a.name) == want + ".tar.gz")
    listing = subprocess.run(["tar", "-tzf", str(archive)], check=True, capture_output=True,
                             text=True).stdout  # fmt: skip
    subprocess.run(["tar", "-xzf", str(archive), "-C", str(cache)], check=True)
    return cache / listing.split("/", 1)[0]


def _normal(name: str) -> str:
    return name.lower().replace("_", "-")


def own_queries(names: list[str]) -> list[dict]:
    out = []
    for name in names:
        for q in json.loads((HERE / "labelled" / name).read_text())["queries"]:
            out.append({**q, "set": name, "kind": q.get("kind") or KIND_OF_INTENT[q["intent"]]})
    return out


def naive_index(root: Path, files: list[str]):
    import apsw

    db = apsw.Connection(":memory:")
    db.execute("CREATE VIRTUAL TABLE w USING fts5(path UNINDEXED, start UNINDEXED, body)")
    with db:
        for rel in files:
            try:
                lines = (root / rel).read_text(encoding="utf-8", errors="replace").split("\n")
            except OSError:
                continue
            for i in range(0, len(lines), 50):
                db.execute(
                    "INSERT INTO w(path, start, body) VALUES (?, ?, ?)",
                    (rel, i + 1, "\n".join(lines[i : i + 50])),
                )
    return db


def naive_search(db, query: str, k: int = 50) -> list[tuple[str, int, int]]:
    words = "".join(c if c.isalnum() or c == "_" else " " for c in query).split()
    if not words:
        return []
    match = " OR ".join('"' + w + '"' for w in dict.fromkeys(words))
    rows = db.execute(
        "SELECT path, start FROM w WHERE w MATCH ? ORDER BY bm25(w) LIMIT ?", (match, k)
    )
    return [(p, s, s + 49) for p, s in rows]


def def_lines(store, answers) -> dict[tuple[str, str], int]:
    """The definition line of each answer's symbol (for the baseline's windows)."""
    out = {}
    for a in answers:
        if a.get("symbol"):
            hits = store.definitions_at([(a["path"], a["symbol"])])
            if hits:
                out[(a["path"], a["symbol"])] = hits[0].start_line
    return out


def ours_hit(r, answers) -> bool:
    """A result chunk of the answer's symbol, or of a function nested in it: since issue 52
    the JS/TS chunker names a function declared in a function's body `outer.inner`
    (express's `proto.handle.next`, immer's `enablePatches.generateArrayPatches`), and those
    lines are the answer's own code, which before were windows named after it. A method of
    an answer that is a class is not counted (kind "method"); the function-level answer's
    entries (no kind) are functions."""
    for a in answers:
        if r.path != a["path"]:
            continue
        sym = a.get("symbol")
        name = r.symbol or ""
        if sym is None or name == sym or name.endswith("." + sym):
            return True
        if getattr(r, "kind", "function") == "function" and (
            name.startswith(sym + ".") or f".{sym}." in name
        ):
            return True
    return False


def naive_hit(window, answers, lines) -> bool:
    path, start, end = window
    for a in answers:
        if path != a["path"]:
            continue
        line = lines.get((a["path"], a.get("symbol")))
        if a.get("symbol") is None or (line is not None and start <= line <= end):
            return True
    return False


def first_rank(flags: list[bool]) -> int | None:
    return next((i for i, f in enumerate(flags, 1) if f), None)


def file_rank(paths: list[str], answers) -> int | None:
    wanted = {a["path"] for a in answers}
    files = list(dict.fromkeys(paths))
    return next((i for i, p in enumerate(files, 1) if p in wanted), None)


def corpus_root(spec: str) -> Path:
    """The source tree of a corpus spec: `name==version` (PyPI) or `github:owner/name@sha`."""
    if not spec.startswith("github:"):
        return fetch_sdist(spec)
    owner_name, _, sha = spec.removeprefix("github:").partition("@")
    cache = REPO / ".bench-cache"
    dest = cache / f"{owner_name.replace('/', '+')}-{sha[:12]}"
    if dest.is_dir():
        return dest
    gitdir = mirror_gitdir(owner_name)
    if gitdir is None or not has_commit(gitdir, sha):
        raise SystemExit(fetch_line(spec))
    part = dest.with_name(dest.name + ".part")
    part.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "--git-dir", str(gitdir), "archive", sha], check=True,
                             capture_output=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(part)], input=archive, check=True)
    part.rename(dest)
    return dest


def mirror_gitdir(owner_name: str) -> Path | None:
    """The git directory of the snapshot `fetch github:owner/name` left in the mirror: the
    shallowest folder under it with a HEAD file and an objects folder."""
    mirror = Path(os.environ.get("REPOCONTEXT_MIRROR", "/work/.mirror"))
    heads = sorted((mirror / owner_name.replace("/", "+")).glob("**/HEAD"),
                   key=lambda p: len(p.parts))  # fmt: skip
    return next((h.parent for h in heads if (h.parent / "objects").is_dir()), None)


def has_commit(gitdir: Path, sha: str) -> bool:
    return subprocess.run(["git", "--git-dir", str(gitdir), "cat-file", "-e", f"{sha}^{{commit}}"],
                          capture_output=True).returncode == 0  # fmt: skip


def fetch_line(spec: str) -> str:
    owner_name, _, sha = spec.removeprefix("github:").partition("@")
    mirror = os.environ.get("REPOCONTEXT_MIRROR", "/work/.mirror")
    return (f"corpus {spec} is not in {mirror}: run `fetch github:{owner_name}` (the search "
            f"tool's fetch; its snapshot must hold commit {sha[:12]}), then run this again")  # fmt: skip


def missing_corpora(repos: dict[str, dict]) -> list[str]:
    """A line saying which `fetch` to run for each git corpus that is neither unpacked in
    .bench-cache nor in the mirror (checked before the hours of a run, not during them)."""
    out = []
    for entry in repos.values():
        for spec in entry["corpora"]:
            if not spec.startswith("github:"):
                continue  # PyPI: downloaded when first needed
            owner_name, _, sha = spec.removeprefix("github:").partition("@")
            if (REPO / ".bench-cache" / f"{owner_name.replace('/', '+')}-{sha[:12]}").is_dir():
                continue
            gitdir = mirror_gitdir(owner_name)
            if gitdir is None or not has_commit(gitdir, sha):
                out.append(fetch_line(spec))
    return out


def repository_of(spec: str) -> str:
    if spec.startswith("github:"):
        return spec.removeprefix("github:").split("@")[0].split("/")[1]
    return spec.split("==")[0].lower()


OWN_CORPUS = {name: spec for spec, names in SETS for name in names}


def load_repositories(only: set[str] | None) -> dict[str, dict]:
    """{repository: {"language", "corpora": {spec: [queries]}}} from every labelled file."""
    out: dict[str, dict] = {}
    for path in sorted((HERE / "labelled").glob("*.json")):
        data = json.loads(path.read_text())
        for q in data["queries"]:
            spec = q.get("corpus") or data.get("corpus") or OWN_CORPUS[path.name]
            repo = repository_of(spec)
            if only and repo not in only:
                continue
            kind = q.get("kind") or KIND_OF_INTENT[q["intent"]]
            language = data.get("language", "python")
            if language not in SPECS:  # a grammar the index has, c included
                raise SystemExit(f"{path.name}: language {language!r} is none of the index's "
                                 f"grammars ({', '.join(SPECS)})")  # fmt: skip
            entry = out.setdefault(repo, {"language": language, "corpora": {}})
            entry["corpora"].setdefault(spec, []).append({**q, "set": path.name, "kind": kind})
    return out


class Corpus:
    """One corpus, indexed, with a searcher whose model calls are remembered across
    configurations (a configuration changes weights, never what a model says of a text)."""

    def __init__(self, spec: str):
        self.spec = spec
        self.root = corpus_root(spec)
        home = REPO / ".bench-cache" / f"home-{repository_of(spec)}"
        home.mkdir(parents=True, exist_ok=True)
        os.environ["REPOCONTEXT_HOME"] = str(home)
        repo = Repository(self.root)
        repo.index()
        repo.embed()
        self._context = repo.open_store()
        self.store = self._context.__enter__()
        self.searcher = repo.searcher(self.store, cache_vectors=True)
        self.searcher.search("warm up the model and the vector cache", modality="hybrid")
        _remember_models(self.searcher)
        self.captured: dict[str, tuple] = {}
        self._naive = None

    def close(self) -> None:
        self.searcher.close()
        self._context.__exit__(None, None, None)

    def measure(self, q: dict, *, second_stage: bool = False, cap="default") -> dict:
        """One query's ranks: first hit among the results, its file among distinct files, and
        in the function-level answer."""
        t0 = time.perf_counter()
        per_file = cap if isinstance(cap, int) else None
        resp = self.searcher.search(q["query"], top=10, per_file=per_file, all_chunks=cap is None,
                                    second_stage=second_stage)  # fmt: skip
        ms = (time.perf_counter() - t0) * 1000
        results = resp.results
        return {
            "kind": q["kind"],
            "rank": first_rank([ours_hit(r, q["answers"]) for r in results]),
            "file": file_rank([r.path for r in results], q["answers"]),
            "function": first_rank([ours_hit(f, q["answers"]) for f in resp.functions[:10]]),
            "ms": ms,
            "intent": f"{resp.intent}/{resp.rule}",
        }

    def functions_again(self, q: dict) -> dict:
        """The function answer recomputed under the current weights from the ranked chunks of
        the last search of `q` (captured), with its within-file step."""
        args = self.captured[q["query"][: engine.MAX_QUERY_CHARS]]  # as the engine cut it
        saved = functions.MAX_FUNCTIONS
        functions.MAX_FUNCTIONS = 10_000
        try:
            every = functions.function_answer(*args)
        finally:
            functions.MAX_FUNCTIONS = saved
        return {
            "kind": q["kind"],
            "function": first_rank([ours_hit(f, q["answers"]) for f in every[:10]]),
            "within": within_file_rank(every, q["answers"]),
        }

    def naive(self, q: dict) -> tuple[int | None, int | None]:
        if self._naive is None:
            self._naive = naive_index(self.root, list(self.store.file_states()))
        lines = def_lines(self.store, q["answers"])
        windows = naive_search(self._naive, q["query"])
        rank = first_rank([naive_hit(w, q["answers"], lines) for w in windows])
        return rank, file_rank([w[0] for w in windows], q["answers"])


def within_file_rank(answer: list, answers: list[dict]) -> int | None:
    """The changed function's rank among the answer's functions of its own file, where that
    file is in the answer at all (None otherwise, or when no changed function is)."""
    best = None
    for path in {a["path"] for a in answers}:
        mine = [f for f in answer if f.path == path]
        rank = first_rank([ours_hit(f, answers) for f in mine])
        if rank is not None and (best is None or rank < best):
            best = rank
    return best


def _remember_models(searcher) -> None:
    for retriever in searcher.retrievers.values():
        if retriever.preparation is not None:
            prepare, memo = retriever.prepare, {}
            retriever.prepare = lambda text, p=prepare, m=memo: (
                m[text] if text in m else m.setdefault(text, p(text))
            )  # type: ignore[method-assign]  # noqa: E501
    model = searcher.second_stage.model() if searcher.second_stage else None
    if model is not None:
        scored, memo2 = model.score, {}

        def score(query, passages):
            missing = [p for p in passages if (query, p) not in memo2]
            if missing:
                for p, v in zip(missing, scored(query, missing)):
                    memo2[(query, p)] = float(v)
            return [memo2[(query, p)] for p in passages]

        model.score = score


def _capture_function_answers(corpus_of) -> None:
    """engine.function_answer, wrapped to keep its arguments for functions_again."""
    original = engine.function_answer

    def capture(store, report, ranked, names, similar=None):
        corpus_of()[0].captured[report] = (store, report, list(ranked), names, similar)
        return original(store, report, ranked, names, similar)

    engine.function_answer = capture


def run_grid(corpus: Corpus, queries: list[dict], repo: str, grid: dict) -> None:
    """Every configuration of every family on the queries of its kinds: grid[family][config]
    [repository] gets a row per query."""
    defaults = tuning.shipped(corpus.searcher)
    for family in tuning.FAMILIES:
        asked = [q for q in queries if q["kind"] in family.kinds]
        if not asked:
            continue
        if family.recompute_functions:
            for q in asked:
                corpus.measure(q)  # captures the ranked chunks under the shipped weights
        for config in family.configs:
            tuning.apply(corpus.searcher, config)
            try:
                rows = [corpus.functions_again(q) if family.recompute_functions
                        else corpus.measure(q, second_stage=family.second_stage)
                        for q in asked]  # fmt: skip
            finally:
                tuning.apply(corpus.searcher, defaults)
            grid.setdefault(family.name, {}).setdefault(tuning.label(config), {}).setdefault(
                repo, []).extend(rows)  # fmt: skip


def choices(grid: dict, language_of: dict[str, str]) -> dict[str, dict]:
    """Per family (tuning.decide): the configuration best over all repositories, each
    repository's held-out choice, and what ships: the best over all only where choosing that way
    beat what shipped before on the repositories held out (the mean of each held-out repository
    under its own fold's choice against the same repositories under the shipped configuration)
    and lowered no language's mean of the same; else what shipped before stays. A weight moves
    only if tuning it helps repositories it never saw, in every language."""
    out = {}
    for family in tuning.FAMILIES:
        if family.name not in grid:
            continue
        order = [tuning.label(c) for c in family.configs]
        means = tuning.repo_means(grid[family.name], family.measure)
        by_label = {tuning.label(c): c for c in family.configs}
        d = tuning.decide(means, order, language_of)
        out[family.name] = {
            **d,
            "means": means,
            "best": by_label[d["best"]],
            "in-sample": by_label[d["ships"]],
            # measured: what each fold would ship (tuning.fold_ships); counted in the tuning
            # section: the best over each fold's repositories (the ship rule's input)
            "held-out": {r: by_label[c] for r, c in d["fold ships"].items()},
            "fold choices": {r: by_label[c] for r, c in d["held-out"].items()},
        }
    return out


# what ships before this tuning: each grid's first values (tuning.py), the code's own values
SHIPPED_BEFORE = {k: v for family in tuning.FAMILIES for k, v in family.configs[0].items()}


def combined(chosen: dict, repo: str | None) -> dict:
    """The configuration over all families: in-sample (repo None) or with `repo` held out."""
    config: dict = {}
    for family in chosen.values():
        config.update(family["in-sample"] if repo is None else family["held-out"][repo])
    return config


def run_final(corpus: Corpus, queries: list[dict], configs: dict[str, dict]) -> list[dict]:
    """Each query under ours / second stage / all chunks with each of `configs` (in-sample,
    held-out), and the naive baseline."""
    defaults = tuning.shipped(corpus.searcher)
    out = []
    for q in queries:
        row = {"query": q["query"], "kind": q["kind"], "set": q["set"], "ranks": {}, "files": {},
               "functions": {}, "within": {}, "ms": {}}  # fmt: skip
        for weights, config in configs.items():
            tuning.apply(corpus.searcher, config)
            try:
                for label, second, cap in VARIANTS:
                    m = corpus.measure(q, second_stage=second, cap=cap)
                    key = f"{label} {weights}"
                    row["ranks"][key], row["files"][key] = m["rank"], m["file"]
                    row["functions"][key], row["ms"][key] = m["function"], m["ms"]
                    if label == "ours" and q["kind"] == "bug_report":
                        row["within"][key] = corpus.functions_again(q)["within"]
                    if key == "ours in-sample":
                        row["intent"] = m["intent"]
            finally:
                tuning.apply(corpus.searcher, defaults)
        for table in ("ranks", "files", "functions"):  # as it ships: second stage off
            row[table]["before"] = row[table]["ours before"]
        row["ranks"]["naive"], row["files"]["naive"] = corpus.naive(q)
        out.append(row)
    return out


CURRENT: list[Corpus] = []
GRID_CACHE = REPO / ".bench-cache" / "grid"


def _grid_key(entry: dict) -> str:
    """What a repository's grid rows depend on: its queries, the grid, and the search code."""
    digest = hashlib.sha256(json.dumps(entry, sort_keys=True).encode())
    digest.update(json.dumps([(f.name, [tuning.label(c) for c in f.configs])
                              for f in tuning.FAMILIES]).encode())  # fmt: skip
    for path in sorted((REPO / "src" / "repocontext").rglob("*.py")):
        digest.update(path.read_bytes())
    digest.update((HERE / "search_sets.py").read_bytes())
    return digest.hexdigest()[:16]  # the corpus being searched, for the function answer's capture


def within(rank, k) -> bool:
    return rank is not None and rank <= k


def share(rows: list[dict], key, k: int) -> str:
    return f"{sum(within(key(r), k) for r in rows) / max(1, len(rows)):.2f}"


def triple(rows: list[dict], column: str) -> str:
    return "/".join(str(sum(within(r["ranks"][column], k) for r in rows)) for k in (1, 5, 10))


COLUMNS = ["before", "ours in-sample", "ours held-out", "second stage in-sample",
           "second stage held-out", "3 a file in-sample", "3 a file held-out",
           "all chunks in-sample", "all chunks held-out", "naive"]  # fmt: skip


def render(repos: dict, rows: dict[str, list[dict]], chosen: dict, command: str) -> str:
    every = [r for rs in rows.values() for r in rs]
    langs = sorted({e["language"] for e in repos.values()})
    lines = [
        "# Search on labelled sets from every repository, weights chosen in-sample and with the "
        "repository held out",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}  ",
        f"{len(repos)} repositories in {len(langs)} languages ({', '.join(langs)}), "
        f"{len(every)} queries. `in-sample`: what the code ships, each family of weights "
        "(bench/tuning.py) at the configuration best over all repositories where choosing so "
        "beat what shipped before on held-out repositories and lowered no language's "
        "held-out mean, else as it shipped before; "
        "`held-out`: each family at what the same procedure would ship without the "
        "repository (leave-one-repository-out, the ship rule run on the other repositories, "
        "each of them held out in turn: tuning.fold_ships), what a repository the tuning "
        "never saw gets. `ours`: "
        f"the default search, no second stage, at most {PER_FILE} chunks of a file and one more "
        f"for each {CHUNKS_PER_PLACE} chunks of a big file, up to {PER_FILE_MOST}; `3 a file`: "
        f"at most {PER_FILE} of "
        "every file; `second "
        "stage`: the same with the second stage (`[search] rerank = true`); `before`: as the "
        "code ships before this tuning (each family's first values in bench/tuning.py, no "
        "second stage, as `[search] rerank` ships); `all chunks`: "
        "no cap per file; `naive`: BM25 over 50-line windows. Cells: queries with a hit in "
        "the top 1/5/10.",
        "",
        "## Repositories",
        "",
        "| repository | language | corpus | " + " | ".join(KINDS) + " |",
        "|---|---|---|" + "---|" * len(KINDS),
    ]
    for repo, entry in sorted(repos.items()):
        mine = rows.get(repo, [])
        counts = [str(sum(r["kind"] == k for r in mine)) for k in KINDS]
        specs = ", ".join(f"`{s}`" for s in entry["corpora"])
        lines.append(f"| {repo} | {entry['language']} | {specs} | " + " | ".join(counts) + " |")
    lines += ["", "## All repositories, per kind", "", _kind_header()]
    lines += _kind_rows(every)
    lines += ["", *_language_lines(repos, rows)]
    lines += ["", "## Per repository", "", _kind_header().replace("| kind |", "| repository |")]
    for repo in sorted(rows):
        sel = rows[repo]
        lines.append(f"| {repo} | {len(sel)} | " + " | ".join(triple(sel, c) for c in COLUMNS)
                     + " |")  # fmt: skip
    lines += ["", *_second_stage_lines(rows), "", *_report_lines(repos, rows)]
    lines += ["", *_goal_lines(rows)]
    lines += ["", *_tuning_lines(chosen, sorted(rows)), "", *_time_lines(every)]
    lines += ["", "## Every query (first hit's rank; fn: in the function-level answer)", "",
              "| repository | kind | query | ours in | ours held-out | second in | second held-out "
              "| naive | fn in | fn held-out | intent |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for repo in sorted(rows):
        for r in rows[repo]:
            q = " ".join(r["query"].split())
            q = ((q[:70] + "...") if len(q) > 73 else q).replace("|", "\\|")
            cells = [r["ranks"][c] for c in ("ours in-sample", "ours held-out",
                     "second stage in-sample", "second stage held-out", "naive")]  # fmt: skip
            cells += [r["functions"]["ours in-sample"], r["functions"]["ours held-out"]]
            lines.append(f"| {repo} | {r['kind']} | {q} | "
                         + " | ".join("-" if x is None else str(x) for x in cells)
                         + f" | {r.get('intent', '')} |")  # fmt: skip
    return "\n".join(lines) + "\n"


LANGUAGE_ORDER = ["python", "go", "javascript", "typescript", "js/ts", "rust", "c"]


def code_change_lines(
    repos: dict, rows: dict[str, list[dict]], before: dict[str, list[dict]], label: str
) -> list[str]:
    """This run against the dumps of an earlier run of other code (`--code-before`), per
    language, on the same queries. A code change is judged at the weights as they ship
    (`ours before`: the same configuration in both runs, whatever the runs' tunings chose),
    and also held out, where each run's folds may choose differently when the two runs did
    not hold the same repositories (the table's own `before` column is older weights)."""
    fixed, held = "ours before", "ours held-out"
    out = [f"## Per language, the code before ({label}) and now", "",
           "Each repository's hits per 25 queries, averaged over the language's repositories; "
           "function@10 over the language's bug reports. `shipped`: the default search at the "
           "weights as they ship (one configuration for both codes: the code's own effect); "
           "`held-out`: each family of weights chosen on the other repositories of the run; "
           "`moved`: queries whose first hit (shipped weights) came up / went down.", "",
           "| language | repositories | queries | top-5 per 25, shipped: before → now | top-1 "
           "per 25, shipped | top-5 per 25, held-out | function@10, shipped | function@10, "
           "held-out | moved up / down |",
           "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    moves: list[str] = []
    for lang, members in language_groups(repos):
        now = {r: rows[r] for r in members if rows.get(r) and before.get(r)}
        if not now:
            continue
        was = {r: before[r] for r in now}
        up = down = 0
        for repo in now:
            for a, b in zip(was[repo], now[repo]):
                x, y = a["ranks"][fixed], b["ranks"][fixed]
                up += (y or 99) < (x or 99)
                down += (y or 99) > (x or 99)
                if x != y and lang != "js/ts":
                    q = " ".join(b["query"].split())
                    q = ((q[:70] + "...") if len(q) > 73 else q).replace("|", "\\|")
                    moves.append(f"| {repo} | {b['kind']} | {q} | {x or '-'} | {y or '-'} |")
        reports_was = [r for rs in was.values() for r in rs if r["kind"] == "bug_report"]
        reports_now = [r for rs in now.values() for r in rs if r["kind"] == "bug_report"]
        cells = [str(len(now)), str(sum(len(v) for v in now.values()))]
        for column, k in ((fixed, 5), (fixed, 1), (held, 5)):
            cells.append(f"{per_25(was, column, k)} → {per_25(now, column, k)}")
        for column in (fixed, held):
            cells.append(
                f"{share(reports_was, lambda r, c=column: r['functions'][c], 10)} → "
                f"{share(reports_now, lambda r, c=column: r['functions'][c], 10)}"
                if reports_now
                else "-"
            )
        cells.append(f"{up} / {down}")
        out.append(f"| {lang} | " + " | ".join(cells) + " |")
    out += ["", "### Queries whose first hit moved (shipped weights: rank before → now)", "",
            "| repository | kind | query | before | now |", "|---|---|---|---|---|", *moves]  # fmt: skip
    return out


def language_groups(repos: dict[str, dict]) -> list[tuple[str, list[str]]]:
    """(language, its repositories) for each language of `repos`, JavaScript and TypeScript
    also together as js/ts; in LANGUAGE_ORDER, then any other language by name."""
    groups: dict[str, list[str]] = {}
    for repo, entry in sorted(repos.items()):
        groups.setdefault(entry["language"], []).append(repo)
        if entry["language"] in ("javascript", "typescript"):
            groups.setdefault("js/ts", []).append(repo)
    rank = {lang: i for i, lang in enumerate(LANGUAGE_ORDER)}
    return sorted(groups.items(), key=lambda g: (rank.get(g[0], len(rank)), g[0]))


def per_25(by_repo: dict[str, list[dict]], column: str, k: int) -> str:
    """Hits in the top k per 25 queries: each repository's share times 25, averaged over the
    repositories (each counts once, as in the tuning's mean)."""
    shares = [sum(within(r["ranks"][column], k) for r in sel) / len(sel)
              for sel in by_repo.values()]  # fmt: skip
    return f"{25 * sum(shares) / max(1, len(shares)):.1f}"


def _language_lines(repos: dict, rows: dict[str, list[dict]]) -> list[str]:
    out = ["## Per language", "",
           "Each labelled file's `language`; js/ts is JavaScript and TypeScript together. Cells "
           "as above (queries with a hit in the top 1/5/10, summed over the language's "
           "repositories); `top-5 per 25` and `top-1 per 25`: each repository's hits per 25 "
           "queries, averaged over the language's repositories (before / ours in-sample / ours "
           "held-out). For bug reports (every one, real or not), also file@5 and function@10 "
           "(before / in-sample / held-out) over the language's reports.", ""]  # fmt: skip
    groups = language_groups(repos)
    for kind in KINDS + ["all"]:
        of_kind = {repo: [r for r in rs if kind == "all" or r["kind"] == kind]
                   for repo, rs in rows.items()}  # fmt: skip
        if not any(of_kind.values()):
            continue
        report = kind == "bug_report"
        out += [f"### {kind}" if kind != "all" else "### every kind", "",
                "| language | repositories | queries | before | ours in-sample | ours held-out "
                "| top-5 per 25: before / in / held-out | top-1 per 25: before / in / held-out |"
                + (" file@5: before / in / held-out | function@10: before / in / held-out |"
                   if report else ""),
                "|---|---|---|---|---|---|---|---|" + ("---|---|" if report else "")]  # fmt: skip
        for lang, members in groups:
            by_repo = {repo: of_kind[repo] for repo in members if of_kind.get(repo)}
            if not by_repo:
                continue
            sel = [r for rs in by_repo.values() for r in rs]
            cells = [str(len(by_repo)), str(len(sel))]
            cells += [triple(sel, c) for c in ("before", "ours in-sample", "ours held-out")]
            for k in (5, 1):
                cells.append(" / ".join(per_25(by_repo, c, k)
                                        for c in ("before", "ours in-sample", "ours held-out")))  # fmt: skip
            if report:
                for key, k in (("files", 5), ("functions", 10)):
                    cells.append(" / ".join(share(sel, lambda r, c=c, key=key: r[key][c], k)
                                            for c in ("before", "ours in-sample",
                                                      "ours held-out")))  # fmt: skip
            out.append(f"| {lang} | " + " | ".join(cells) + " |")
        out.append("")
    return out[:-1]


def _kind_header() -> str:
    return ("| kind | queries | " + " | ".join(COLUMNS) + " |\n|---|---|"
            + "---|" * len(COLUMNS))  # fmt: skip


def _kind_rows(every: list[dict]) -> list[str]:
    out = []
    for kind in KINDS + ["all"]:
        sel = [r for r in every if kind == "all" or r["kind"] == kind]
        if sel:
            out.append(f"| {kind} | {len(sel)} | " + " | ".join(triple(sel, c) for c in COLUMNS)
                       + " |")  # fmt: skip
    return out


def _second_stage_lines(rows: dict[str, list[dict]]) -> list[str]:
    out = ["## The second stage against the first stage alone, per repository (top-5 questions)",
           "",
           "| repository | questions | in-sample: with / without | held-out: with / without |",
           "|---|---|---|---|"]  # fmt: skip
    lost = []
    for repo in sorted(rows):
        sel = [r for r in rows[repo] if r["kind"] == "question"]
        if not sel:
            continue
        cells = []
        for w in ("in-sample", "held-out"):
            a = sum(within(r["ranks"][f"second stage {w}"], 5) for r in sel)
            b = sum(within(r["ranks"][f"ours {w}"], 5) for r in sel)
            cells.append(f"{a} / {b}")
            if a < b:
                lost.append(f"{repo} ({w})")
        out.append(f"| {repo} | {len(sel)} | " + " | ".join(cells) + " |")
    out += ["", "Repositories where the second stage lost a top-5 answer: "
            + (", ".join(lost) if lost else "none") + "."]  # fmt: skip
    return out


def _report_lines(repos: dict, rows: dict[str, list[dict]]) -> list[str]:
    out = ["## Real bug reports (from each repository's history)", "",
           "file@5: the fix's file among the first 5 distinct files of the results; "
           "function@10: a changed function among the first 10 of the function-level answer; "
           "within-file@1/@3: where the fix's file is among the answer's files, the changed "
           "function first / in the first 3 of that file's functions (the within-file step on "
           "its own).", "",
           "| repository | reports | file@5 before / in / held-out / naive | function@10 before / "
           "in / held-out "
           "| within-file@1/@3 in | within-file@1/@3 held-out | fix's file in the answer |",
           "|---|---|---|---|---|---|---|"]  # fmt: skip
    real = {repo: [r for r in rs if r["kind"] == "bug_report" and r.get("real")]
            for repo, rs in rows.items()}  # fmt: skip
    groups = [(repo, sel) for repo, sel in sorted(real.items()) if sel]
    every = [r for _, sel in groups for r in sel]
    for lang, members in language_groups(repos):  # then each language's reports together
        sel = [r for repo in members for r in real.get(repo, [])]
        if sel:
            groups.append((f"{lang} (language)", sel))
    groups.append(("all", every))
    for name, sel in groups:
        f5 = " / ".join(share(sel, lambda r, c=c: r["files"][c], 5)
                        for c in ("before", "ours in-sample", "ours held-out", "naive"))  # fmt: skip
        fn = " / ".join(share(sel, lambda r, c=c: r["functions"][c], 10)
                        for c in ("before", "ours in-sample", "ours held-out"))  # fmt: skip
        cells = [f5, fn]
        for w in ("in-sample", "held-out"):
            have = [r for r in sel if r["within"].get(f"ours {w}") is not None]
            cells.append("/".join(share(have, lambda r, w=w: r["within"][f"ours {w}"], k)
                                  for k in (1, 3)) + f" of {len(have)}")  # fmt: skip
        cells.append(str(sum(r["within"].get("ours in-sample") is not None for r in sel)))
        out.append(f"| {name} | {len(sel)} | " + " | ".join(cells) + " |")
    return out


def _goal_lines(rows: dict[str, list[dict]]) -> list[str]:
    every = [r for rs in rows.values() for r in rs]
    real = [r for r in every if r["kind"] == "bug_report" and r.get("real")]
    out = ["## Goals", ""]
    worse = [repo for repo, rs in rows.items()
             if sum(within(r["ranks"]["second stage held-out"], 5) for r in rs)
             < sum(within(r["ranks"]["ours held-out"], 5) for r in rs)]  # fmt: skip
    out.append(f"- per repository, top-5 with the second stage >= without it (held out): "
               f"{len(rows) - len(worse)} of {len(rows)} repositories"
               + (f" (not: {', '.join(worse)})" if worse else "")
               + f", **{'met' if not worse else 'not met'}**.")  # fmt: skip
    for what, key, k, goal in (("file@5", "files", 5, 0.8), ("function@10", "functions", 10, 0.6)):
        value = sum(within(r[key]["ours held-out"], k) for r in real) / max(1, len(real))
        out.append(
            f"- real bug reports, repository held out, {what} >= {goal}: {value:.2f} "
            f"({len(real)} reports), **{'met' if value >= goal else 'not met'}**."
        )
    for kind, goal in (("message", 0.9), ("question", 0.8)):
        sel = [r for r in every if r["kind"] == kind]
        value = sum(within(r["ranks"]["ours held-out"], 5) for r in sel) / max(1, len(sel))
        out.append(
            f"- {kind}s in the top 5 (held out) >= {goal:.0%}: {value:.0%} "
            f"({len(sel)} queries), **{'met' if value >= goal else 'not met'}**."
        )
    return out


def _tuning_lines(chosen: dict, repos: list[str]) -> list[str]:
    out = ["## Tuning: each family's configurations, leave-one-repository-out", "",
           "Mean over repositories of the family's measure (chunk: hit@5 + 0.5 hit@1; report: "
           "file@5 + function@10; function: function@10 + 0.5 answer@1); `folds`: how many of "
           f"the {len(repos)} held-out runs chose it; the best eight and what shipped before. Each "
           "family was tried from what shipped before (one family at a time); the grid's rows "
           "are cached per repository in .bench-cache/grid (`--reuse-grid` keeps them across a "
           "change of the search code), while the tables above are measured anew. Whether the "
           "second stage runs at all is `[search] rerank`, off by default since issue 36: its "
           "gain here against its cost in bench/results/question_speed.md.", ""]  # fmt: skip
    for family in tuning.FAMILIES:
        if family.name not in chosen:
            continue
        c = chosen[family.name]
        folds: dict[str, int] = {}
        for config in c["fold choices"].values():
            folds[tuning.label(config)] = folds.get(tuning.label(config), 0) + 1
        adopted = c["in-sample"] != family.configs[0]
        gain = c["held-out mean"] > c["shipped-before mean"] + 1e-9
        lowered = ", ".join(c["lowered"])
        if adopted:
            why = " (changed)."
        elif c["best"] == family.configs[0]:
            why = " (unchanged)."
        elif gain:
            why = f" (unchanged: blocked by {lowered}, whose held-out mean it lowers)."
        else:
            why = " (unchanged: tuning did not carry to unseen repositories)."
        out += [
            f"### {family.name}: {family.why}",
            "",
            f"Held out, each repository under its own fold's choice: {c['held-out mean']:.3f}; "
            f"under what shipped before: {c['shipped-before mean']:.3f}. Ships: "
            f"`{tuning.label(c['in-sample'])}`{why}"
            + (f" Languages whose held-out mean is lower than before: {lowered}."
               if lowered and not (gain and c["best"] != family.configs[0]) else ""),
            "",
            "| language | repositories | before | held out | best over all | blocks |",
            "|---|---|---|---|---|---|",
        ]  # fmt: skip
        for lang, m in sorted(c["languages"].items(), key=lambda kv: _language_rank(kv[0])):
            blocks = "yes" if lang in c["lowered"] and gain and not adopted else ""
            out.append(f"| {lang} | {m['repositories']} | {m['before']:.3f} | "
                       f"{m['held-out']:.3f} | {m['best']:.3f} | {blocks} |")  # fmt: skip
        out += [
            "",
            "| configuration | mean | best over all | folds |",
            "|---|---|---|---|",
        ]
        ranked = sorted(family.configs, key=lambda cf: -_mean(c["means"][tuning.label(cf)]))
        shown = ranked[:8] + ([] if family.configs[0] in ranked[:8] else [family.configs[0]])
        for config in shown:
            lab = tuning.label(config)
            mark = "yes" if config == c["best"] else ""
            name = f"{lab} (shipped before)" if config == family.configs[0] else lab
            out.append(f"| {name} | {_mean(c['means'][lab]):.3f} | {mark} | {folds.get(lab, 0)} |")
        out.append("")
    return out


def _language_rank(lang: str) -> tuple[int, str]:
    return (LANGUAGE_ORDER.index(lang) if lang in LANGUAGE_ORDER else len(LANGUAGE_ORDER), lang)


def _mean(per_repo: dict[str, float]) -> float:
    return sum(per_repo.values()) / max(1, len(per_repo))


def _time_lines(every: list[dict]) -> list[str]:
    out = []
    for label in ("ours in-sample", "second stage in-sample"):
        for kind in ("question", "bug_report", None):
            ms = [r["ms"][label] for r in every if kind is None or r["kind"] == kind]
            out.append(f"Query time, {label}, {kind or 'every'} kind (in-process, vectors in "
                       f"memory): p50 {percentile(ms, 50):.1f} ms, p95 {percentile(ms, 95):.1f} "
                       "ms.  ")  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results/search_sets.md"))
    ap.add_argument("--dump", help="also write every row and the grid as JSON here")
    ap.add_argument("--only", help="comma-separated repositories (default: all)")
    ap.add_argument("--grid-only", action="store_true", help="fill the grid's cache and stop")
    ap.add_argument("--code-before", help="comma-separated --dump files of a run of other code: "
                    "a per-language table of that code against this one")  # fmt: skip
    ap.add_argument("--code-before-label", default="an earlier commit",
                    help="what --code-before ran (a commit)")  # fmt: skip
    ap.add_argument("--reuse-grid", action="store_true",
                    help="use a repository's last grid rows even if the search code changed "
                    "since (the rows are the tuning run's; the final pass is measured anew)")  # fmt: skip
    args = ap.parse_args()
    repos = load_repositories(set(args.only.split(",")) if args.only else None)
    if args.only and set(args.only.split(",")) - set(repos):
        print("no labelled queries for: " + ", ".join(sorted(set(args.only.split(",")) - set(repos)))
              + f" (repositories: {', '.join(sorted(load_repositories(None)))})")  # fmt: skip
        return 2
    missing = missing_corpora(repos)
    if missing:
        print("\n".join(missing))
        return 2
    # the second stage is off by default: this process loads it, to measure it
    rerank_on = REPO / ".bench-cache" / "rerank-on.toml"
    rerank_on.parent.mkdir(exist_ok=True)
    rerank_on.write_text("[search]\nrerank = true\n")
    os.environ["REPOCONTEXT_CONFIG"] = str(rerank_on)
    _capture_function_answers(lambda: CURRENT)
    grid: dict = {}
    for repo, entry in repos.items():
        cached = GRID_CACHE / f"{repo}-{_grid_key(entry)}.json"
        if not cached.exists() and args.reuse_grid:
            older = sorted(GRID_CACHE.glob(f"{repo}-*.json"), key=lambda p: p.stat().st_mtime)
            if older:
                print(f"{repo}: grid rows of other code or queries reused ({older[-1].name})")
                cached = older[-1]
        if cached.exists():  # the same queries, grid and search code: the same rows
            mine = json.loads(cached.read_text())
        else:
            mine = {}
            for spec, queries in entry["corpora"].items():
                print(f"grid: {spec} ({len(queries)} queries)", flush=True)
                CURRENT[:] = [Corpus(spec)]
                run_grid(CURRENT[0], queries, repo, mine)
                CURRENT[0].close()
            GRID_CACHE.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps(mine))
        for family, configs in mine.items():
            for config, by_repo in configs.items():
                grid.setdefault(family, {}).setdefault(config, {}).update(by_repo)
    if args.grid_only:
        return 0
    language_of = {repo: entry["language"] for repo, entry in repos.items()}
    chosen = choices(grid, language_of)
    rows: dict[str, list[dict]] = {}
    for repo, entry in repos.items():
        configs = {"in-sample": combined(chosen, None), "held-out": combined(chosen, repo),
                   "before": SHIPPED_BEFORE}  # fmt: skip
        for spec, queries in entry["corpora"].items():
            print(f"final: {spec}", flush=True)
            CURRENT[:] = [Corpus(spec)]
            for q, row in zip(queries, run_final(CURRENT[0], queries, configs)):
                row["real"] = bool(q.get("issue"))
                rows.setdefault(repo, []).append(row)
            CURRENT[0].close()
    command = " ".join(["python bench/search_sets.py", *sys.argv[1:]])
    text = render(repos, rows, chosen, command)
    if args.code_before:
        before: dict[str, list[dict]] = {}
        for dump in args.code_before.split(","):
            before.update(json.loads(Path(dump).read_text())["rows"])
        head, sep, rest = text.partition("\n## Per language\n")
        text = (
            head
            + "\n"
            + "\n".join(code_change_lines(repos, rows, before, args.code_before_label))
            + "\n"
            + sep
            + rest
        )
    Path(args.out).write_text(text)
    if args.dump:
        Path(args.dump).write_text(json.dumps({"rows": rows, "grid": grid, "chosen": chosen,
                                               "languages": language_of},
                                              indent=1, default=str))  # fmt: skip
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
