"""`repocontext search`: a question to the index, answered as JSON or as text
(`format_response`: results grouped by file, and with `--explain` why each ranked there)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..terminal import printable
from .inputs import repository

if TYPE_CHECKING:
    from ..search.results import SearchResponse, SearchResult


def cmd_search(args) -> int:
    repo = repository(args.root)
    repo.reload_config()  # a broken config file is reported before any work is done
    response = repo.search(
        " ".join(args.query),
        top=args.top,
        scope=args.scope,
        modality=args.modality,
        all_chunks=args.all_chunks,
        per_file=args.per_file,
    )
    if args.json:
        print(json.dumps(response.to_json(), indent=2))
    else:
        print(format_response(response, explain=args.explain))
    return 0


def format_response(response: SearchResponse, explain: bool = False) -> str:
    from ..search.results import heads_to_show  # loaded by the search that answered

    lines = []
    if explain:
        lines.append(
            f"intent {response.intent} (confidence {response.confidence:.2f}, "
            f"rule: {response.rule}), strategy {response.strategy}, "
            f"modality {response.modality}, {response.timings_ms['total']:.1f} ms"
        )
    for note in response.notes:
        lines.append(f"note: {printable(note)}")
    if response.functions:
        lines.append("most likely to need the change:")
        for i, f in enumerate(response.functions[: 10 if explain else 5], 1):
            lines.append(
                f"  {i:2}. {printable(f.path)}:{f.start_line}-{f.end_line}  {printable(f.symbol)}"
            )
            if explain:
                reasons = "; ".join(printable(r) for r in f.reasons)
                lines.append(f"        score {f.score:.4f}; {reasons}")
        lines.append("results:")
    if not response.results:
        lines.append("no results")
    # grouped by file, files in the order of their best result; each result keeps its rank
    heads = heads_to_show(response.results)  # what tells apart results of one name
    by_file: dict[str, list[tuple[int, SearchResult]]] = {}
    for i, r in enumerate(response.results, 1):
        by_file.setdefault(r.path, []).append((i, r))
    for path, ranked in by_file.items():
        role = "" if ranked[0][1].role == "source" else f"  [{printable(ranked[0][1].role)}]"
        lines.append(f"{printable(path)}{role}")
        for i, r in ranked:
            kind = printable(r.kind)
            symbol = f"  {printable(r.symbol)} ({kind})" if r.symbol else f"  ({kind})"
            if i - 1 in heads:
                symbol += f"  {printable(heads[i - 1])}"
            lines.append(f"  {i:2}. {printable(r.path)}:{r.start_line}-{r.end_line}{symbol}")
            if explain:
                ranks = ", ".join(f"{k} #{v}" for k, v in r.ranks.items() if v is not None)
                contrib = ", ".join(f"{k} {v:.4f}" for k, v in r.contributions.items())
                factors = ", ".join(f"{k} x{v}" for k, v in r.factors.items())
                detail = f"score {r.score:.4f}; ranks: {ranks or 'none'}"
                if contrib:
                    detail += f"; contributions: {contrib}"
                if factors:
                    detail += f"; factors: {factors}"
                if r.placed:
                    detail += f"; placed: {printable(r.placed)}"
                if r.rerank:
                    detail += (
                        f"; second stage: the model ranks it {r.rerank['rank']} (score "
                        f"{r.rerank['score']}), the first stage {r.rerank['first_stage_rank']}"
                    )
                lines.append(f"        {detail}")
    return "\n".join(lines)
