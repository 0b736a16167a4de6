"""Staleness (issue 38): the readings that came from the errors of the yarl replay, once it joined the tuning side,
each with real git and files on both sides (no flag, and a flag). A symbol whose values moved into a cached helper it
now calls; a parameter gained whose default is a value the node gives; a span's method defined once per Python
version under an ``if``; a span's lines moved into a helper its function now calls."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

HOST = '''class URL:
    @property
    def host(self):
        raw = self.raw_host
        if raw is None:
            return None
        try:
            return idna.decode(raw.encode("ascii"))
        except UnicodeError:
            return raw.encode("ascii").decode("idna")
'''

HOST_HELPER = '''@functools.lru_cache(256)
def _idna_decode(raw):
    try:
        return idna.decode(raw.encode("ascii"))
    except UnicodeError:
        return raw.encode("ascii").decode("idna")


class URL:
    @property
    def host(self):
        raw = self.raw_host
        if raw is None:
            return None
        return _idna_decode(raw)
'''


def test_values_moved_into_a_helper_it_now_calls_are_still_held(tmp_path: Path) -> None:
    """The decoding moved into a cached ``_idna_decode(raw)`` that ``host`` now calls: the ``'ascii'`` and
    ``'idna'`` the node states are still its code's. The helper's fallback changed to another codec is a flag."""
    root = one_file_repo(tmp_path / "h", "pkg/url.py", HOST, "host")
    node = capture(root, ["pkg/url.py#URL.host"], "`URL.host` returns `idna.decode(raw.encode('ascii'))`, and on "
                   "UnicodeError falls back to the codec, 'idna'.", "host decodes IDNA", type="component")
    commit(root, "record")
    (root / "pkg/url.py").write_text(HOST_HELPER)
    commit(root, "a cached helper")
    assert only(root, node).stale is False
    edit(root, 'return raw.encode("ascii").decode("idna")', 'return raw.encode("ascii").decode("punycode")',
         path="pkg/url.py")
    commit(root, "punycode")
    assert only(root, node).stale is True


QUOTER = '''class Quoter:
    def __init__(self, *, safe="", qs=False):
        self._safe = safe
        self._qs = qs

    def __call__(self, val):
        return quote(val, self._safe, plus=self._qs)
'''


def test_the_default_of_a_gained_parameter_is_the_new_option_s(tmp_path: Path) -> None:
    """``requote=True`` added last: the ``True`` the node gives (``qs=True``) is not what changed. The default of
    ``qs`` itself made ``True`` is a flag."""
    root = one_file_repo(tmp_path / "q", "pkg/quoting.py", QUOTER, "quoter")
    node = capture(root, ["pkg/quoting.py#Quoter"], "`Quoter(*, safe='', qs=False)` percent-encodes a str; with "
                   "`qs=True` a space becomes '+'.", "Quoter percent-encodes", type="component")
    commit(root, "record")
    edit(root, 'def __init__(self, *, safe="", qs=False):\n        self._safe = safe\n',
         'def __init__(self, *, safe="", qs=False, requote=True):\n        self._safe = safe\n'
         '        self._requote = requote\n', path="pkg/quoting.py")
    commit(root, "requote")
    assert only(root, node).stale is False
    edit(root, 'qs=False, requote=True', 'qs=True, requote=True', path="pkg/quoting.py")
    commit(root, "qs by default")
    assert only(root, node).stale is True


ENCODE = '''class URL:
    @classmethod
    def _encode_host(cls, host):
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except UnicodeError:
            host = host.encode("idna").decode("ascii")
        return host
'''

ENCODE_VERSIONS = '''class URL:
    if sys.version_info >= (3, 7):

        @classmethod
        def _encode_host(cls, host):
            if host.isascii():
                return host
            try:
                host = idna.encode(host, uts46=True).decode("ascii")
            except UnicodeError:
                host = host.encode("idna").decode("ascii")
            return host

    else:

        @classmethod
        def _encode_host(cls, host):
            try:
                host = idna.encode(host, uts46=True).decode("ascii")
            except UnicodeError:
                host = host.encode("idna").decode("ascii")
            return host
'''

ENCODE_HELPER = '''def _idna_encode(host):
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except UnicodeError:
        return host.encode("idna").decode("ascii")


class URL:
    @classmethod
    def _encode_host(cls, host):
        return _idna_encode(host)
'''

DECISION = ("## Context\nHost names need IDNA 2008.\n\n## Decision\nHosts are encoded with `idna.encode(host, "
            "uts46=True)`, falling back to the 'idna' codec on UnicodeError.\n\n## Alternatives\nThe codec alone.\n\n"
            "## Consequences\nA dependency on idna.")


def test_a_span_defined_once_per_python_version_or_moved_into_a_helper_is_followed(tmp_path: Path) -> None:
    """The span's lines (the ``try`` of ``_encode_host``) re-indented under ``if sys.version_info >= (3, 7):`` and
    repeated in the ``else``: the same code in the function of that name. Then moved into ``_idna_encode(host)``,
    which ``_encode_host`` now calls, as ``return`` statements: still the lines the node describes. The helper that
    drops ``uts46=True`` is a flag."""
    root = one_file_repo(tmp_path / "e", "pkg/url.py", ENCODE, "encode")
    node = capture(root, ["pkg/url.py#L4-L7"], DECISION, "Hosts are encoded with the idna package", type="decision")
    commit(root, "record")
    (root / "pkg/url.py").write_text(ENCODE_VERSIONS)
    commit(root, "isascii on 3.7")
    assert only(root, node).stale is False
    (root / "pkg/url.py").write_text(ENCODE_HELPER)
    commit(root, "one helper")
    assert only(root, node).stale is False
    edit(root, "idna.encode(host, uts46=True)", "idna.encode(host)", path="pkg/url.py")
    commit(root, "no uts46")
    assert only(root, node).stale is True
