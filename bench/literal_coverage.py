"""The lines of each labelled corpus that exact-string search cannot find, and what it costs.

    python bench/literal_coverage.py [--only chi,zod]

Exact-string search (the trigram retriever, and the verbatim look-ups of a pasted message)
reads what the trigram table holds: each chunk's text, and since CHUNKER_VERSION 8 the doc
comment lines above a definition (`chunks.lead`), which are the chunk's `doc` and in no
chunk's text. A line that neither holds is one grep finds and the search does not. Counted
for each corpus of bench/labelled/ (indexed as search_sets.py indexes them): its non-blank
lines in no chunk's text or lead, those that only close a bracket aside (`}`, `end`: no
window of their own, by design), with leads (as shipped) and without them (what exact-string
search read before), the same index in the same run. Then the cost: the median time of
`trigram_search` over a few literals on the largest corpus, the shipped query against the one
that read the chunk's text alone, interleaved.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import search_sets as ss  # noqa: E402

from repocontext.index.reading import source_text  # noqa: E402
from repocontext.lang.chunking import _CLOSERS  # noqa: E402
from repocontext.lang.text import split_lines  # noqa: E402
from repocontext.search.retrievers import trigram_match  # noqa: E402
from repocontext.store import queries  # noqa: E402
from repocontext.store.schema import HIT_COLUMNS  # noqa: E402

LITERALS = ["self", "return None", "ValidationError", "Cannot resolve keyword", "get_queryset",
            "def __init__", "The database backend", "admin"]  # fmt: skip
# exact-string search as it read before CHUNKER_VERSION 8: the chunk's text alone
TEXT_ONLY = (
    f"SELECT {HIT_COLUMNS}, (length(c.text) - length(replace(lower(c.text), lower(?1), ''))) "
    "* 1.0 / max(length(?1), 1) AS s FROM (SELECT rowid FROM chunks_tri WHERE chunks_tri "
    "MATCH ?2 LIMIT ?4) t JOIN chunks c ON c.id = t.rowid JOIN files f ON f.id = c.file_id "
    "WHERE instr(lower(c.text), lower(?1)) > 0 ORDER BY s DESC, f.path, c.start_line LIMIT ?3"
)


def unread_lines(store, root: Path) -> tuple[int, int, int, list[str]]:
    """(non-blank lines, unread without leads, unread with them, a few of the latter)."""
    spans: dict[str, list[tuple[int, int, int]]] = {}
    rows = store.db.execute(
        "SELECT f.path, c.start_line, c.end_line, c.lead FROM chunks c "
        "JOIN files f ON f.id = c.file_id"
    )
    for path, start, end, lead in rows:
        above = lead.count("\n") + 1 if lead else 0
        spans.setdefault(path, []).append((start, end, above))
    lines_seen = before = after = 0
    examples: list[str] = []
    for path, chunks in spans.items():
        try:
            lines = split_lines(source_text((root / path).read_bytes())[0])  # as indexed
        except OSError:
            continue
        text: set[int] = set()
        with_leads: set[int] = set()
        for start, end, above in chunks:
            text.update(range(start, end + 1))
            with_leads.update(range(start - above, end + 1))
        for n, line in enumerate(lines, 1):
            if not line.strip() or _CLOSERS.match(line):
                continue
            lines_seen += 1
            before += n not in text
            if n not in with_leads:
                after += 1
                if len(examples) < 3:
                    examples.append(f"{path}:{n}")
    return lines_seen, before, after, examples


def literal_timings(store) -> list[tuple[str, float, float]]:
    """(literal, shipped ms, text-only ms): medians of 9 interleaved runs each."""
    out = []
    for literal in LITERALS:
        match = trigram_match(literal)
        shipped, alone = [], []
        for _ in range(9):
            t = time.perf_counter()
            store.trigram_search(match, literal, 50)
            shipped.append(time.perf_counter() - t)
            t = time.perf_counter()
            list(store.db.execute(TEXT_ONLY, (literal, match, 50, queries.TRIGRAM_CANDIDATES)))
            alone.append(time.perf_counter() - t)
        out.append((literal, statistics.median(shipped) * 1000, statistics.median(alone) * 1000))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="repositories, comma-separated (default: every one)")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    print("| repository | corpus | language | non-blank lines | unread, text only | unread, "
          "with doc comments | first unread |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    largest = None
    for repo, entry in ss.load_repositories(only).items():
        for spec in entry["corpora"]:
            corpus = ss.Corpus(spec)
            seen, before, after, examples = unread_lines(corpus.store, corpus.root)
            print(f"| {repo} | `{spec}` | {entry['language']} | {seen:,} | {before:,} | "
                  f"{after:,} | {', '.join(examples) or '-'} |", flush=True)  # fmt: skip
            if largest is None or seen > largest[0]:
                if largest is not None:
                    largest[1].close()
                largest = (seen, corpus, spec)
            else:
                corpus.close()
    if largest is None:
        return 1
    _, corpus, spec = largest
    print(f"\n`trigram_search` on `{spec}`, top 50, median of 9 runs each, interleaved:\n")
    print("| literal | shipped (text and doc comments) ms | text only ms |")
    print("|---|---|---|")
    for literal, shipped, alone in literal_timings(corpus.store):
        print(f"| `{literal}` | {shipped:.1f} | {alone:.1f} |")
    corpus.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
