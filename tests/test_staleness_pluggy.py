"""Staleness (issue 38): readings that came from the errors of the pluggy replay, once it joined the tuning side,
each with real git and files on both sides (no flag, and a flag). A module imported under another alias; a node's
``**kwargs``; a signature the node writes as a qualified call; ``self`` used only to reach an attribute; a value
taken out of a span into a new constant; a folder whose modules the node counts; "exactly these four options"."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only, relate_and_commit
from test_staleness_sympy import capture

LOADER = '''import sys

if sys.version_info >= (3, 8):
    from importlib import metadata
else:
    import importlib_metadata as metadata


class Manager:
    def load(self, group):
        count = 0
        for dist in metadata.distributions():
            for ep in dist.entry_points:
                if ep.group == group:
                    self.register(ep.load(), ep.name)
                    count += 1
        return count
'''

LOAD = ("`Manager.load(group)` loops over the distributions() of importlib.metadata (or its backport) lazily, "
        "registering each entry point of the group; it returns the number loaded.")


def test_a_module_imported_under_another_alias_is_the_same_module(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/manager.py", LOADER, "manager")
    node = capture(root, ["src/manager.py#Manager.load"], LOAD, "Loading plugins from entry points", type="component")
    commit(root, "record")
    edit(root, "    from importlib import metadata\n", "    from importlib import metadata as importlib_metadata\n",
         path="src/manager.py")
    edit(root, "    import importlib_metadata as metadata\n", "    import importlib_metadata\n", path="src/manager.py")
    edit(root, "in metadata.distributions()", "in importlib_metadata.distributions()", path="src/manager.py")
    commit(root, "one name for the module on both branches")
    assert only(root, node).stale is False
    edit(root, "    import importlib_metadata\n", "    import pkg_resources as importlib_metadata\n", path="src/manager.py")
    edit(root, "    from importlib import metadata as importlib_metadata\n",
         "    import pkg_resources as importlib_metadata\n", path="src/manager.py")
    commit(root, "pkg_resources under the same name")
    assert only(root, node).stale is True  # another module: the name stayed, what it stands for did not


VARNAMES = '''import inspect


def varnames(func):
    try:
        spec = inspect.getfullargspec(func)
    except TypeError:
        return ()
    args, defaults = tuple(spec.args), spec.defaults
    if defaults:
        index = -len(defaults)
        args, defaults = args[:index], tuple(args[index:])
    else:
        defaults = ()
    return args, defaults
'''

STARRED = ("`varnames(func)` returns two tuples: the names of func's positional parameters without a default and those "
           "with one (`*args`, `**kwargs` and keyword-only parameters are ignored), read with `getfullargspec`.")
PLAIN = ("`varnames(func)` returns `args` and `kwargs`: the names of func's positional parameters without a default "
         "and those with one, read with `getfullargspec`.")


def test_kwargs_written_starred_names_a_catch_all_not_a_variable(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/hooks.py", VARNAMES, "hooks")
    starred = capture(root, ["src/hooks.py#varnames"], STARRED, "varnames(): argument names", type="component")
    plain = capture(root, ["src/hooks.py#varnames"], PLAIN, "varnames(): args and kwargs", type="component")
    commit(root, "record")
    edit(root, "args, defaults = args[:index], tuple(args[index:])", "args, kwargs = args[:index], tuple(args[index:])",
         path="src/hooks.py")
    edit(root, "        defaults = ()\n    return args, defaults", "        kwargs = ()\n    return args, kwargs",
         path="src/hooks.py")
    commit(root, "the second tuple is kwargs")
    assert only(root, starred).stale is False
    finding = only(root, plain)  # the node's `kwargs` is the code's name for the second tuple
    assert finding.stale is True and "`kwargs`" in finding.why


CALLER = '''import warnings


class HookCaller:
    def add_impl(self, impl):
        if impl.wrapper:
            methods = self._wrappers
        else:
            methods = self._plain
        if impl.trylast:
            methods.insert(0, impl)
        elif impl.tryfirst:
            methods.append(impl)
        else:
            methods.insert(len(methods), impl)
        if "__multicall__" in impl.argnames:
            warnings.warn("__multicall__ is deprecated", DeprecationWarning)
'''

ORDER = ("`HookCaller.add_impl(impl)` puts a wrapper in `_wrappers` and any other implementation in `_plain`; a "
         "trylast one is inserted at index 0, a tryfirst one appended at the end.")


NAMED = ("`impl`, a HookImpl, goes to `_wrappers` when it is a wrapper and to `_plain` otherwise; a trylast one is "
         "inserted at index 0, a tryfirst one appended at the end.")


def test_a_qualified_call_the_node_writes_is_the_symbols_signature(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/hooks.py", CALLER, "hooks")
    node = capture(root, ["src/hooks.py#HookCaller.add_impl"], ORDER, "Implementation call order", type="component")
    named = capture(root, ["src/hooks.py#HookCaller.add_impl"], NAMED, "Where an implementation goes", type="component")
    commit(root, "record")
    edit(root, '        if "__multicall__" in impl.argnames:\n'
               '            warnings.warn("__multicall__ is deprecated", DeprecationWarning)\n', "", path="src/hooks.py")
    commit(root, "drop the __multicall__ warning")
    assert only(root, node).stale is False  # `impl` is the signature's, used as before in every statement
    finding = only(root, named)  # a name the node gives for itself, not as the call's argument
    assert finding.stale is True and "`impl`" in finding.why


HOLDER = '''class HookCaller:
    def __init__(self, name, hook_execute):
        self.name = name
        self._wrappers = []
        self._hookexec = hook_execute
        self.multicall = None

    def add(self, x):
        return None
'''

HOLDS = ("`HookCaller(name, hook_execute)` keeps `_wrappers` and stores `hook_execute` as `self._hookexec`; "
         "`is_historic()` is `hasattr(self, \"_call_history\")`.")
RETURNS = "`HookCaller.add(x)` takes `x` and returns None, as `hasattr(self, \"x\")` tells."


def test_self_used_only_to_reach_an_attribute_is_not_a_use_of_it(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/hooks.py", HOLDER, "hooks")
    holds = capture(root, ["src/hooks.py#HookCaller.__init__"], HOLDS, "What a hook caller holds", type="component")
    returns = capture(root, ["src/hooks.py#HookCaller.add"], RETURNS, "add returns nothing", type="component")
    commit(root, "record")
    edit(root, "        self.multicall = None\n", "", path="src/hooks.py")
    commit(root, "no multicall attribute")
    assert only(root, holds).stale is False
    edit(root, "        return None\n", "        return self\n", path="src/hooks.py")
    commit(root, "add returns the caller, for chaining")
    assert only(root, returns).stale is True  # `self` as a value of its own


SETUP = '''from setuptools import setup


def main():
    setup(
        name="pluggy",
        python_requires=">=3.6",
        install_requires=[],
        extras_require={"dev": ["pre-commit", "tox"]},
        package_dir={"": "src"},
    )


if __name__ == "__main__":
    main()
'''

EXTRAS = ("## Context\npytest depends on pluggy.\n\n## Decision\nThe `setup()` call declares "
          "`python_requires=\">=3.6\"`; there is no install requirement and the `dev` extra is pre-commit and tox.\n\n"
          "## Alternatives\nNone.\n\n## Consequences\nSome.")


def test_a_value_taken_out_of_a_span_into_a_new_constant_is_still_there(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "setup.py", SETUP, "setup")
    node = capture(root, ["setup.py#L5-L11"], EXTRAS, "Python 3.6 and later", type="decision")
    commit(root, "record")
    edit(root, "\n\ndef main():", '\nEXTRAS_REQUIRE = {\n    "dev": ["pre-commit", "tox"],\n    "testing": ["pytest"],\n}\n'
                                 "\n\ndef main():", path="setup.py")
    edit(root, 'extras_require={"dev": ["pre-commit", "tox"]},', "extras_require=EXTRAS_REQUIRE,", path="setup.py")
    commit(root, "a testing extra; the extras in a constant")
    assert only(root, node).stale is False
    edit(root, '"dev": ["pre-commit", "tox"],', '"dev": ["pre-commit"],', path="setup.py")
    commit(root, "tox leaves the dev extra")
    assert only(root, node).stale is True


PACKAGE = ("src/pkg/ is one package made of three modules. `__init__.py` re-exports the public names, `hooks.py` "
           "holds the markers and `manager.py` holds the manager.")
WRONG = PACKAGE.replace("three modules", "four modules")


def test_a_module_added_to_a_folder_whose_modules_the_node_counts_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/pkg/__init__.py", "from .manager import Manager\n", "pkg")
    (root / "src/pkg/hooks.py").write_text("class Marker:\n    pass\n")
    (root / "src/pkg/manager.py").write_text("class Manager:\n    pass\n")
    commit(root, "three modules")
    counted = capture(root, ["src/pkg/"], PACKAGE, "The package and its modules", type="component")
    wrong = capture(root, ["src/pkg/"], WRONG, "The package, miscounted", type="component")
    commit(root, "record")
    (root / "src/pkg/py.typed").write_text("")
    (root / "src/pkg/tests").mkdir()
    (root / "src/pkg/tests/test_hooks.py").write_text("def test_marker():\n    pass\n")
    commit(root, "a marker file and a test")
    assert only(root, counted).stale is False  # no module of the package
    (root / "src/pkg/_result.py").write_text("class Result:\n    pass\n")
    commit(root, "the result object in a module of its own")
    finding = only(root, counted)
    assert finding.stale is True and "src/pkg/_result.py" in finding.why and "3 modules" in finding.why
    assert "added to" not in (only(root, wrong).why or "")  # a count that was not right at the base says nothing
    relate_and_commit(root, counted, wrong)  # a relate committed now moves the node's base past the new module
    finding = only(root, counted)
    assert finding.stale is True and "src/pkg/_result.py" in finding.why  # the fingerprint recorded the three


MARKER = '''class HookimplMarker:
    def __call__(self, function=None, hookwrapper=False, tryfirst=False, trylast=False):
        def setattr_hookimpl_opts(func):
            setattr(func, "pluggy_impl", dict(hookwrapper=hookwrapper, tryfirst=tryfirst, trylast=trylast))
            return func
        return setattr_hookimpl_opts if function is None else setattr_hookimpl_opts(function)
'''

EXACTLY = ("`HookimplMarker.__call__` stores exactly these three options, hookwrapper, tryfirst and trylast, in the "
           "`pluggy_impl` dict on the function; there is no option for the hook's name.")
LISTS = "`HookimplMarker.__call__` stores hookwrapper, tryfirst and trylast in the `pluggy_impl` dict on the function."


def test_a_parameter_added_where_the_node_says_exactly_these_options_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/hooks.py", MARKER, "hooks")
    exactly = capture(root, ["src/hooks.py#HookimplMarker.__call__"], EXACTLY, "An implementation is named like its hook",
                      type="issue")
    lists = capture(root, ["src/hooks.py#HookimplMarker.__call__"], LISTS, "The marker's options", type="component")
    commit(root, "record")
    edit(root, "trylast=False):", "trylast=False, specname=None):", path="src/hooks.py")
    edit(root, "trylast=trylast))", "trylast=trylast, specname=specname))", path="src/hooks.py")
    commit(root, "a specname option")
    finding = only(root, exactly)
    assert finding.stale is True and "`specname`" in finding.why
    assert only(root, lists).stale is False  # an optional parameter added is only an option
