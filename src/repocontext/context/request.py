"""A request at the cursor (for context or for a completion) and the context's answer (the
`context --json` contract)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class CursorRequest:
    """Everything the editor knows at a keystroke; what both a completion and its context
    are asked with.

    `text` is the buffer's current content (None: read the file from disk); `line` is 1-based,
    `col` a 0-based byte offset in that line (Neovim's convention). `budget` is in tokens of
    context (None: the configured `context_budget`). Open buffers map a root-relative path to
    its current (possibly unsaved) text; recent edits are (path, line).
    """

    file: str
    line: int
    col: int
    text: str | None = None
    budget: int | None = None
    open_buffers: dict[str, str] = field(default_factory=dict)
    recent_edits: list[tuple[str, int]] = field(default_factory=list)
    yanks: list[str] = field(default_factory=list)
    # where a language server says the type of the object before the dot is defined
    # (root-relative path, 1-based line): used when the engine's own typing finds nothing
    receiver_location: tuple[str, int] | None = None
    # a suggestion already shown here: asking for a second candidate, which must start
    # differently (the editor's next())
    avoid: str | None = None


@dataclass
class Snippet:
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    source: str  # definition | member | callgraph | bm25 | vector | buffer | edit | yank
    score: float
    tokens: int
    text: str
    why: str = ""


@dataclass
class ContextPackage:
    file: str
    line: int
    col: int
    retrieved: bool
    skip_reason: str | None
    snippets: list[Snippet]
    tokens: int
    budget: int
    timings_ms: dict[str, float]
    reasons: list[str] = field(default_factory=list)  # why retrieval was triggered
    query: str = ""
    # the object before the dot: {"expression", "types", "line", "col"} (col: the byte offset
    # of its last character, for a language server to be asked about it when types is empty)
    receiver: dict | None = None

    def to_json(self) -> dict:
        out = asdict(self)
        for s in out["snippets"]:
            s["score"] = round(s["score"], 4)
        out["timings_ms"] = {k: round(v, 3) for k, v in self.timings_ms.items()}
        return out


@dataclass(frozen=True)
class RepositoryNames:
    """The repository's defined names, and by name the heads of their definitions
    (`def resolve_proxies(request, proxies, trust_env=True)`) with each file's language and
    whether it is a class's constructor (keyed by the class): what steers the decoder beyond
    the buffer and the retrieved package (complete/steering/). Read once per index version."""

    names: frozenset[str]
    heads: dict[str, tuple[tuple[str, str | None, bool], ...]]
    spelled: tuple[bytes, ...] = ()  # the names as UTF-8, sorted (looked up by prefix)
