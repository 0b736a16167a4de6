"""A setting the node gives a value, set to another value by the code later (issue 38).

A node can state what a keyword or an attribute is: "`ensure_ascii` is True, so non-ASCII text is written as
escapes", "`strict` defaults to False", "`follow_redirects=False`". It holds as long as the code does not
set that name to another constant; when it does (``json.dumps(data, ensure_ascii=False)``), what the node
says no longer holds, though every name it gives is still there. A stated value is ``True``, ``False``,
``None`` or a whole number, after a name in backticks and "is", "defaults to" or "=" (inside the backticks
or not). The code sets a name by a keyword argument (``ensure_ascii=False``) or an assignment to it or to an
attribute of that name (``self.strict = True``), to a constant.
"""

from __future__ import annotations

import ast
import re

_VALUE = r"(True|False|None|-?\d+)"
_STATED = re.compile(r"`([A-Za-z_]\w*)`\s+(?:is|defaults\s+to|is\s+set\s+to)\s+`?" + _VALUE + r"`?(?!\w|\.\d)"
                     r"|`([A-Za-z_]\w*)\s*=\s*" + _VALUE + r"`")


def stated(text: str) -> dict[str, str]:
    """The names the text gives a value, each with that value as the code writes it (``{"ensure_ascii": "True"}``)."""
    out: dict[str, str] = {}
    for m in _STATED.finditer(text):
        name, value = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        out.setdefault(name, value)
    return out


def _set(tree: ast.AST | None, names: set[str]) -> set[tuple[str, str]]:
    """The (name, constant) pairs the code sets among ``names``: keyword arguments and assignments."""
    found: set[tuple[str, str]] = set()
    for n in ast.walk(tree) if tree is not None else ():
        if isinstance(n, ast.keyword) and n.arg in names:
            pairs = [(n.arg, n.value)]
        elif isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            pairs = [(t.id if isinstance(t, ast.Name) else t.attr, n.value) for t in targets
                     if isinstance(t, ast.Name) and t.id in names or isinstance(t, ast.Attribute) and t.attr in names]
        else:
            continue
        for name, value in pairs:
            constant = _constant(value)
            if constant is not None:
                found.add((name, constant))
    return found


def _constant(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int))):
        return repr(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return repr(-node.operand.value)
    return None


def set_otherwise(text: str, before: ast.AST | None, now: ast.AST | None) -> list[str]:
    """The flag's words for each name the node gives a value that the code now sets to another constant, and
    did not before: "`ensure_ascii`, which the node says is True, is set to False". Empty when none."""
    values = stated(text)
    if not values or now is None:
        return []
    then, found = _set(before, set(values)), _set(now, set(values))
    return [f"`{name}`, which the node says is {values[name]}, is set to {value}"
            for name, value in sorted(found - then) if value != values[name]]
