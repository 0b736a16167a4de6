"""Staleness (issue 38): the readings that came from the errors of the httpie replay, once it joined the tuning side,
each with real git and files on both sides (no flag, and a flag). A statement added right after a span is not the
span's; a string constant built from others is the string it gives; a header the node writes as `Name: value`; an
import the node writes that the module no longer satisfies."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from test_staleness import commit, edit, one_file_repo, only, relate_and_commit
from test_staleness_sympy import capture

from autology_mcp.knowledge.trust.code_compare import composed_strings

OPTIONS = '''parser = make_parser()

parser.add_argument(
    '--pretty',
    dest='pretty',
    default='all',
    help="""Controls output processing.""",
)

parser.add_argument(
    '--style', '-s',
    dest='style',
    default=DEFAULT_STYLE,
    choices=AVAILABLE_STYLES,
    help="""
    Output coloring style (default is "{default}"). One of:

    {available_styles}
    """.format(
        default=DEFAULT_STYLE,
        available_styles=', '.join(sorted(AVAILABLE_STYLES)).rstrip(),
    )
)

parser.add_argument('--verbose', '-v', dest='verbose', action='store_true')
'''

STYLE = ("`--style` / `-s` (dest 'style') chooses the color style; it defaults to DEFAULT_STYLE and its choices are "
         "AVAILABLE_STYLES, listed sorted in the help.")


def test_an_option_added_after_the_span_is_not_the_spans(tmp_path: Path) -> None:
    """The --style option's help is reworded and a new option is added right after it, whose code holds words of the
    node's text ("defaults"): the span keeps what the node says. Its dest renamed is a flag."""
    root = one_file_repo(tmp_path / "o", "pkg/definition.py", OPTIONS, "options")
    node = capture(root, ["pkg/definition.py#L10-L23"], STYLE, "The --style option", type="component")
    commit(root, "record")
    edit(root, "One of:", "It can be one of:", path="pkg/definition.py")
    edit(root, ".rstrip(),\n    )\n)\n", ".strip(),\n    )\n)\n\nparser.add_argument(\n    '--format-options',\n"
         "    type=lambda s: parse_format_options(s=s, defaults=PARSED_DEFAULTS),\n"
         "    default=DEFAULT_FORMAT_OPTIONS,\n    help='Controls output formatting.',\n)\n", path="pkg/definition.py")
    commit(root, "--format-options")
    assert only(root, node).stale is False
    edit(root, "    dest='style',", "    dest='color_style',", path="pkg/definition.py")
    commit(root, "dest color_style")
    assert only(root, node).stale is True


CLIENT = '''import sys

FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded; charset=utf-8'
JSON_CONTENT_TYPE = 'application/json'
JSON_ACCEPT = f'{JSON_CONTENT_TYPE}, */*'
DEFAULT_UA = 'HTTPie/' + VERSION


def make_default_headers(args):
    headers = {'User-Agent': DEFAULT_UA}
    if args.json:
        headers['Accept'] = JSON_ACCEPT
        headers['Content-Type'] = JSON_CONTENT_TYPE
    return headers
'''

CONSTANTS = ("The default header values are module constants of client.py: `JSON_CONTENT_TYPE = 'application/json'` and "
             "`JSON_ACCEPT`, built from it as 'application/json, */*'.")
HEADERS = ("`make_default_headers(args)` always sets the User-Agent; with `--json` it sends "
           "`Accept: application/json, */*` and `Content-Type: application/json`.")


def test_a_constant_built_from_another_is_the_string_it_gives(tmp_path: Path) -> None:
    """``JSON_ACCEPT = f'{JSON_CONTENT_TYPE}, */*'`` gives 'application/json, */*', the value both nodes state (one as
    a header, `Accept: ...`). A constant they do not state changed: no flag. JSON_ACCEPT given a weight
    (`*/*;q=0.5`): the span's node and the function's are stale, though the function's own code is the same."""
    root = one_file_repo(tmp_path / "c", "pkg/client.py", CLIENT, "client")
    span = capture(root, ["pkg/client.py#L3-L6"], CONSTANTS, "Default header values", type="convention")
    function = capture(root, ["pkg/client.py#make_default_headers"], HEADERS, "make_default_headers")
    commit(root, "record")
    edit(root, "charset=utf-8'", "charset=UTF-8'", path="pkg/client.py")
    commit(root, "upper-case charset")
    assert only(root, span).stale is False
    assert only(root, function).stale is False
    edit(root, "f'{JSON_CONTENT_TYPE}, */*'", "f'{JSON_CONTENT_TYPE}, */*;q=0.5'", path="pkg/client.py")
    commit(root, "prefer JSON")
    assert only(root, span).stale is True
    assert only(root, function).stale is True
    assert "application/json, */*" in only(root, function).why


INIT = '''from pkg.plugins.base import AuthPlugin
from pkg.plugins.manager import PluginManager

plugin_manager = PluginManager()
'''

PLUGINS = ("Everything about plugins lives in pkg/plugins/: `base.py` has `AuthPlugin`, `manager.py` has `PluginManager`, "
           "and `__init__.py` creates the one registry, `plugin_manager = PluginManager()`. The rest of the code gets it "
           "with `from pkg.plugins import plugin_manager`.")


