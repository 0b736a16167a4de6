"""Staleness (issue 38): a module of the project the node names by its dotted path, renamed or removed. The name at
the end lives on in the renamed module, so no other reading sees it; read from the uvicorn replay's errors once it
joined the tuning side (``uvicorn.subprocess`` into ``uvicorn._subprocess``, ``uvicorn.logging`` into
``uvicorn._logging``). Real git and files, both sides: a flag for a file and for a folder reference, and no flag
when the module became a package, when only the code stopped importing it, or for a dotted name that was never a
module (a logger's)."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, git, one_file_repo, only
from test_staleness_sympy import capture

from autology_mcp.knowledge.trust.mentions import dotted_paths
from autology_mcp.knowledge.trust.modules import holds_path

SUPERVISOR = '''import logging

from pkg.subprocess import get_subprocess

logger = logging.getLogger("pkg.error")


def start(target):
    logger.info("starting")
    return get_subprocess(target)
'''

SUBPROCESS = '''def get_subprocess(target):
    return target
'''


def project(root: Path) -> Path:
    root = one_file_repo(root, "pkg/supervisor.py", SUPERVISOR, "supervisor")
    (root / "pkg/subprocess.py").write_text(SUBPROCESS)
    commit(root, "the helper", when="2020-01-02T00:00:00Z")
    return root


NODE = ("The supervisor creates its children through `pkg.subprocess.get_subprocess` and logs to the pkg.error "
        "logger.")


def test_the_dotted_paths_a_node_gives() -> None:
    assert dotted_paths("through `pkg.subprocess.get_subprocess`, from pkg.logging; setup.py, app.run(), "
                        "https://example.com/a.b") == {"pkg.subprocess", "pkg.subprocess.get_subprocess", "pkg.logging"}
    assert holds_path("from pkg.subprocess import get_subprocess", "pkg.subprocess")
    assert not holds_path("from pkg.subprocesses import x; import xpkg.subprocess", "pkg.subprocess")


def test_a_module_the_node_names_renamed_is_a_flag(tmp_path: Path) -> None:
    """``pkg/subprocess.py`` renamed ``pkg/_subprocess.py`` and the import changed with it: ``get_subprocess`` is
    still there, but the path the node gives is no module now. The same for a reference to the folder."""
    root = project(tmp_path / "r")
    on_file = capture(root, ["pkg/supervisor.py"], NODE, "Children come from get_subprocess", type="component")
    on_folder = capture(root, ["pkg/"], NODE, "The package's supervisor", type="component")
    commit(root, "record")
    git(root, "mv", "pkg/subprocess.py", "pkg/_subprocess.py")
    edit(root, "from pkg.subprocess import", "from pkg._subprocess import", path="pkg/supervisor.py")
    commit(root, "private helper module")
    finding = only(root, on_file)
    assert finding.stale is True and "`pkg.subprocess` is gone" in finding.why
    assert "no module of the project has that path now" in finding.why
    finding = only(root, on_folder)
    assert finding.stale is True and "`pkg.subprocess` is gone" in finding.why


def test_a_module_made_a_package_or_no_longer_imported_is_not_this_flag(tmp_path: Path) -> None:
    """The module turned into a package (``pkg/subprocess/__init__.py``) under the same import: no flag. A logger's
    dotted name that was never a module, taken out of the code: not this reading (the node's logger is a string it
    does not quote)."""
    root = project(tmp_path / "p")
    node = capture(root, ["pkg/supervisor.py"], NODE, "Children come from get_subprocess", type="component")
    commit(root, "record")
    (root / "pkg/subprocess").mkdir()
    git(root, "mv", "pkg/subprocess.py", "pkg/subprocess/__init__.py")
    edit(root, '    logger.info("starting")\n', '    logger.info("starting %s", target)\n', path="pkg/supervisor.py")
    commit(root, "a package; the target logged")
    assert only(root, node).stale is False
    edit(root, 'logging.getLogger("pkg.error")', 'logging.getLogger(__name__)', path="pkg/supervisor.py")
    commit(root, "the module's own logger")
    finding = only(root, node)
    assert "is gone: no module" not in (finding.why or "")


def test_a_module_still_there_that_the_code_stopped_importing_is_not_this_flag(tmp_path: Path) -> None:
    """The supervisor imports ``get_subprocess`` from elsewhere while ``pkg/subprocess.py`` stays: the path the
    node gives is still a module of the project, so this reading says nothing."""
    root = project(tmp_path / "s")
    (root / "pkg/spawn.py").write_text(SUBPROCESS)
    commit(root, "a second helper")
    node = capture(root, ["pkg/supervisor.py"], NODE, "Children come from get_subprocess", type="component")
    commit(root, "record")
    edit(root, "from pkg.subprocess import", "from pkg.spawn import", path="pkg/supervisor.py")
    commit(root, "the other helper")
    finding = only(root, node)
    assert "is gone: no module" not in (finding.why or "")
