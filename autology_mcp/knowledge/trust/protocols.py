"""The special methods behind the operations a node writes as code (issue 38).

A node that says ``x in missing`` is False, or that ``len()`` of a value is 0, describes what Python
does when it applies an operator or a builtin to the class's instances: ``__contains__``,
``__len__``. When the class gains or loses the special method behind an operation the node writes
(``__contains__ = _fail_with_undefined_error`` added), that operation behaves another way, and what
the node says of it may no longer hold. Read from the code in backticks only (``x in y``, ``str()``,
``async for``, ``a == b``), where an operator is code and not an English word; the ``in`` of a loop
(``for x in items``) is its iteration, not a membership test.
"""

from __future__ import annotations

import re

from autology_mcp.knowledge.trust.mentions import _TICKS  # the node's code in backticks, as the rule reads it

# a keyword or an operator of the code and the special methods Python calls for it
_KEYWORDS = {
    "in": ("__contains__", "__iter__"),
    "for": ("__iter__",),
    "async for": ("__aiter__", "__anext__"),
    "with": ("__enter__", "__exit__"),
    "async with": ("__aenter__", "__aexit__"),
    "await": ("__await__",),
}
_OPERATORS = {
    "==": "__eq__", "!=": "__ne__", "<=": "__le__", ">=": "__ge__", "<": "__lt__", ">": "__gt__",
    "+": "__add__", "-": "__sub__", "*": "__mul__", "/": "__truediv__", "%": "__mod__", "**": "__pow__",
    "//": "__floordiv__", "@": "__matmul__", "|": "__or__", "&": "__and__", "^": "__xor__",
}
_BUILTINS = {
    "str": "__str__", "repr": "__repr__", "len": "__len__", "bool": "__bool__", "iter": "__iter__",
    "next": "__next__", "hash": "__hash__", "int": "__int__", "float": "__float__", "abs": "__abs__",
    "reversed": "__reversed__", "format": "__format__", "bytes": "__bytes__", "aiter": "__aiter__",
}
_KEYWORD = re.compile(r"(?<![\w.])(async\s+for|async\s+with|in|for|with|await)(?![\w])")
_FOR_IN = re.compile(r"(?<![\w.])for\s+[\w\s,()\[\]]+?\s+in(?![\w])")  # the ``in`` of a loop: iteration, not membership
_OPERATOR = re.compile(r"(?<=[\w)\]\s])\s*(\*\*|//|==|!=|<=|>=|[<>+\-*/%@|&^])\s*(?=[\w(\[])")
_BUILTIN = re.compile(r"(?<![\w.])(" + "|".join(_BUILTINS) + r")\(")


def operations(text: str) -> set[str]:
    """The special methods behind the operations the node's code in backticks writes."""
    found: set[str] = set()
    for code in _TICKS.findall(text):
        if code.startswith("__") and code.endswith("__"):
            continue  # a special method named: the node's name for it, read as its other names are
        for m in _KEYWORD.finditer(_FOR_IN.sub("for", code)):
            found.update(_KEYWORDS[" ".join(m.group(1).split())])
        for m in _BUILTIN.finditer(code):
            found.add(_BUILTINS[m.group(1)])
        if " " in code or "(" in code:  # an expression, not a path (a/b) or a word with a dash
            found.update(_OPERATORS[m.group(1)] for m in _OPERATOR.finditer(code))
    return found
