"""Remove secrets from text before anything is written or indexed: session transcripts, and commit messages.

Common credential shapes are replaced by ``[REDACTED:<kind>]``: provider API keys and tokens
(OpenAI/Anthropic ``sk-…``, GitHub ``ghp_…``/``github_pat_…``, Slack ``xox…``, AWS ``AKIA…`` and
40-character secret keys even in prose, Google ``AIza…``, Stripe, GitLab, npm, PyPI, Hugging Face,
SendGrid ``SG.…``, Mailgun, Telegram, Discord, Shopify, Vault ``hvs.``/``hvb.``/``hvr.``), JWTs,
bearer/basic authorization values, private key blocks (also the tail of one whose BEGIN line came in
an earlier message), passwords in URLs (``scheme://user:password@host``), on command lines (``mysql
-pPASS``, ``sshpass -p``, ``docker login -p``, ``curl -u user:PASS``, ``redis-cli -a PASS``,
``REDISCLI_AUTH=``), in netrc and prose (``password PASS``, ``my password is PASS``: a value with a
digit or a symbol; ``the API key KEY``: 16+ characters with letters and digits), docker's and npm's
``auth`` value when it is base64 of ``user:password``, and ``password=…``-style assignments (also
``--password …`` flags, JSON ``"api_key": "…"``, ``AccountKey=``, ``SESSION_COOKIE=``).
It is pattern-based, so it errs on the side of redacting: a variable named ``token`` assigned a
literal loses the literal. Redaction is idempotent: redacting redacted text changes nothing.

Measured in bench/redaction.py (docs/benchmarks.md): no leak in the 51 forms of the corpus the rules
were tuned on, nor in the 20 forms of the first held-out set (the 4 of them that leaked were tuned on
in issue 29); 22 of the 30 forms of a fresh held-out set, written from vendors' documentation before
issue 29's rules and never tuned on, leak (23 before those rules). detect-secrets, measured beside
it, leaks in 27, 12 and 25.
What the patterns miss must not reach git: the committed session node holds summarised text only
(:func:`autology_mcp.sessions.session_node.summarised`).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any

MARK = "[REDACTED:{}]"

_KEY_WORDS = (
    r"pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"client[_-]?secret|auth[_-]?token|credentials?|session[_-]?key|signing[_-]?key|secret[_-]?key|"
    r"encryption[_-]?key|master[_-]?key|account[_-]?key|shared[_-]?access[_-]?key|cookie"
)
# A value that looks like a password, not a word: it holds a digit or a symbol (``is valid`` stays).
_PASSWORD_VALUE = r"(?=[^\s]*[\d!@#$%^&*])[^\s\"'`]{6,}"

# (kind, pattern, replacement). Order matters: whole blocks and specific shapes before generic ones.
_RULES: list[tuple[str, re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        MARK.format("private_key"),
    ),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), MARK.format("jwt")),
    ("anthropic_or_openai_key", re.compile(r"\bsk-(?:ant-|proj-|live-|svcacct-)?[A-Za-z0-9_-]{20,}"), MARK.format("api_key")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"), MARK.format("github_token")),
    ("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), MARK.format("gitlab_token")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), MARK.format("slack_token")),
    ("slack_webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"), MARK.format("slack_webhook")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"), MARK.format("aws_access_key")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), MARK.format("google_api_key")),
    ("stripe_key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), MARK.format("stripe_key")),
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), MARK.format("npm_token")),
    ("pypi_token", re.compile(r"\bpypi-[A-Za-z0-9_-]{40,}"), MARK.format("pypi_token")),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), MARK.format("hf_token")),
    ("vault_token", re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}"), MARK.format("vault_token")),
    (
        "private_key_tail",  # the end of a key whose BEGIN line came in an earlier message
        re.compile(r"\A(?:(?!-----BEGIN).)*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", re.DOTALL),
        MARK.format("private_key"),
    ),
    ("sendgrid_key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"), MARK.format("sendgrid_key")),
    ("mailgun_key", re.compile(r"\bkey-[0-9a-f]{32}\b"), MARK.format("mailgun_key")),
    ("telegram_token", re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_-]{30,}"), MARK.format("telegram_token")),
    ("discord_token", re.compile(r"\b[MN][A-Za-z0-9]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"), MARK.format("discord_token")),
    ("shopify_token", re.compile(r"\bshp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}\b"), MARK.format("shopify_token")),
    (
        "authorization",
        # bearer: any token of 16+ characters; basic/token: one with a digit (``token budget`` stays)
        re.compile(
            r"(?i)\b(bearer)(\s+)(?!\[REDACTED)([A-Za-z0-9._~+/=-]{16,})"
            r"|\b(basic|token)(\s+)(?!\[REDACTED)(?=[A-Za-z._~+/=-]*\d)([A-Za-z0-9._~+/=-]{8,})"
        ),
        lambda m: f"{m.group(1) or m.group(4)}{m.group(2) or m.group(5)}{MARK.format('token')}",
    ),
    (
        "cli_password",  # mysql -pPASS / -p'PASS', sshpass -p PASS, docker login -p PASS, curl -u user:PASS
        re.compile(
            r"(?i)(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p)(?!\[REDACTED)([\"']?)([^\s\"']+)\2"
            r"|(\bsshpass\s+-p\s*)(?!\[REDACTED)([\"']?)([^\s\"']+)\5"
            r"|(\b(?:docker|podman|helm|oras)\s+(?:registry\s+)?login\b[^\n]*?\s(?:-p|--password)[=\s]+)(?!\[REDACTED)([\"']?)([^\s\"']+)\8"
            r"|(\bcurl\b[^\n]*?\s(?:-u|--user)[=\s]*[\"']?[^:\s\"']+:)(?!\[REDACTED)([^\s\"']+)"
        ),
        lambda m: next(
            f"{m.group(i)}{m.group(i + 1) or ''}{MARK.format('password')}{m.group(i + 1) or ''}"
            if i != 10 else f"{m.group(i)}{MARK.format('password')}"
            for i in (1, 4, 7, 10) if m.group(i) is not None
        ),
    ),
    (
        "redis_password",  # redis-cli -a PASS / --pass PASS, and its REDISCLI_AUTH=PASS
        re.compile(
            r"(\bredis-cli\b[^\n]*?\s(?:-a|--pass)\s+)(?!\[REDACTED)([\"']?)([^\s\"']+)\2"
            r"|(\bREDISCLI_AUTH=)(?!\[REDACTED)([\"']?)([^\s\"']+)\5"
        ),
        lambda m: f"{m.group(1) or m.group(4)}{m.group(2) or m.group(5) or ''}{MARK.format('password')}{m.group(2) or m.group(5) or ''}",
    ),
    (
        "basic_auth_value",  # docker config.json's "auth" and .npmrc's _auth: base64 of user:password
        re.compile(r"(?i)(\"auth\"\s*:\s*\"|\b_auth\s*=\s*)([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
        lambda m: f"{m.group(1)}{MARK.format('password')}" if _is_user_password(m.group(2)) else m.group(0),
    ),
    (
        "spoken_api_key",  # prose: ``use the API key KEY``, ``my api key: KEY`` (16+ characters, letters and digits)
        re.compile(
            r"(?i)\b(api[ _-]?key)(\s*:?\s+(?:is\s+|was\s+)?|\s*=\s*)(?!\[REDACTED)"
            r"(?=[A-Za-z0-9._~+/=-]*\d)(?=[A-Za-z0-9._~+/=-]*[A-Za-z])([A-Za-z0-9._~+/=-]{15,}[A-Za-z0-9_~+/=-])"
        ),
        lambda m: f"{m.group(1)}{m.group(2)}{MARK.format('api_key')}",
    ),
    (
        "spoken_password",  # netrc's ``password PASS``, and prose: ``my password is PASS``
        re.compile(r"(?i)\b(pass(?:word|wd|phrase)?|secret|credentials?)(\s+(?:is\s+|was\s+)?)(?!\[REDACTED)(" + _PASSWORD_VALUE + ")"),
        lambda m: f"{m.group(1)}{m.group(2)}{MARK.format('password')}",
    ),
    (
        "url_password",
        re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^\s/:@'\"]*):([^\s/@'\"]+)@"),
        lambda m: m.group(0) if m.group(3).startswith("[REDACTED")
        else f"{m.group(1)}{m.group(2)}:{MARK.format('password')}@",
    ),
    (
        "cli_flag",
        re.compile(r"(?i)(--(?:" + _KEY_WORDS + r")(?:[=\s]+))(?!\[REDACTED)([\"']?)([^\s\"']{3,})\2"),
        lambda m: f"{m.group(1)}{m.group(2)}{MARK.format('secret')}{m.group(2)}",
    ),
    (
        "assignment",
        # the key ends with a credential word (DB_PASSWORD=, "api_key":, password:), so TokenBucket: is left alone;
        # a quoted value runs to its closing quote, a bare one to the next space (not a call like get_token())
        re.compile(
            r"(?i)(\b[A-Za-z0-9_.-]*(?:" + _KEY_WORDS + r")[\"']?\s*(?::|=|=>|:=)\s*)"
            r"(?:([\"'])(?!\[REDACTED)([^\"'\n]{3,200}?)\2|(?!\[REDACTED)([^\s\"'`,;()<>{}\[\]]{4,}+)(?!\())"
        ),
        lambda m: f"{m.group(1)}{m.group(2) or ''}{MARK.format('secret')}{m.group(2) or ''}",
    ),
]

KINDS = tuple(kind for kind, _, _ in _RULES)

# Lowercase literals one of which every match of the rule contains: a rule whose literals are all
# absent from the text cannot match, and is skipped (most text holds none, so redaction stays fast).
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "private_key": ("private key",),
    "jwt": ("eyj",),
    "anthropic_or_openai_key": ("sk-",),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab_token": ("glpat-",),
    "slack_token": ("xox",),
    "slack_webhook": ("hooks.slack.com",),
    "aws_access_key": ("akia", "asia", "agpa", "aida", "aroa", "anpa"),
    "google_api_key": ("aiza",),
    "stripe_key": ("_live_", "_test_"),
    "npm_token": ("npm_",),
    "pypi_token": ("pypi-",),
    "huggingface_token": ("hf_",),
    "vault_token": ("hvs.", "hvb.", "hvr."),
    "private_key_tail": ("private key",),
    "sendgrid_key": ("sg.",),
    "mailgun_key": ("key-",),
    "telegram_token": (":aa",),
    "discord_token": (".",),
    "shopify_token": ("shpat_", "shpca_", "shppa_", "shpss_"),
    "authorization": ("bearer", "basic", "token"),
    "cli_password": ("mysql", "mariadb", "sshpass", "login", "curl"),
    "redis_password": ("redis-cli", "rediscli_auth"),
    "basic_auth_value": ('"auth"', "_auth"),
    "spoken_api_key": ("api key", "api_key", "api-key", "apikey"),
    "spoken_password": ("pass", "secret", "credential"),
    "url_password": ("://",),
    "cli_flag": ("--",),
    "assignment": ("pass", "pwd", "secret", "token", "key", "credential", "cookie"),
}
assert set(_TRIGGERS) == set(KINDS)


def _is_user_password(value: str) -> bool:
    """Whether ``value`` is base64 of ``user:password`` (what docker and npm keep as ``auth``)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and password and decoded.isprintable())


