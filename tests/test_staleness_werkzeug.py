"""Staleness (issue 38), the werkzeug classes: the words of a node's title count whatever their length, folded
(``SHA-1`` as ``sha1``), also in a method its class gained; a deprecation message that quotes names deprecates
only what it quotes; a one-character span in backticks (`q`) is a span. Real git and files on both sides (a
flag, and no flag)."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

from autology_mcp.knowledge.trust.mentions import Said, mentions, term


PIN = '''import hashlib


def hash_pin(pin):
    salted = f"{pin} added salt"
    return hashlib.sha1(salted.encode("utf-8")).hexdigest()[:12]
'''


def test_a_word_of_the_title_counts_whatever_its_length_and_however_it_is_written(tmp_path: Path) -> None:
    """"stores a SHA-1 prefix" in the title: ``hashlib.sha1`` now ``hashlib.sha3_256`` is what the node says,
    though "SHA" is three letters and the code writes it ``sha1``. A statement added that uses none of the
    title's words (a log line), and the same change under a node whose title does not say SHA-1, are
    information."""
    assert term("SHA-1") == term("sha1") == "sha1" and term("If-Range") == term("IfRange") == term("if_range")
    root = one_file_repo(tmp_path / "pin", "pkg/pin.py", PIN, "pin")
    body = "`hash_pin(pin)` hashes the PIN with an added salt, hex, and keeps the first 12 characters."
    titled = capture(root, ["pkg/pin.py#hash_pin"], body, "hash_pin stores a SHA-1 prefix", type="pattern")
    plain = capture(root, ["pkg/pin.py#hash_pin"], body, "hash_pin keeps a short prefix", type="pattern")
    commit(root, "record")
    edit(root, "    salted = f\"{pin} added salt\"\n", "    salted = f\"{pin} added salt\"\n    log.debug(\"hashing\")\n",
         path="pkg/pin.py")
    commit(root, "a log line")
    assert only(root, titled).stale is False
    assert only(root, plain).stale is False
    edit(root, "hashlib.sha1(", "hashlib.sha3_256(", path="pkg/pin.py")
    commit(root, "sha3-256")
    finding = only(root, titled)
    assert finding.stale is True and "`sha1`" in finding.why
    assert only(root, plain).stale is False  # no word of it: the hash is not what it says


RANGE = '''class IfRange:
    def __init__(self, etag=None, date=None):
        self.etag = etag
        self.date = date

    def to_header(self):
        if self.date is not None:
            return format_date(self.date)
        return quote(self.etag) if self.etag else ""
'''


def test_a_method_the_class_gained_counts_for_the_words_of_the_title(tmp_path: Path) -> None:
    """A method the class gained that the node does not name is new code beside what it describes: parsing
    moved into ``from_header`` is information. When that method now tests ``weak``, a word of the title "a
    weak ETag is kept as a strong one", what the node says may no longer hold."""
    root = one_file_repo(tmp_path / "range", "pkg/range.py", RANGE, "range")
    node = capture(root, ["pkg/range.py#IfRange"], "`IfRange` holds an `etag` or a `date`. A weak validator is not "
                   "rejected: its prefix is dropped and the tag is kept.", "If-Range: a weak ETag is kept as a strong one",
                   type="concept")
    commit(root, "record")
    (root / "pkg" / "range.py").write_text(RANGE + '''
    @classmethod
    def from_header(cls, value):
        if (date := parse_date(value)) is not None:
            return cls(date=date)
        return cls(unquote(value)[0])
''')
    commit(root, "parse in the class")
    assert only(root, node).stale is False
    edit(root, "        return cls(unquote(value)[0])\n", "        value, weak = unquote(value)\n        if weak:\n"
         "            return cls()\n        return cls(value)\n", path="pkg/range.py")
    commit(root, "a weak etag is discarded")
    finding = only(root, node)
    assert finding.stale is True and "`weak`" in finding.why


