"""The names of a Python function as known at the cursor: its parameters (annotated), then
what the body binds before the cursor line, the last binding winning: assignments, `with ...
as x`, `except E as e`, the parameters and locals of a function nested in it that the cursor
is in, and `isinstance` narrowing, as a reader sees it: a name is of the checked class(es)

- inside `if isinstance(x, A):` (or `elif`, or `if ... and isinstance(x, (A, B)):`);
- after `if not isinstance(x, A): return` (a block that always leaves: return, raise,
  continue, break), and after `assert isinstance(x, A)`.

"Inside" is read from indentation, not from the tree's blocks: the half-typed line at the
cursor (`x.`) makes tree-sitter end a block early or wrap the line in an ERROR node.
"""

from __future__ import annotations

from tree_sitter import Node

from . import FunctionFacts, TypeSource, node_text, normalize_annotation
from .python import _BLOCKS, _assigned, _function, _unwrap, expression_chain


def python_locals(
    function: FunctionFacts, source: bytes, before_line: int
) -> dict[str, TypeSource]:
    """Parameters, then what the body binds before `before_line` (see the module
    docstring): the last binding wins."""
    out = {name: TypeSource(annotation=ann) for name, ann in function.params.items() if ann}
    body = function.node.child_by_field_name("body") if function.node is not None else None
    if body is None:
        return out
    stack = [body]
    found: list[tuple[int, str, TypeSource]] = []
    lines = source.split(b"\n")
    while stack:
        node = stack.pop()
        for child in node.named_children:
            if child.start_point[0] + 1 > before_line:
                continue
            if child.type in ("if_statement", "assert_statement"):
                found += _narrowed(child, source, lines, before_line)
            if child.type in ("function_definition", "decorated_definition"):
                # a function nested in this one, the cursor in it: its parameters and locals
                inner, _ = _unwrap(child, source)
                row = inner.start_point[0] if inner is not None else 0
                if (
                    inner is not None
                    and inner.type == "function_definition"
                    and before_line - 1 > row
                    and _block_holds(lines, row + 1, before_line - 1, inner.start_point[1])
                ):
                    nested = _function(inner, source, "", [])
                    found += [(row, n, TypeSource(annotation=a)) for n, a in nested.params.items()]
                    body = inner.child_by_field_name("body")
                    if body is not None:
                        stack.append(body)
                continue
            if child.type in ("expression_statement", "assignment"):
                for name, src in _assigned(child, source):
                    found.append((child.start_point[0], name, src))
            elif child.type == "with_statement":
                for item in _descendants(child, "with_item", depth=3):
                    value = item.child_by_field_name("value")
                    if value is not None and value.type == "as_pattern":
                        alias = value.child_by_field_name("alias")
                        target = alias.named_children[0] if alias and alias.named_children else None
                        expr = value.named_children[0] if value.named_children else None
                        chain = expression_chain(expr, source)
                        if target is not None and target.type == "identifier" and chain:
                            found.append(
                                (
                                    child.start_point[0],
                                    node_text(target, source),
                                    TypeSource(chain=chain),
                                )
                            )
                stack.append(child)
            elif child.type == "except_clause":
                value = child.child_by_field_name("value")
                if value is not None and value.type == "as_pattern":
                    alias = value.child_by_field_name("alias")
                    target = alias.named_children[0] if alias and alias.named_children else None
                    caught = value.named_children[0] if value.named_children else None
                    chain = expression_chain(caught, source)
                    if target is not None and chain:  # `except ValidationError as e`
                        found.append(
                            (
                                child.start_point[0],
                                node_text(target, source),
                                TypeSource(annotation=".".join(n for n, _ in chain)),
                            )
                        )
                stack.append(child)
            elif child.type in _BLOCKS or child.type == "block":
                stack.append(child)
    for _, name, src in sorted(found, key=lambda x: x[0]):
        out[name] = src
    return out


_LEAVES = ("return_statement", "raise_statement", "continue_statement", "break_statement")


