"""The threads repocontext starts, and the editor's session that owns most of them.

Nothing is imported here: `threads` is layer 0 (the standard library only) and is imported
by low layers, even the indexer's worker processes (index/prepare.py), which must not pull in
the session (layer 8) with it. Import the modules themselves.
"""