HTTP = '''import hashlib

_STATUS_CODES = {200: "OK"}


def generate_etag(data):
    return hashlib.md5(data).hexdigest()
'''


def test_a_deprecation_message_that_quotes_names_deprecates_only_what_it_quotes(tmp_path: Path) -> None:
    """"The 'STATUS_CODES' data is deprecated" deprecates ``STATUS_CODES``, not the ``data`` a node on
    ``generate_etag(data)`` names; "'generate_etag' is deprecated" deprecates the function."""
    root = one_file_repo(tmp_path / "http", "pkg/http.py", HTTP, "http")
    node = capture(root, ["pkg/http.py#generate_etag"], "`generate_etag(data)` is the MD5 hex digest of `data`.",
                   "generate_etag is an MD5 digest", type="component")
    commit(root, "record")
    (root / "pkg" / "http.py").write_text(HTTP + '''

def __getattr__(name):
    if name == "STATUS_CODES":
        warnings.warn("The 'STATUS_CODES' data is deprecated. Use 'HTTPStatus' instead.", DeprecationWarning)
        return _STATUS_CODES
    raise AttributeError(name)
''')
    commit(root, "STATUS_CODES deprecated")
    assert only(root, node).stale is False
    edit(root, "    return hashlib.md5(data).hexdigest()\n", "    warnings.warn(\"'generate_etag' is deprecated.\", "
         "DeprecationWarning)\n    return hashlib.md5(data).hexdigest()\n", path="pkg/http.py")
    commit(root, "generate_etag deprecated")
    finding = only(root, node)
    assert finding.stale is True and "`generate_etag` is deprecated" in finding.why


HEADERS = '''class Headers:
    def set(self, key, value):
        if key and value:
            self._list.append((key, value))


def add(headers, key, value):
    headers.set(key, value)
'''


def test_a_one_character_span_in_backticks_is_a_span_and_not_the_start_of_another(tmp_path: Path) -> None:
    """"for `*`" no longer opens a span that runs to the next backtick, reading the prose between ("and",
    "the") as names: a deprecation message "Passing bytes and the rest is deprecated" names none of them. A
    name in backticks after it still counts."""
    names, _ = mentions("Tags kept apart, plus `star_tag` for `*`. An item whose `q` is not a number, and the "
                        "rest, is skipped; `contains(etag)` compares.")
    assert "star_tag" in names and "contains" in names and not names & {"and", "the", "rest", "not", "for"}
    root = one_file_repo(tmp_path / "headers", "pkg/headers.py", HEADERS, "headers")
    node = capture(root, ["pkg/headers.py#Headers"], "`Headers` keeps `*` and the rest apart; `set` stores an item "
                   "whose `q` is 0 as given.", "Headers keeps items in order", type="component")
    commit(root, "record")
    edit(root, "    headers.set(key, value)\n", "    if isinstance(value, bytes):\n        warnings.warn(\"Passing bytes "
         "and the rest is deprecated.\", DeprecationWarning)\n    headers.set(key, value)\n", path="pkg/headers.py")
    commit(root, "bytes deprecated")
    assert only(root, node).stale is False
    edit(root, "    def set(self, key, value):\n", "    def set(self, key, value):\n        warnings.warn(\"'set' is "
         "deprecated.\", DeprecationWarning)\n", path="pkg/headers.py")
    commit(root, "set deprecated")
    finding = only(root, node)
    assert finding.stale is True and "`set`" in finding.why


SECURITY = '''import secrets

CHARS = "abcdef0123456789"


def gen_salt(length):
    if length <= 0:
        raise ValueError("Salt length must be at least 1.")
    return "".join(secrets.choice(CHARS) for _ in range(length))


def generate_password_hash(password, salt_length=16):
    salt = gen_salt(salt_length)
    return f"{salt}${digest(salt, password)}"
'''


