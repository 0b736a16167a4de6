"""Staleness (issue 38): the readings that came from the missed flags of the doc2dash replay, once it joined the
tuning side, each with real git and files on both sides (no flag, and a flag). A string value a node quotes, changed
in a line of TOML; a name a node says a span's code has not, written by the function that holds the span."""

from __future__ import annotations

from pathlib import Path

from autology_mcp.knowledge.trust.code_compare import Unit, held_strings
from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

PYPROJECT = '''[project]
name = "kit"
dependencies = [
    "attrs>=21.3",
    "click",
    "rich",
]

[project.optional-dependencies]
tests = ["pytest"]
'''

UNPINNED = ("The `[project]` dependencies carry no version constraints, except `attrs>=21.3`: `click` and `rich` "
            "are required without any version.")


def _pyproject(tmp_path: Path) -> tuple[Path, str]:
    root = one_file_repo(tmp_path / "r", "pyproject.toml", PYPROJECT, "pyproject")
    node = capture(root, ["pyproject.toml#L3-L7"], UNPINNED, "unpinned", type="convention")
    commit(root, "record")
    return root, node


def test_a_quoted_toml_value_the_node_quotes_changed_is_a_flag(tmp_path: Path) -> None:
    root, node = _pyproject(tmp_path)
    edit(root, '''dependencies = [
    "attrs>=21.3",
    "click",
    "rich",
]''', 'dependencies = ["attrs>=21.3", "click>8", "rich"]', path="pyproject.toml")
    commit(root, "click>8")
    finding = only(root, node)
    assert finding.stale is True


def test_a_toml_list_reflowed_with_the_same_values_is_no_flag(tmp_path: Path) -> None:
    root, node = _pyproject(tmp_path)
    edit(root, '''dependencies = [
    "attrs>=21.3",
    "click",
    "rich",
]''', 'dependencies = ["attrs>=21.3", "click", "rich"]', path="pyproject.toml")
    commit(root, "one line")
    assert only(root, node).stale is False


PLIST = '''def prepare(name, fallback_url=None):
    """Write the docset's Info.plist."""
    cfg = {
        "CFBundleName": name,
        "isDashDocset": True,
    }
    if fallback_url is not None:
        cfg["DashDocSetFallbackURL"] = fallback_url
    write(cfg)
    return cfg
'''

NO_PLAY = ("The Info.plist written has `CFBundleName` and `isDashDocset`, plus `DashDocSetFallbackURL` when a "
           "fallback URL is given. There is no `DashDocSetPlayURL` (a playground link).")


def _plist(tmp_path: Path) -> tuple[Path, str]:
    root = one_file_repo(tmp_path / "r", "kit/docsets.py", PLIST, "docsets")
    node = capture(root, ["kit/docsets.py#L3-L8"], NO_PLAY, "plist keys", type="issue")
    commit(root, "record")
    return root, node


def test_a_name_the_node_denies_written_below_the_span_by_its_function_is_a_flag(tmp_path: Path) -> None:
    root, node = _plist(tmp_path)
    edit(root, '''        cfg["DashDocSetFallbackURL"] = fallback_url
''', '''        cfg["DashDocSetFallbackURL"] = fallback_url
    if play_url is not None:
        cfg["DashDocSetPlayURL"] = play_url
''', path="kit/docsets.py")
    edit(root, "def prepare(name, fallback_url=None):", "def prepare(name, fallback_url=None, play_url=None):",
         path="kit/docsets.py")
    commit(root, "play url")
    finding = only(root, node)
    assert finding.stale is True and "`DashDocSetPlayURL`, which the node says it has not" in finding.why
    assert "`prepare`" in finding.why


def test_a_key_the_node_does_not_deny_added_below_the_span_is_no_flag(tmp_path: Path) -> None:
    root, node = _plist(tmp_path)
    edit(root, '''        cfg["DashDocSetFallbackURL"] = fallback_url
''', '''        cfg["DashDocSetFallbackURL"] = fallback_url
    if index is not None:
        cfg["dashIndexFilePath"] = index
''', path="kit/docsets.py")
    edit(root, "def prepare(name, fallback_url=None):", "def prepare(name, fallback_url=None, index=None):",
         path="kit/docsets.py")
    commit(root, "index page")
    assert only(root, node).stale is False



def test_a_line_of_another_language_holds_its_quoted_values_not_its_apostrophes() -> None:
    line = Unit("""It's the user's "x y" list: 'click>8', ok""", "", 1, 1)
    assert held_strings(line) == ("x y", "click>8")
    assert held_strings(Unit('dependencies = ["attrs>=21.3", "click>8"]', "", 1, 1)) == ("attrs>=21.3", "click>8")