def _kinds_of_literals() -> dict[str, set[str]]:
    """Literal -> the rules to run when it is found. A scan reports non-overlapping matches, so a
    literal that could start inside another (``ghs_`` in ``…gh`` + ``s_``) is implied by that other."""
    kinds: dict[str, set[str]] = {}
    for kind, literals in _TRIGGERS.items():
        for literal in literals:
            kinds.setdefault(literal, set()).add(kind)
    implied = {literal: set(k) for literal, k in kinds.items()}
    for outer in kinds:
        for inner in kinds:
            if inner != outer and any(
                inner.startswith(outer[i:]) or outer[i:].startswith(inner) for i in range(1, len(outer))
            ):
                implied[outer] |= kinds[inner]
    return implied


_KINDS_OF = _kinds_of_literals()
_ANY_TRIGGER = re.compile("|".join(re.escape(lit) for lit in sorted(_KINDS_OF, key=len, reverse=True)))


# 40 characters of base64 mixing upper and lower case and digits, standing alone: an AWS secret
# access key, even in prose with no keyword near it (a git SHA is lowercase hex; a path has other characters).
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _aws_secret(match: re.Match[str]) -> str:
    value = match.group()
    if any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value):
        return MARK.format("aws_secret")
    return value


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced."""
    if not text:
        return text
    present = set(_ANY_TRIGGER.findall(text.lower()))
    if present:
        kinds = set().union(*(_KINDS_OF[literal] for literal in present))
        for kind, pattern, replacement in _RULES:
            if kind in kinds:
                text = pattern.sub(replacement, text)
    return redact_shapes(text)


def redact_shapes(text: str) -> str:
    """The rules with no literal to look for first, run on every text (after the others)."""
    return _AWS_SECRET.sub(_aws_secret, text) if len(text) >= 40 else text


def redact_value(value: Any) -> Any:
    """Strings redacted inside any JSON-like value (dicts, lists; keys too)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value
