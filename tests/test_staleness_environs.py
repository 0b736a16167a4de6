"""Staleness (issue 38): readings that came from the errors of the environs replay, once it joined the tuning side,
each with real git and files on both sides (no flag, and a flag). A last ``return None`` left out; a parameter added
to a function whose node counts them; a module added to a folder the node says holds one; a third-party import added
to an import block the node says imports only the standard library."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, git, one_file_repo, only
from test_staleness_sympy import capture

ENV = '''import os


class Env:
    def __init__(self, *, eager=True, expand_vars=False):
        self.eager = eager
        self.expand_vars = expand_vars
        self._prefix = None

    def add_parser(self, name, func):
        if hasattr(self, name):
            raise ParserConflictError(f"Env already has a method with name '{name}'. Use a different name.")
        self.__custom_parsers__[name] = _func2method(func, method_name=name)
        return None
'''

ADD_PARSER = ("`env.add_parser(name, func)` refuses a name the Env already has (`hasattr(self, name)`) with "
              "ParserConflictError, then stores `_func2method(func, method_name=name)` in `__custom_parsers__`; "
              "it returns None.")


def test_a_last_return_none_left_out_is_no_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/env.py", ENV, "env")
    node = capture(root, ["src/env.py#Env.add_parser"], ADD_PARSER, "Registering a custom parser", type="convention")
    commit(root, "record")
    edit(root, "        return None\n", "", path="src/env.py")
    commit(root, "RET501: no explicit return None")
    assert only(root, node).stale is False
    edit(root, "method_name=name)\n", "method_name=name)\n        return self\n", path="src/env.py")
    commit(root, "return the Env, for chaining")
    assert only(root, node).stale is True


COUNTED = ("`Env(*, eager=True, expand_vars=False)` takes these two keyword-only options and nothing else. It sets "
           "`eager`, `expand_vars`; `_prefix` starts as None.")
PLAIN = "`Env(*, eager=True, expand_vars=False)` sets `eager` and `expand_vars`; `_prefix` starts as None."


def test_a_parameter_added_where_the_node_counts_them_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/env.py", ENV, "env")
    counted = capture(root, ["src/env.py#Env.__init__"], COUNTED, "Env(): constructor options", type="component")
    plain = capture(root, ["src/env.py#Env.__init__"], PLAIN, "Env(): what it sets", type="component")
    commit(root, "record")
    edit(root, "expand_vars=False):", "expand_vars=False, prefix=None):", path="src/env.py")
    edit(root, "        self._prefix = None\n", "        self._prefix = prefix\n", path="src/env.py")
    commit(root, "a prefix parameter")
    sha = git(root, "rev-parse", "--short=9", "HEAD").strip()
    finding = only(root, counted)
    assert finding.stale is True and "`prefix`" in finding.why and sha in finding.why
    assert "`prefix`" not in (only(root, plain).why or "")  # an optional parameter added is only an option


FOLDER = ("src/env/ is the whole package: one module, `__init__.py`, plus the `py.typed` marker. There are no "
          "submodules.")
LAYOUT = "src/env/ holds the package: `__init__.py` and the `py.typed` marker."
PER_FORMAT = "src/env/ is the package. There is one module per format: `__init__.py` reads the environment."


def test_a_module_added_to_a_folder_the_node_says_holds_one_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/env/__init__.py", ENV, "env")
    (root / "src/env/py.typed").write_text("")
    commit(root, "typed")
    single = capture(root, ["src/env/"], FOLDER, "src/env/: a single-module package", type="component")
    layout = capture(root, ["src/env/"], LAYOUT, "src/env/: the package", type="component")
    per_format = capture(root, ["src/env/"], PER_FORMAT, "src/env/: a module per format", type="component")
    commit(root, "record")
    (root / "src/env/README.md").write_text("notes\n")
    commit(root, "a readme in the package")
    assert only(root, single).stale is False  # no module
    (root / "src/env/types.py").write_text("ErrorList = list\n")
    commit(root, "a types module")
    finding = only(root, single)
    assert finding.stale is True and "src/env/types.py" in finding.why
    assert only(root, layout).stale is False  # a node that does not say there is one module
    assert only(root, per_format).stale is False  # "one module per format" counts no modules


def test_a_module_renamed_in_a_single_module_folder_is_no_module_added(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/env/core.py", ENV, "env")
    single = capture(root, ["src/env/"], FOLDER.replace("`__init__.py`", "`core.py`"), "src/env/: one module",
                     type="component")
    commit(root, "record")
    git(root, "mv", "src/env/core.py", "src/env/main.py")
    commit(root, "core.py is main.py now")
    assert "added to" not in (only(root, single).why or "")


IMPORTS = '''import os
import re

import marshmallow as ma
from dotenv.main import load_dotenv


def parse():
    return os, re, ma, load_dotenv
'''

ONLY = ("## Context\nThe Django URL packages are optional.\n\n## Decision\nThe import block imports only "
        "standard-library modules, `import marshmallow as ma` and `from dotenv.main import load_dotenv`. Nothing "
        "optional is imported at import time.\n\n## Alternatives\nHard dependencies.\n\n## Consequences\n"
        "`import env` works with only python-dotenv and marshmallow installed.")


def test_a_third_party_import_added_to_an_only_import_block_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/env.py", IMPORTS, "env")
    node = capture(root, ["src/env.py#L1-L5"], ONLY, "Optional packages are never imported at import time",
                   type="decision")
    commit(root, "record")
    edit(root, "import re\n", "import re\nfrom datetime import timedelta\n", path="src/env.py")
    commit(root, "timedelta, from the standard library")
    assert only(root, node).stale is False
    edit(root, "from datetime import timedelta\n",
         "from datetime import timedelta\n\ntry:\n    import dj_email_url\nexcept ImportError:\n    dj_email_url = None\n",
         path="src/env.py")
    commit(root, "an optional import that may fail")
    assert only(root, node).stale is False
    edit(root, "import marshmallow as ma\n", "import marshmallow as ma\nfrom dj_database_url import DBConfig\n",
         path="src/env.py")
    commit(root, "DBConfig for the annotations")
    assert only(root, node).stale is True