def test_a_helper_it_called_moved_into_it_is_its_code_as_before(tmp_path: Path) -> None:
    """The check of ``gen_salt`` moved into the function that called it, ``gen_salt`` gone: the ValueError and
    the message the node quotes are the same statement as before, not a new use. A check with another message
    is a flag."""
    root = one_file_repo(tmp_path / "security", "pkg/security.py", SECURITY, "security")
    node = capture(root, ["pkg/security.py#generate_password_hash"], "`generate_password_hash(password, "
                   "salt_length=16)` returns the salt and the digest together. A salt_length below 1 is refused with "
                   "ValueError(\"Salt length must be at least 1.\").", "generate_password_hash stores salt and digest",
                   type="component")
    commit(root, "record")
    text = (root / "pkg" / "security.py").read_text()
    start, end = text.index("def gen_salt"), text.index("def generate_password_hash")
    (root / "pkg" / "security.py").write_text(text[:start] + text[end:])
    edit(root, "    salt = gen_salt(salt_length)\n", "    if salt_length <= 0:\n        raise ValueError(\"Salt length must "
         "be at least 1.\")\n\n    salt = secrets.token_urlsafe(salt_length)\n", path="pkg/security.py")
    commit(root, "the salt from token_urlsafe")
    assert only(root, node).stale is False
    edit(root, "raise ValueError(\"Salt length must be at least 1.\")", "raise ValueError(\"Salt length is too short.\")",
         path="pkg/security.py")
    commit(root, "another message")
    assert only(root, node).stale is True


ETAG = '''class Response:
    def add_etag(self, overwrite=False):
        if overwrite or "ETag" not in self.headers:
            self.set_etag(generate_etag(self.get_data()))
'''


def test_a_string_in_other_letter_case_is_the_same_string(tmp_path: Path) -> None:
    """"ETag" written "etag" (header names ignore case) is not the string the node writes taken away; "ETag"
    taken away for "If-Match" is a flag."""
    root = one_file_repo(tmp_path / "etag", "pkg/response.py", ETAG, "etag")
    node = capture(root, ["pkg/response.py#Response.add_etag"], "`Response.add_etag(overwrite=False)` sets an ETag "
                   "from the whole body, unless the response has one and `overwrite` is false.",
                   "add_etag hashes the whole body", type="component")
    commit(root, "record")
    edit(root, '"ETag" not in self.headers', '"etag" not in self.headers', path="pkg/response.py")
    commit(root, "lower case")
    assert only(root, node).stale is False
    edit(root, '"etag" not in self.headers', '"If-Match" not in self.headers', path="pkg/response.py")
    commit(root, "another header")
    assert only(root, node).stale is True


HOSTS = '''import re

_host_re = re.compile(
    r"""
    (
        [a-z0-9.-]+  # domain or ipv4
    )
    (?::[0-9]+)?  # optional port
    """,
    flags=re.ASCII | re.VERBOSE,
)
'''


def test_a_string_the_node_gives_a_piece_of_as_code_is_what_it_describes(tmp_path: Path) -> None:
    """A node that gives the regular expression's character class ``[a-z0-9.-]`` describes that string: named
    groups added to it are a flag, though the class is still there. The same change under a node that gives
    no piece of it is information. (A verbose expression's comment is in the string: reworded, it is a flag for
    the first node too.)"""
    root = one_file_repo(tmp_path / "hosts", "pkg/hosts.py", HOSTS, "hosts")
    node = capture(root, ["pkg/hosts.py#L3-11"], "`_host_re` checks a domain of `[a-z0-9.-]` and an optional port; it "
                   "captures nothing useful.", "_host_re validates and captures nothing", type="concept")
    other = capture(root, ["pkg/hosts.py#L3-11"], "`_host_re` is the character check for hosts.", "_host_re validates",
                    type="concept")
    commit(root, "record")
    edit(root, "    (\n        [a-z0-9", "    (?P<hostname>\n        [a-z0-9", path="pkg/hosts.py")
    edit(root, "(?::[0-9]+)?", "(?P<port>:[0-9]+)?", path="pkg/hosts.py")
    commit(root, "named groups")
    assert only(root, node).stale is True
    assert only(root, other).stale is False
