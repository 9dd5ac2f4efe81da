"""The commands at a cursor and of the generation model: `repocontext context` (the snippets a
completion there would get), `repocontext complete` (a completion, with its timings) and
`repocontext models` (the generation models this machine has, and their cost)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from ..config import load_config
from ..errors import redact_url
from ..terminal import printable
from .inputs import cursor_request, repository


def cmd_context(args) -> int:
    repo = repository(args.root)
    request = replace(cursor_request(args, repo), budget=args.budget)
    package = repo.context(request)
    if args.json:
        print(json.dumps(package.to_json(), indent=2))
        return 0
    where = f"{printable(package.file)}:{package.line}:{package.col}"
    if not package.retrieved:
        print(f"{where}: no retrieval ({printable(str(package.skip_reason))})")
        return 0
    print(f"{where}: retrieved because " + "; ".join(printable(r) for r in package.reasons))
    if not package.snippets:
        print(f"  no snippets: {printable(str(package.skip_reason))}")
    for i, sn in enumerate(package.snippets, 1):
        print(
            f"{i:2}. {printable(sn.path)}:{sn.start_line}-{sn.end_line}  "
            f"{printable(sn.symbol or '')}  [{printable(sn.source)}] score {sn.score:.2f}, "
            f"{sn.tokens} tokens: {printable(sn.why)}"
        )
    print(f"{package.tokens} of {package.budget} tokens, {package.timings_ms['total']:.1f} ms")
    return 0


def cmd_complete(args) -> int:
    from ..runtime.session import Session

    repo = repository(args.root)
    request = cursor_request(args, repo)
    session = Session(repo, backend=repo.generation_backend(args.model))
    try:
        result = session.complete_now(request, mode=args.mode)
    finally:
        session.close()
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    print(
        printable(result.suggestion, code=True)
        if result.suggestion
        else f"(no suggestion: {printable(result.status)})"
    )
    t = result.timings_ms
    first = "-" if t["first_token"] is None else f"{t['first_token']:.0f} ms"
    print(
        f"-- first token {first}, total {t['total']:.0f} ms, {result.tokens_evaluated} tokens "
        f"evaluated, {result.tokens_generated} generated, context "
        f"{'injected' if result.context_injected else 'not used'} ({result.snippets} snippets)",
        file=sys.stderr,
    )
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from ..complete import catalog
    from ..extras import require

    require("local", "`repocontext models` (it reads each GGUF with llama.cpp)")

    config = load_config().generation
    entries = catalog.listing(config, args.measure)
    if args.json:
        current = catalog.in_use(entries, config)
        print(
            json.dumps(
                {
                    "models": [e.to_json() | {"in_use": e is current} for e in entries],
                    "server_url": redact_url(config.server_url) or None,
                }
            )
        )
    else:  # model names and paths from folders and files of this machine
        print("\n".join(printable(line) for line in catalog.report(entries, config).split("\n")))
    return 0