def _plugins_repo(root: Path) -> Path:
    repo = one_file_repo(root, "pkg/plugins/__init__.py", INIT, "plugins")
    (repo / "pkg/plugins/base.py").write_text("class AuthPlugin:\n    auth_type = None\n")
    (repo / "pkg/plugins/manager.py").write_text("class PluginManager(list):\n    pass\n")
    commit(repo, "the plugin modules")
    return repo


def test_an_import_the_node_writes_that_the_module_no_longer_satisfies(tmp_path: Path) -> None:
    """The registry moves to pkg/plugins/registry.py and ``__init__.py`` no longer binds ``plugin_manager``: the import
    the node gives no longer works (the name still lives in the folder, so it is not "gone")."""
    root = _plugins_repo(tmp_path / "i")
    node = capture(root, ["pkg/plugins/"], PLUGINS, "The plugin package", type="component")
    commit(root, "record")
    (root / "pkg/plugins/registry.py").write_text("from pkg.plugins.manager import PluginManager\n\n"
                                                  "plugin_manager = PluginManager()\n")
    (root / "pkg/plugins/__init__.py").write_text("from pkg.plugins.base import AuthPlugin\n")
    commit(root, "registry of its own, against circular imports")
    finding = only(root, node)
    assert finding.stale is True
    assert "from pkg.plugins import plugin_manager" in finding.why


def test_an_import_that_stopped_working_stays_a_flag_through_a_relate(tmp_path: Path) -> None:
    """The fingerprint records the imports that worked when the node was written: a relate committed after the move
    moves the node's base past it, and the flag stays."""
    root = _plugins_repo(tmp_path / "k")
    node = capture(root, ["pkg/plugins/"], PLUGINS, "The plugin package", type="component")
    other = capture(root, ["pkg/plugins/base.py"], "`AuthPlugin` sets `auth_type`.", "Auth plugins", type="convention")
    commit(root, "record")
    (root / "pkg/plugins/registry.py").write_text("from pkg.plugins.manager import PluginManager\n\n"
                                                  "plugin_manager = PluginManager()\n")
    (root / "pkg/plugins/__init__.py").write_text("from pkg.plugins.base import AuthPlugin\n")
    commit(root, "registry of its own")
    flagged = only(root, node).why
    relate_and_commit(root, node, other)
    assert only(root, node).stale is True
    assert only(root, node).why == flagged


def test_an_import_the_module_still_satisfies_by_a_re_export(tmp_path: Path) -> None:
    """The same move, with ``__init__.py`` importing the registry back, under a node that says only how the code gets
    the registry: its import still works."""
    root = _plugins_repo(tmp_path / "r")
    node = capture(root, ["pkg/plugins/"], "`manager.py` has `PluginManager`, a list of plugin classes. The code gets "
                   "the one registry with `from pkg.plugins import plugin_manager`.", "Getting the plugin registry",
                   type="convention")
    commit(root, "record")
    (root / "pkg/plugins/registry.py").write_text("from pkg.plugins.manager import PluginManager\n\n"
                                                  "plugin_manager = PluginManager()\n")
    (root / "pkg/plugins/__init__.py").write_text("from pkg.plugins.base import AuthPlugin\n"
                                                  "from pkg.plugins.registry import plugin_manager\n")
    commit(root, "registry of its own, re-exported")
    assert only(root, node).stale is False


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12), st.text(max_size=12),
       st.sampled_from(["f'{A}{B}' + C", "A + f'{B}' + C", "'{}{}'.format(A, B) + C", "'%s%s' % (A, B) + C",
                        "f'{A!s}' + B + C"]))
def test_a_composed_constant_is_what_python_makes_of_it(a: str, b: str, c: str, form: str) -> None:
    """:func:`composed_strings` gives the value Python computes for a constant built from others (whitespace
    collapsed, as every string value is)."""
    code = f"A = {a!r}\nB = {b!r}\nC = {c!r}\nD = {form}\n"
    tree = ast.parse(code)
    space: dict = {}
    exec(code, space)
    assert list(composed_strings(tree).values()) == [" ".join(space["D"].split())]


VERSION = '''from pkg.core import Schema

__version__ = '3.0.0rc4.dev0'
__version_info__ = tuple(LooseVersion(__version__).version)
__author__ = 'Steven Loria'
__all__ = ['Schema']
'''


def test_a_statement_taken_from_the_end_of_a_span_leaves_the_rest_its_own(tmp_path: Path) -> None:
    """``__author__``, the span's last line, is taken away: ``__version__`` and ``__version_info__`` are still the
    span's code, not statements added before it, so the node about them holds. The version's derivation changed
    is a flag."""
    root = one_file_repo(tmp_path / "v", "pkg/__init__.py", VERSION, "version")
    node = capture(root, ["pkg/__init__.py#L3-L5"], "The version is written once, as `__version__`, and "
                   "`__version_info__` is derived from it with `LooseVersion`.", "The version", type="convention")
    commit(root, "record")
    edit(root, "__author__ = 'Steven Loria'\n", "", path="pkg/__init__.py")
    commit(root, "no author")
    assert only(root, node).stale is False
    edit(root, "tuple(LooseVersion(__version__).version)", "(3, 0, 0)", path="pkg/__init__.py")
    commit(root, "a tuple")
    assert only(root, node).stale is True
