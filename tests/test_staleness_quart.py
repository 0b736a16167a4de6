"""Staleness (issue 38): the readings that came from the errors of the quart replay, once it joined the tuning side,
each with real git and files on both sides (no flag, and a flag). New definitions put among the statements of a line
span; a function's body moved into a helper that hands its variable back; a file gaining a name the node says it
does not have."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

SIGNALS = '''from blinker import Namespace

_signals = Namespace()

request_started = _signals.signal("request-started")

#: Called just after the websocket context is created
websocket_started = _signals.signal("websocket-started")

#: Called after a response is fully finalised
websocket_finished = _signals.signal("websocket-finished")

#: Called as the websocket context is torn down
websocket_tearing_down = _signals.signal("websocket-tearing-down")

message_flashed = _signals.signal("message-flashed")
'''

LIFECYCLE = ("signals.py defines the websocket signals, each with `_signals.signal(name)`: `websocket_started` "
             "(\"websocket-started\", just after the websocket context is created), `websocket_finished` "
             "(\"websocket-finished\", after the response is finalised) and `websocket_tearing_down` "
             "(\"websocket-tearing-down\", as the context is torn down).")

ADDED = '''
#: Called on receipt of a message over the websocket
websocket_received = _signals.signal("websocket-received")
'''


def _signals_node(tmp_path: Path, text: str) -> tuple[Path, str]:
    root = one_file_repo(tmp_path / "s", "pkg/signals.py", SIGNALS, "signals")
    node = capture(root, ["pkg/signals.py#L7-L14"], text, "The websocket lifecycle signals", type="component")
    commit(root, "record")
    return root, node


def _add_received(root: Path, added: str = ADDED) -> None:
    edit(root, 'websocket_started = _signals.signal("websocket-started")\n',
         'websocket_started = _signals.signal("websocket-started")\n' + added, path="pkg/signals.py")
    commit(root, "websocket_received")


def test_a_signal_added_among_those_a_span_holds_leaves_them_as_the_node_says(tmp_path: Path) -> None:
    root, node = _signals_node(tmp_path, LIFECYCLE)
    _add_received(root)
    assert only(root, node).stale is False
    edit(root, '_signals.signal("websocket-finished")', '_signals.signal("websocket-done")', path="pkg/signals.py")
    commit(root, "renamed")
    assert only(root, node).stale is True  # one of the span's own statements changed


def test_an_added_definition_the_node_names_or_counts_is_a_flag(tmp_path: Path) -> None:
    """The node says the span has no `websocket_received`, or says how many signals there are: what it says of the
    span's statements no longer holds when one is added."""
    named, _ = _signals_node(tmp_path / "a", LIFECYCLE + " `websocket_received` is the request side's only.")
    _add_received(named)
    assert only(named, _).stale is True
    counted, node = _signals_node(tmp_path / "b", LIFECYCLE.replace("the websocket signals", "three websocket signals"))
    _add_received(counted)
    assert only(counted, node).stale is True


def test_a_statement_added_among_them_that_is_no_definition_is_a_flag(tmp_path: Path) -> None:
    root, node = _signals_node(tmp_path, LIFECYCLE)
    _add_received(root, "websocket_started.connect(print)\n")
    assert only(root, node).stale is True


JSON = '''import json


def dumps(object_, app=None, **kwargs):
    if app is None:
        app = current_app()
    kwargs.setdefault("sort_keys", app.config["JSON_SORT_KEYS"])
    kwargs.setdefault("cls", app.json_encoder)
    return json.dumps(object_, **kwargs)
'''

DUMPS = ("`dumps(object_, app=None, **kwargs)` serialises with the json module and the app's defaults: without `app` "
         "it takes the current app; `sort_keys` defaults to `JSON_SORT_KEYS` and the encoder class to "
         "`app.json_encoder`. Explicit kwargs win (setdefault), and the result is `json.dumps(object_, **kwargs)`.")

SPLIT = '''import json


def _dump_arg_defaults(kwargs, app=None):
    if app is None:
        app = current_app()
    kwargs.setdefault("sort_keys", app.config["JSON_SORT_KEYS"])
    kwargs.setdefault("cls", app.json_encoder)
    return kwargs


def dumps(object_, app=None, **kwargs):
    kwargs = _dump_arg_defaults(kwargs, app)
    return json.dumps(object_, **kwargs)


def dump(object_, fp, app=None, **kwargs):
    kwargs = _dump_arg_defaults(kwargs, app)
    json.dump(object_, fp, **kwargs)
'''


def _json_node(tmp_path: Path, ref: str, text: str) -> tuple[Path, str]:
    root = one_file_repo(tmp_path / "j", "pkg/json.py", JSON, "json")
    node = capture(root, [ref], text, "quart.json.dumps with the app's defaults", type="component")
    commit(root, "record")
    return root, node


def test_a_body_moved_into_a_helper_that_hands_its_variable_back_is_the_same_code(tmp_path: Path) -> None:
    root, node = _json_node(tmp_path, "pkg/json.py#dumps", DUMPS)
    (root / "pkg/json.py").write_text(SPLIT)
    commit(root, "dump and load")
    assert only(root, node).stale is False
    edit(root, '"sort_keys", app.config["JSON_SORT_KEYS"]', '"sort_keys", False', path="pkg/json.py")
    commit(root, "sort_keys off")
    assert only(root, node).stale is True


def test_moved_into_a_helper_and_changed_on_the_way_is_a_flag(tmp_path: Path) -> None:
    root, node = _json_node(tmp_path, "pkg/json.py#dumps", DUMPS)
    (root / "pkg/json.py").write_text(SPLIT.replace('"sort_keys", app.config["JSON_SORT_KEYS"]', '"sort_keys", True'))
    commit(root, "dump and load, sorted")
    assert only(root, node).stale is True


STRINGS_ONLY = ("Application code encodes JSON with pkg.json: `dumps` fills in the app's defaults. It has string "
                "functions only: there is no `dump()` taking a file object as the json module has.")


def test_a_file_gaining_a_name_the_node_says_it_has_not_is_a_flag(tmp_path: Path) -> None:
    root, node = _json_node(tmp_path, "pkg/json.py", STRINGS_ONLY)
    (root / "pkg/json.py").write_text(SPLIT)
    commit(root, "dump and load")
    finding = only(root, node)
    assert finding.stale is True and "`dump`, which the node says it has not, is in pkg/json.py now" in finding.why


def test_a_file_gaining_a_name_the_node_does_not_deny_is_no_flag(tmp_path: Path) -> None:
    root, node = _json_node(tmp_path, "pkg/json.py", STRINGS_ONLY.replace("there is no `dump()`", "use `dumps()`"))
    (root / "pkg/json.py").write_text(SPLIT)
    commit(root, "dump and load")
    assert only(root, node).stale is False
