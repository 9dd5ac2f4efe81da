"""Context at `obj.`: the outline of obj's class and its bases, members ranked by how likely
they are wanted, and the method's definition once it is typed or called (the receiver's class
comes from receivers.py).

Members are ranked by the name typed so far (those it begins first), by this buffer (names
used on the same receiver in it, names it calls), by the repository (how often each is
called on an object of the receiver's name or its class's, `ctx.exit(` for a Context, then
how many files call it at all), public before private; after `Cls.` (the class itself, not an
instance) its classmethods and staticmethods come first, and the bases that define some are
outlined before those that do not. A large class's outline then fits the budget with what is
wanted at its head (packing.py cuts it from the end)."""

from __future__ import annotations

import posixpath
import re
from collections import OrderedDict

from ..store import ChunkHit, Store
from .candidate import PRIOR, Candidate
from .cursor import CursorView
from .packing import OUTLINE_SHORT_MEMBERS
from .receivers import Receiver, ReceiverTyper, TypeRef

MAX_OUTLINES = 5  # classes outlined at `obj.`: its own and its nearest bases


def receiver_candidates(
    store: Store, typer: ReceiverTyper, receiver: Receiver, view: CursorView
) -> list[Candidate]:
    """At `obj.` the outline of obj's class and of its bases, members ranked by how likely
    they are wanted; once the member is typed or called, its definition, from the class or
    the base that defines it."""
    name = receiver.member
    modules = [t for t in receiver.types if t.module]
    types = [t for t in receiver.types if not t.module][:4]
    if modules and name and not types:
        return _module_member(store, typer, modules[0], name)
    if not types:
        return []
    guess = 0.8 if types[0].guessed else 1.0
    how = " (by its name)" if types[0].guessed else ""
    # a union (`x: A | B`, `isinstance(x, (A, B))`) is each of its classes
    found = [m for m in (typer.member(t, name) for t in types) if m] if name else []
    found = list({(m.owner, m.name): m for m in found}.values())
    member = found[0] if found else None
    starting = [m for t in types for m in typer.members_starting(t, name, 3)] if name else []
    if name and member is None and not starting:
        return []  # nothing of that name in the class: the type is likely wrong, say nothing
    wanted: list[tuple[str, str, float, str]] = []
    for t, m in ((t, typer.member(t, name)) for t in types) if found else ():
        if m is None or m.function is None:
            continue
        wanted.append(
            (
                m.function.path or m.owner.path,
                f"{m.owner.qualname}.{name}",
                PRIOR["definition"] * guess,
                f"{name} of {t.name}{how}"
                + (f", inherited from {m.owner.name}" if m.owner != t else ""),
            )
        )
    if not wanted:
        for m in starting[:3]:
            wanted.append(
                (
                    (m.function.path if m.function else None) or m.owner.path,
                    f"{m.owner.qualname}.{m.name}",
                    0.9 * guess,
                    f"{m.name} of {m.owner.name}{how}, starts with {name}",
                )
            )
    wanted = list({w[1]: w for w in wanted}.values())
    # The classes to outline: the receiver's (each of a union's) and their bases, nearest
    # first (after `super()` every base); the one that defines the method the cursor is in
    # (an override calling what it overrides) or the member being called goes first.
    lineages = [typer.lineage(t) for t in types]
    lineage = list(
        dict.fromkeys([ls[0] for ls in lineages if ls] + [c for ls in lineages for c in ls])
    )
    on_class = not any(t.instance for t in types)  # `View.`: a classmethod is what is called
    if on_class:
        lineage.sort(key=lambda c: c not in lineage[: len(types)] and not _class_level(typer, c))
    lineage = lineage[:MAX_OUTLINES]
    members = [m for t in types for m in typer.all_members(t)]
    members = list({(m.owner, m.name): m for m in members}.values())
    names = [m.name for m in members]
    usage = store.graph.centrality(names)
    # how the repository uses the members on such objects: only where an outline is longer
    # than its short form (a query over the calls of each name, a few milliseconds)
    largest = max((sum(m.owner == c for m in members) for c in lineage), default=0)
    on_receiver = (
        _member_calls(store, names, _receiver_names(receiver, types))
        if largest > OUTLINE_SHORT_MEMBERS
        else {}
    )
    likely = _likely_members(view, receiver)
    focus = (
        member.owner
        if member is not None
        else next((m.owner for m in members if likely.get(m.name, 0) >= 100), None)
    )
    if focus in lineage:
        lineage.remove(focus)
        lineage.insert(0, focus)
    own_names = {t.qualname for t in types}
    outlines = [
        (
            cls.path,
            cls.qualname,
            guess * max(0.4, (0.6 if wanted else 0.95) - 0.1 * i),
            f"members of {cls.name}{how}"
            + (f", a base of {types[0].name}" if cls.qualname not in own_names else ""),
        )
        for i, cls in enumerate(lineage)
    ]
    hits: dict[tuple[str, str | None], ChunkHit] = {}
    for h in store.definitions_at([(p, q) for p, q, _, _ in wanted + outlines]):
        hits.setdefault((h.path, h.qualname), h)  # a long method's first window: its signature
    out = [
        Candidate("definition", prior, hits[(p, q)], why=why)
        for p, q, prior, why in wanted
        if (p, q) in hits
    ]
    for (path, qualname, prior, why), cls in zip(outlines, lineage):
        hit = hits.get((path, qualname))
        if hit is None:
            continue
        own = [m for m in members if m.owner == cls and m.function and m.function.signature]
        own.sort(
            key=lambda m: (
                not m.name.startswith(name) if name else False,
                on_class and not (m.function and m.function.class_level),
                -likely.get(m.name, 0),
                -on_receiver.get(m.name, 0),
                m.name.startswith("_"),
                -usage.get(m.name, 0),
                m.name,
            )
        )
        out.append(_outline(typer, hit, own, prior, why, name))
    return out


