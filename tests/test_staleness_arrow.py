"""Staleness (issue 38): readings that came from the errors of the arrow replay, once it joined the tuning side,
each with real git and files on both sides (no flag, and a flag). A property's deprecation warning that names what
it will be made compatible with (``datetime.timestamp()``) deprecates that property only; a message the node quotes
as the ``.format`` template it was, now an f-string that gains a final stop."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

from autology_mcp.knowledge.trust.code_compare import named_deprecated

MOMENT = '''import calendar
import warnings
from datetime import datetime


class Moment:
    def __init__(self, dt):
        self._datetime = dt

    @property
    def timestamp(self):
        return calendar.timegm(self._datetime.utctimetuple())

    def is_between(self, start, end):
        if not isinstance(start, Moment) or not isinstance(end, Moment):
            raise TypeError("start and end must be Moment objects")
        return start._datetime < self._datetime < end._datetime
'''

BETWEEN = ("`Moment.is_between(start, end)` requires both to be `Moment` instances (a plain `datetime` raises "
           "TypeError) and compares the wrapped datetimes, bounds excluded.")
TIMESTAMP = "`Moment.timestamp` is an int property: seconds since the epoch in UTC, via `calendar.timegm`."
WARNING = ('''        warnings.warn(
            "For compatibility with the datetime.timestamp() method this property will be replaced with a method in "
            "the 2.0 release, please switch to the .int_timestamp property.",
            DeprecationWarning,
        )
        return calendar.timegm''')


def test_what_a_deprecated_property_is_made_compatible_with_is_not_deprecated(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "pkg/moment.py", MOMENT, "moment")
    between = capture(root, ["pkg/moment.py#Moment.is_between"], BETWEEN, "Moment.is_between: bounds excluded",
                      type="component")
    timestamp = capture(root, ["pkg/moment.py#Moment.timestamp"], TIMESTAMP, "Keep Moment.timestamp an int property",
                        type="convention")
    commit(root, "record")
    edit(root, "        return calendar.timegm", WARNING, path="pkg/moment.py")
    commit(root, "deprecate the timestamp property")
    assert only(root, timestamp).stale is True  # the property the warning is raised in is deprecated
    assert only(root, between).stale is False  # `datetime` is only named as what it will be compatible with


def test_a_name_that_only_qualifies_another_in_a_deprecation_message_is_not_deprecated() -> None:
    names = {"datetime", "parser", "split", "Arrow"}
    assert named_deprecated("'parser.split' is deprecated, use 'shell.split'", names) == {"split"}
    assert named_deprecated("Arrow.range is deprecated", names) == set()
    assert named_deprecated("Arrow is deprecated", names) == {"Arrow"}


LOCALES = '''def get_locale(name):
    locale_cls = _locales.get(name.lower())
    if locale_cls is None:
        raise ValueError(f"Unsupported locale '{name}'")
    return locale_cls()


_locales = {}
'''

QUOTED = ("An unknown name raises `ValueError(\"Unsupported locale '{}'\".format(name))`, e.g. "
          "\"Unsupported locale 'en-us'\".")
UNQUOTED = "`get_locale(name)` lower-cases `name` and looks it up in `_locales`; an unknown name raises ValueError."


def test_a_message_quoted_as_its_format_template_is_a_flag_when_it_gains_a_final_stop(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "pkg/locales.py", LOCALES, "locales")
    quoted = capture(root, ["pkg/locales.py#get_locale"], QUOTED, "Unknown locales raise ValueError", type="convention")
    unquoted = capture(root, ["pkg/locales.py#get_locale"], UNQUOTED, "Locale lookup", type="component")
    commit(root, "record")
    edit(root, "locale '{name}'\")", "locale '{name}'.\")", path="pkg/locales.py")
    commit(root, "end error messages with a full stop")
    assert only(root, quoted).stale is True  # the text it quotes, "...'{}'" with no stop, is not the message now
    assert only(root, unquoted).stale is False  # still a ValueError; the node quotes no message
