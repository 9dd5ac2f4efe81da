"""Where only the vectors answer: made-up queries against the labelled questions, to choose the
cosine below which a search none of whose words is in the code answers "nothing found".

    python bench/lone_vectors.py [--out bench/results/lone_vectors.md] [--made-up 60]

The nearest chunks of any query clear the model's floor (0.2) somewhere in a big index, so a
search for a typo or a made-up word listed unrelated code (issue 33). The engine now keeps
vector hits only above LONE_VECTOR_SIMILARITY when no lexical retriever found anything. This
measures, on three corpora (this project's src/, pytest 8.3.3, Django 5.2.19, the indexes of
bench/search_sets.py):
- made-up queries (one to three pronounceable non-words, seeded): the best vector hit's cosine,
  and the share that still lists something at each cut;
- the labelled questions of bench/labelled/ (django, django_more, pytest): how many reach the
  cut at all (no lexical hit), and the cosine of the answer's chunk among the vector hits, so
  the cut is seen to sit below what answers score.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from search_sets import SETS, fetch_sdist, own_queries  # noqa: E402
from stats import percentile  # noqa: E402

from repocontext.search import engine as search_engine  # noqa: E402
from repocontext.service import Repository  # noqa: E402

CUTS = [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5]
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + ["qu", "x", "zz", "rk", "nd"]


def made_up(rng: random.Random, n: int) -> list[str]:
    out = []
    while len(out) < n:
        words = [
            "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
            for _ in range(rng.randint(1, 3))
        ]
        out.append(" ".join(words))
    return out


def is_answer(hit, answers) -> bool:
    """A vector hit (a ChunkHit) is the answer's chunk: its file, and its symbol if it names
    one (search_sets.ours_hit, for the store's rows)."""
    for a in answers:
        sym = a.get("symbol")
        if hit.path == a["path"] and (
            sym is None or hit.qualname == sym or (hit.qualname or "").endswith("." + sym)
        ):
            return True
    return False


def probe(searcher, query: str) -> dict:
    """The rankings the engine saw before the cut: did a lexical retriever find anything, and
    the semantic hits' (chunk, cosine)."""
    seen: dict = {}
    original = searcher._without_lone_weak_neighbours

    def spy(rankings, notes):
        semantic = {n for n, r in searcher.retrievers.items() if r.group == "semantic"}
        seen["lexical"] = any(r.hits for r in rankings if r.retriever not in semantic)
        seen["semantic"] = [h for r in rankings if r.retriever in semantic for h in r.hits]
        return original(rankings, notes)

    searcher._without_lone_weak_neighbours = spy
    try:
        t0 = time.perf_counter()
        resp = searcher.search(query, top=10, second_stage=False)
        seen["ms"] = (time.perf_counter() - t0) * 1000
    finally:
        searcher._without_lone_weak_neighbours = original
    seen.setdefault("lexical", True)  # a direct answer: one lexical retriever, no vectors
    seen.setdefault("semantic", [])
    seen["results"] = len(resp.results)
    return seen


def corpora() -> list[tuple[str, Path, str, list[dict]]]:
    out = [("repocontext src/", REPO / "src", "home-lone-self", [])]
    for spec, names in SETS:
        name = spec.split("==")[0]
        out.append((spec.replace("==", " "), fetch_sdist(spec), f"home-{name}", own_queries(names)))
    return out


def measure(made_up_count: int) -> list[dict]:
    rows = []
    for label, root, home, questions in corpora():
        os.environ["REPOCONTEXT_HOME"] = str(REPO / ".bench-cache" / home)
        repo = Repository(root)
        repo.index()
        repo.embed()
        with repo.open_store() as store:
            searcher = repo.searcher(store, cache_vectors=True)
            searcher.search("warm up the model and the vector cache", modality="hybrid")
            nonsense = [probe(searcher, q) for q in made_up(random.Random(0), made_up_count)]
            real = []
            for q in questions:
                seen = probe(searcher, q["query"])
                answers = [h.score for h in seen["semantic"] if is_answer(h, q["answers"])]
                real.append({**seen, "answer_cosine": max(answers) if answers else None})
        rows.append({"corpus": label, "made_up": nonsense, "questions": real})
    return rows


def render(rows: list[dict], command: str) -> str:
    cut_now = search_engine.LONE_VECTOR_SIMILARITY
    lines = [
        "# Where only the vectors answer: made-up queries and the labelled questions",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}  ",
        f"The engine's cut: LONE_VECTOR_SIMILARITY = {cut_now} (search/engine.py), applied only "
        "when no lexical retriever (BM25, the symbol table, the graph) found anything.",
        "",
        "## Made-up queries (1-3 pronounceable non-words, seeded)",
        "",
        "| corpus | queries | no lexical hit | best cosine p50 / p90 / max | still listing something at "
        + " / ".join(str(c) for c in CUTS)
        + " |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        gated = [s for s in row["made_up"] if not s["lexical"]]
        best = [max((h.score for h in s["semantic"]), default=0.0) for s in gated]
        listing = [sum(b >= c for b in best) for c in CUTS]
        lines.append(
            f"| {row['corpus']} | {len(row['made_up'])} | {len(gated)} | "
            + (
                f"{percentile(best, 50):.2f} / {percentile(best, 90):.2f} / {max(best):.2f}"
                if best
                else "-"
            )
            + " | "
            + " / ".join(str(n) for n in listing)
            + " |"
        )
    lines += [
        "",
        "## The labelled questions",
        "",
        "| corpus | questions | no lexical hit (the cut applies) | answer among the vector hits |"
        " answer's cosine p10 / p50 | answers below the engine's cut |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        qs = row["questions"]
        if not qs:
            continue
        gated = sum(not s["lexical"] for s in qs)
        cos = [s["answer_cosine"] for s in qs if s["answer_cosine"] is not None]
        below = sum(c < cut_now for c in cos)
        lines.append(
            f"| {row['corpus']} | {len(qs)} | {gated} | {len(cos)} | "
            + (f"{percentile(cos, 10):.2f} / {percentile(cos, 50):.2f}" if cos else "-")
            + f" | {below} |"
        )
    lines += [
        "",
        "Reading: the cut changes an answer only where no lexical retriever found anything; the "
        "second table counts how many labelled questions that is. The answer's cosine is that of "
        "the answer's best chunk among the vector hits of any question (the cut does not apply to "
        "most of them): it shows where genuine matches score against the made-up queries' best.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "results/lone_vectors.md"))
    ap.add_argument("--made-up", type=int, default=60)
    args = ap.parse_args()
    command = "python bench/lone_vectors.py" + (
        f" --made-up {args.made_up}" if args.made_up != 60 else ""
    )
    text = render(measure(args.made_up), command)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
