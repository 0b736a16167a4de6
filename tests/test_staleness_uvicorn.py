"""Staleness (issue 38): a reading that came from the missed flags of the uvicorn replay (its U31), with real git
and files on both sides: a package the node names, dropped from the requirement list of the span it references."""

from __future__ import annotations

from pathlib import Path

from autology_mcp.knowledge.trust.code_compare import Unit
from autology_mcp.knowledge.trust.requirements import dropped, is_packaging
from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

SETUP = '''from setuptools import setup

minimal_requirements = [
    "asgiref>=3.4.0",
    "click>=7.0",
    "h11>=0.8",
]

extra_requirements = [
    "websockets>=10.0",
    "httptools>=0.4.0",
    "watchgod>=0.6",
    "python-dotenv>=0.13",
]

setup(name="server", install_requires=minimal_requirements, extras_require={"standard": extra_requirements})
'''

EXTRAS = ("`pip install server` installs asgiref, click and h11. The 'standard' extra adds websockets, httptools, "
          "watchgod (for the reloader) and python-dotenv.")


def _setup(tmp_path: Path) -> tuple[Path, str]:
    root = one_file_repo(tmp_path / "r", "setup.py", SETUP, "setup")
    node = capture(root, ["setup.py#L3-L14"], EXTRAS, "extras", type="convention")
    commit(root, "record")
    return root, node


def test_a_package_the_node_names_replaced_in_the_requirements_is_a_flag(tmp_path: Path) -> None:
    root, node = _setup(tmp_path)
    edit(root, '"watchgod>=0.6"', '"watchfiles>=0.13"', path="setup.py")
    commit(root, "watchfiles")
    finding = only(root, node)
    assert finding.stale is True


def test_a_version_bumped_or_a_package_the_node_does_not_name_is_no_flag(tmp_path: Path) -> None:
    root, node = _setup(tmp_path)
    edit(root, '"watchgod>=0.6"', '"watchgod>=0.7"', path="setup.py")
    edit(root, '    "python-dotenv>=0.13",\n', '    "python-dotenv>=0.13",\n    "PyYAML>=5.1",\n', path="setup.py")
    commit(root, "bumps")
    assert only(root, node).stale is False


def test_requirements_are_read_by_their_package_names_in_packaging_files_only() -> None:
    before = [Unit('"watchgod>=0.6",', "", 1, 1, ("watchgod>=0.6",)), Unit("Django_Extensions ; python_version<'3.8'", "", 2, 2)]
    after = [Unit('"watchfiles>=0.13",', "", 1, 1, ("watchfiles>=0.13",)), Unit("django-extensions", "", 2, 2)]
    assert dropped(before, after, "watchgod reloads; django-extensions and watchfiles too") == ["watchgod"]
    assert dropped(before, after, "the reloader") == []
    assert is_packaging("setup.py") and is_packaging("a/requirements-dev.txt") and is_packaging("pyproject.toml")
    assert not is_packaging("app/settings.py")
