"""Staleness readings from jsonschema's errors (issue 38, turn 19), each with real git on both sides."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, one_file_repo, only, relate_and_commit
from test_staleness_sympy import capture

DEPRECATED = 'def {name}(x):\n    warn("{name} is deprecated", DeprecationWarning)\n    return x\n'
PLAIN = "def {name}(x):\n    return x\n"


def _overview(names: list[str]) -> str:
    return "`pkg/` is the whole library. `validators.py` holds " + ", ".join(f"`{n}`" for n in names) + "."


def test_a_folder_overview_naming_many_names_is_judged_for_each_against_its_base(tmp_path: Path) -> None:
    """An overview node names more names than a fingerprint records (forty here, twenty before): a name past
    the first ones in the order of the alphabet that was deprecated already when the node was written is no
    new deprecation (jsonschema's `validate` and `validator_for` flagged from a commit that changed only a
    test), and one deprecated later is, also after a relate."""
    names = [f"check_{i:02}" for i in range(44)]
    legacy, late = "zz_legacy", "aa_late"
    root = one_file_repo(tmp_path / "r", "pkg/__init__.py", "", "pkg")
    (root / "pkg/validators.py").write_text("from warnings import warn\n\n\n" + "\n\n".join(
        [PLAIN.format(name=n) for n in names + [late]] + [DEPRECATED.format(name=legacy)]))
    (root / "pkg/other.py").write_text("X = 1\n")
    commit(root, "the library")
    overview = capture(root, ["pkg/"], _overview(names + [late, legacy]), "The pkg/ package", type="component")
    other = capture(root, ["pkg/"], "`pkg/` holds `check_00`.", "Another note", type="component")
    commit(root, "record")
    (root / "pkg/other.py").write_text("X = 2\n")
    commit(root, "another module changed")
    assert only(root, overview).stale is False  # zz_legacy was deprecated when the node was written
    text = (root / "pkg/validators.py").read_text()
    (root / "pkg/validators.py").write_text(text.replace(PLAIN.format(name=late), DEPRECATED.format(name=late)))
    commit(root, "deprecate aa_late")
    finding = only(root, overview)
    assert finding.stale is True and "aa_late" in finding.why and "zz_legacy" not in finding.why
    relate_and_commit(root, overview, other)
    assert only(root, overview).stale is True


ERROR = '''import pprint
import textwrap


class Error:
    def __str__(self):
        schema = textwrap.indent(pprint.pformat(self.schema, width=72), "    ")
        return "Failed validating %r in %s:\\n%s" % (self.validator, self.word, schema)
'''
STR_NODE = ("`Error.__str__` renders the message, then the failing schema `pprint`-ed with width 72 and indented by "
            "four spaces.")


def test_a_module_now_used_through_a_name_imported_from_it_is_still_used(tmp_path: Path) -> None:
    """`pprint.pformat(...)` now `pformat(...)` under `from pprint import pformat` (jsonschema's messages as
    f-strings): the node's `pprint` is still what renders the schema; `pprint` replaced by `json` is a flag."""
    root = one_file_repo(tmp_path / "r", "pkg/exceptions.py", ERROR, "errors")
    node = capture(root, ["pkg/exceptions.py#Error.__str__"], STR_NODE, "str(Error): the schema pprint-ed")
    commit(root, "record")
    now = (ERROR.replace("import pprint\nimport textwrap", "from pprint import pformat\nfrom textwrap import indent")
           .replace('textwrap.indent(pprint.pformat(self.schema, width=72), "    ")',
                    'indent(pformat(self.schema, width=72), prefix="    ")')
           .replace('return "Failed validating %r in %s:\\n%s" % (self.validator, self.word, schema)',
                    'return f"Failed validating {self.validator!r} in {self.word}:\\n{schema}"'))
    (root / "pkg/exceptions.py").write_text(now)
    commit(root, "f-strings, names imported")
    assert only(root, node).stale is False
    (root / "pkg/exceptions.py").write_text(now.replace("from pprint import pformat", "from json import dumps")
                                            .replace("pformat(self.schema, width=72)", "dumps(self.schema, indent=4)"))
    commit(root, "json instead")
    finding = only(root, node)
    assert finding.stale is True and "pprint" in finding.why


ITEMS = '''def items(validator, items, instance, schema):
    if not items:
        return
    non_prefixed_items = instance[len(schema['prefixItems']):] \\
        if 'prefixItems' in schema else instance
    for index, item in enumerate(non_prefixed_items):
        yield from validator.descend(item, items, path=index)
'''
ITEMS_NODE = ("`items` applies its subschema after the prefix: `non_prefixed_items = instance[len(schema[\"prefixItems\"]):]`, "
              "then `validator.descend(item, items, path=index)`, so the index counts from the end of the prefix.")


def test_a_snippet_the_code_holds_once_a_formatter_wrapped_it_is_held(tmp_path: Path) -> None:
    """A backslash continuation turned into a formatter's parentheses, then another change in the function:
    the node's snippet is still the code (jsonschema's `items`); the snippet changed is a flag."""
    root = one_file_repo(tmp_path / "r", "pkg/_validators.py", ITEMS, "items")
    node = capture(root, ["pkg/_validators.py#items"], ITEMS_NODE, "items after prefixItems: a relative index")
    commit(root, "record")
    wrapped = (ITEMS.replace("non_prefixed_items = instance[len(schema['prefixItems']):] \\\n        if 'prefixItems' "
                             "in schema else instance",
                             'non_prefixed_items = (\n        instance[len(schema["prefixItems"]):]\n'
                             '        if "prefixItems" in schema else instance\n    )'))
    assert wrapped != ITEMS
    (root / "pkg/_validators.py").write_text(wrapped)
    commit(root, "no backslashes")
    (root / "pkg/_validators.py").write_text(wrapped.replace("    if not items:\n        return\n",
                                                             "    if not items:\n        return None\n"))
    commit(root, "an explicit None")
    assert only(root, node).stale is False
    (root / "pkg/_validators.py").write_text(wrapped.replace('instance[len(schema["prefixItems"]):]', "instance")
                                             .replace("path=index", "path=index + len(schema.get('prefixItems', []))"))
    commit(root, "absolute index")
    assert only(root, node).stale is True
