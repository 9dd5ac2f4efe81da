"""The command line's choices (and the defaults they share with the engines), kept in a module
that imports nothing: `repocontext search 'def x'` builds its parser before it knows which
parts of the package it will need, and importing the engines costs a tenth of a second."""

RETRIEVERS = ("bm25", "vector", "trigram", "ast", "graph")
MODALITIES = ("auto", *RETRIEVERS, "hybrid")
SCOPES = ("all", "src", "tests")
# Chunks of one file kept in `auto`'s results: the answer is often the neighbour of the best
# chunk (another method of the class, the helper beside the entry point); measured in
# bench/results/search_sets.md against 1 (the best chunk per file), 2 and all. A big file gets
# one more place for each CHUNKS_PER_PLACE chunks it has (zod's types.ts, 493 chunks, holds most
# of zod's answers; cJSON.c most of cJSON's), up to PER_FILE_MOST, so that one file never
# fills a list: measured there against 3 for every file, 4, 5, and one more per 20 to 150
# chunks, bounded at 4 to 6 or not.
PER_FILE = 3
CHUNKS_PER_PLACE = 60
PER_FILE_MOST = 6
MAX_TOP = 500  # results a query may ask for (search/engine.py: CANDIDATES, DEEPER)
COMPLETION_MODES = ("parallel", "local", "sequential")
# The most tokens of context a request may ask for (`context --budget`, [generation]
# context_budget): a prompt holds at most n_ctx tokens, whose own limit is the same.
MAX_CONTEXT_BUDGET = 1 << 20