def _narrowed(
    stmt: Node, source: bytes, lines: list[bytes], cursor_line: int
) -> list[tuple[int, str, TypeSource]]:
    """(0-based row from which it holds, name, its class) for the narrowing `stmt` (an `if`
    or an `assert` statement) makes at `cursor_line` (1-based); [] when none applies."""
    row = cursor_line - 1
    column = stmt.start_point[1]
    if stmt.type == "assert_statement":
        test = stmt.named_children[0] if stmt.named_children else None
        found = _checks(test, source, positive=True)
        if found and row > stmt.end_point[0] and _stays(lines, stmt.end_point[0] + 1, row, column):
            return [(stmt.start_point[0], name, src) for name, src in found]
        return []
    if stmt.type != "if_statement":
        return []
    clauses = [stmt] + [c for c in stmt.named_children if c.type == "elif_clause"]
    for clause in clauses:
        condition = clause.child_by_field_name("condition")
        if condition is None:
            continue
        start = condition.end_point[0] + 1
        if start <= row and _block_holds(lines, start, row, column):
            found = _checks(condition, source, positive=True)
            return [(condition.end_point[0], name, src) for name, src in found]
    # `if not isinstance(x, A): return`: x is an A below the `if`
    condition = stmt.child_by_field_name("condition")
    body = stmt.child_by_field_name("consequence")
    if (
        condition is not None
        and body is not None
        and len(clauses) == 1
        and not any(c.type == "else_clause" for c in stmt.named_children)
        and body.named_children
        and body.named_children[-1].type in _LEAVES
        and row > (end := body.named_children[-1].end_point[0])
        and _stays(lines, end + 1, row, column)
    ):
        return [(end, n, s) for n, s in _checks(condition, source, positive=False)]
    return []


def _checks(node: Node | None, source: bytes, positive: bool) -> list[tuple[str, TypeSource]]:
    """What `node` (a condition) says when it is true (`positive`) or false: the names it
    proves to be instances of classes. `a and isinstance(x, A)` when true; `not
    isinstance(x, A) or y` when false."""
    if node is None:
        return []
    t = node.type
    if t == "parenthesized_expression" and node.named_children:
        return _checks(node.named_children[0], source, positive)
    if t == "not_operator":
        return _checks(node.child_by_field_name("argument"), source, not positive)
    if t == "boolean_operator":
        op = node.child_by_field_name("operator")
        op_text = node_text(op, source) if op is not None else ""
        # all of `a and b` hold when it is true; all of `a or b` fail when it is false
        if (op_text == "and") == positive:
            left = _checks(node.child_by_field_name("left"), source, positive)
            right = _checks(node.child_by_field_name("right"), source, positive)
            return left + right
        return []
    if t == "call" and positive:
        function = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if node_text(function, source) != "isinstance" or args is None:
            return []
        parts = [a for a in args.named_children if a.type != "comment"]
        if len(parts) != 2 or parts[0].type != "identifier":
            return []
        kinds = parts[1].named_children if parts[1].type == "tuple" else [parts[1]]
        names = [
            n
            for k in kinds
            if k.type in ("identifier", "attribute")
            and (n := normalize_annotation(node_text(k, source)))
        ]
        if names:
            return [(node_text(parts[0], source), TypeSource(annotation="|".join(names)))]
    return []


def _indent(line: bytes) -> int | None:
    """The indentation of a line, None for a blank one (or a comment: it says nothing)."""
    stripped = line.lstrip()
    if not stripped or stripped.startswith(b"#"):
        return None
    return len(line) - len(stripped)


def _block_holds(lines: list[bytes], first: int, row: int, column: int) -> bool:
    """Rows first..row (0-based) all indented deeper than `column` (blank rows aside): a
    block opened at `column` and still open at `row`."""
    return all(
        (i := _indent(lines[r])) is None or i > column
        for r in range(first, min(row, len(lines) - 1) + 1)
    )


def _stays(lines: list[bytes], first: int, row: int, column: int) -> bool:
    """Rows first..row never go left of `column`: still in the block the statement is in."""
    return all(
        (i := _indent(lines[r])) is None or i >= column
        for r in range(first, min(row, len(lines) - 1) + 1)
    )


def _descendants(node: Node, type_: str, depth: int) -> list[Node]:
    out: list[Node] = []
    frontier = [node]
    for _ in range(depth):
        nxt: list[Node] = []
        for n in frontier:
            for c in n.named_children:
                (out if c.type == type_ else nxt).append(c)
        frontier = nxt
    return out
