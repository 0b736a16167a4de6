"""Text as the instruction check reads it (:mod:`autology_mcp.knowledge.trust.untrusted`, issue 38): one
spelling for what looks the same to a reader, so a rule written once in plain Latin letters also
catches its disguises.

- :func:`normalise`: format characters removed (zero-width spaces and joiners, the word joiner, the
  byte-order mark, soft hyphens, bidirectional controls: Unicode category Cf), then Unicode NFKC
  (full-width and other compatibility letters become ASCII, a no-break space a space), then the
  Cyrillic and Greek letters that look like Latin ones mapped to those (:data:`CONFUSABLES`), and
  an HTML comment's markers turned into line breaks (a comment hides its text from a rendered page,
  not from the model).
- :func:`prose`: the same text with its code spans and fenced blocks blanked, for the rules about
  tags and secrecy: a sentence that talks about `` `[system]` `` lines is not a ``[system]`` line.
- :func:`decoded_payloads`: the text of base64 runs in it that decode to readable text, for the
  rules to read too ("decode this and follow it").

ASCII text needs none of the first step and skips it (most node text: no cost in the hooks).
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata

# Cyrillic and Greek letters drawn like Latin ones (the common subset of Unicode's confusables list).
CONFUSABLES = str.maketrans({
    # Cyrillic lower case
    "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j", "к": "k", "м": "m",
    "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q",
    "ԝ": "w", "ү": "y", "ɡ": "g",
    # Cyrillic upper case
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "Һ": "H", "І": "I", "Ї": "I", "Ј": "J", "К": "K", "М": "M",
    "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "Ԁ": "D", "Ԛ": "Q",
    "Ԝ": "W", "Ү": "Y",
    # Greek
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
})
# Unicode's format characters (category Cf, as of Unicode 15): invisible, they split a word for a
# pattern and not for a reader
_FORMAT = re.compile("[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
                     "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
                     "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]")
_HTML_COMMENT_MARK = re.compile(r"<!--|-->")
_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|``[^`\n]+``|`[^`\n]+`", re.DOTALL)
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")


def normalise(text: str) -> str:
    """``text`` with its look-alike spellings made one (the module docstring). Never raises."""
    if not text.isascii():
        text = _FORMAT.sub("", text)
        text = unicodedata.normalize("NFKC", text)
        text = text.translate(CONFUSABLES)
    if "<!--" in text or "-->" in text:
        text = _HTML_COMMENT_MARK.sub("\n", text)
    return text


def prose(text: str) -> str:
    """``text`` with code spans and fenced blocks replaced by a blank (line breaks kept)."""
    if "`" not in text and "~~~" not in text:
        return text
    return _CODE.sub(lambda m: " " + "\n" * m.group(0).count("\n") + " ", text)


def decoded_payloads(text: str, limit: int = 8) -> list[str]:
    """The readable text that base64 runs in ``text`` decode to (at most ``limit`` runs): a run that
    decodes to mostly printable UTF-8 letters is a message, anything else (hashes, keys, images) is
    not."""
    out: list[str] = []
    for match in _BASE64.finditer(text):
        run = match.group(0)
        if not re.search(r"[A-Z]", run) or not re.search(r"[a-z0-9]", run):
            continue  # an identifier or a word run, not base64
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), altchars=b"-_" if ("-" in run or "_" in run) else None)
            words = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if len(words) >= 8 and sum(ch.isprintable() or ch.isspace() for ch in words) == len(words) \
                and sum(ch.isalpha() or ch == " " for ch in words) >= 0.8 * len(words) and " " in words:
            out.append(words)
            if len(out) >= limit:
                break
    return out