def _module_member(
    store: Store, typer: ReceiverTyper, module: TypeRef, name: str
) -> list[Candidate]:
    """`mod.Name`: the class or function of that name in the module (or one it passes on)."""
    found = [r for r in typer.in_module(module, name) if not r.module and r.qualname]
    hits = store.definitions_at([(r.path, r.qualname) for r in found[:2]])
    return [
        Candidate(
            "definition",
            PRIOR["definition"],
            h,
            why=f"{name}, from {posixpath.basename(module.path)}",
        )
        for h in hits
    ]


_USES: OrderedDict[tuple, dict[str, int]] = OrderedDict()  # the last few, across keystrokes
USES_CACHE = 16


def _member_calls(store: Store, names: list[str], receivers: list[str]) -> dict[str, int]:
    """`store.graph.member_calls`, kept for the last few receivers of an index: each keystroke
    of a word after `obj.` asks again for the same class."""
    key = (id(store), store.get_meta("indexed_at"), frozenset(names), tuple(receivers))
    if key in _USES:
        _USES.move_to_end(key)
        return _USES[key]
    found = _USES[key] = store.graph.member_calls(names, receivers)
    if len(_USES) > USES_CACHE:
        _USES.popitem(last=False)
    return found


def _class_level(typer: ReceiverTyper, cls: TypeRef) -> bool:
    facts = typer.class_facts(cls)
    return facts is not None and any(f.class_level for f in facts.methods.values())


def _receiver_names(receiver: Receiver, types: list[TypeRef]) -> list[str]:
    """The names objects of the receiver's class go by in the repository: the receiver's own
    (`ctx` in `ctx.`, `cursor()` in `conn.cursor().`) and its class's (`console` for
    Console, `http_connection` and `connection` for HTTPConnection). `self` says nothing of
    the class (every class has one)."""
    last, called = receiver.chain[-1]
    out = [] if last in ("self", "this", "cls", "super") else [last + ("()" if called else "")]
    for t in types:
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", t.name).lower()
        out += [snake, snake.rsplit("_", 1)[-1]]
    return list(dict.fromkeys(n for n in out if len(n) > 1))


def _likely_members(view: CursorView, receiver: Receiver) -> dict[str, int]:
    """How strongly this buffer suggests each member name: used on the same receiver elsewhere
    in it (`self.query.` -> the names after `self.query.` in the file), called in it at all,
    and, after `super().` or `self.`, the name of the method the cursor is in (an override
    calling what it overrides)."""
    text = "\n".join(view.lines)
    receiver_text = r"\s*\.\s*".join(
        re.escape(n) + (r"\(\s*\)" if c else "") for n, c in receiver.chain
    )
    weights: dict[str, int] = {}
    for r, _ in view.analysis.references:
        if r.kind == "call":
            weights[r.name] = max(weights.get(r.name, 0), 1)
    for m in re.finditer(rf"(?<![\w.]){receiver_text}\s*\.\s*([A-Za-z_]\w*)", text):
        weights[m.group(1)] = weights.get(m.group(1), 1) + 3
    if view.enclosing and receiver.chain[0][0] in ("super", "self", "this"):
        weights[view.enclosing.rsplit(".", 1)[-1]] = 100
    return weights


def _outline(
    typer: ReceiverTyper, hit: ChunkHit, members: list, prior: float, why: str, prefix: str
) -> Candidate:
    """A class's header (from its file as it is now: the signature and the first line of its
    docstring) and its members, most wanted first, each on one line."""
    lines = (typer.files.read(hit.path) or "").split("\n")[hit.start_line - 1 : hit.end_line]
    header = _header(lines)
    first = header[0] if header else ""
    indent = first[: len(first) - len(first.lstrip())] + "    "
    body = [f"{indent}{_clip(m.function.signature)} ..." for m in members]
    return Candidate(
        "member",
        prior,
        path=hit.path,
        start_line=hit.start_line,
        end_line=hit.end_line,
        text="\n".join(header + body),
        symbol=hit.qualname,
        why=why,
        outline_prefix=prefix,
    )


MAX_HEADER_LINES = 12
MAX_SIGNATURE_CHARS = 160


def _header(lines: list[str]) -> list[str]:
    """The definition's own lines up to its body, then one line of its docstring; a Go struct
    or interface keeps its fields (its body is what it declares)."""
    out: list[str] = []
    for i, line in enumerate(lines[:MAX_HEADER_LINES]):
        out.append(line)
        if line.rstrip().endswith(("struct {", "interface {")):
            return lines[:MAX_HEADER_LINES]
        if not line.rstrip().endswith((":", "{")):
            continue
        rest = lines[i + 1 :]
        first = rest[0].strip() if rest else ""
        indent = rest[0][: len(rest[0]) - len(rest[0].lstrip())] if rest else ""
        for quote in ('"""', "'''"):
            if first.startswith(quote):
                text = first[3:] if first[3:].strip() or len(rest) < 2 else rest[1].strip()
                out.append(f"{indent}{quote}{text.replace(quote, '').strip()}{quote}")
                break
        else:
            if first.startswith(("//", "#", "/*", "*")):
                out.append(rest[0])
        break
    return out


def _clip(signature: str) -> str:
    return (
        signature
        if len(signature) <= MAX_SIGNATURE_CHARS
        else (signature[:MAX_SIGNATURE_CHARS].rstrip() + "...")
    )
