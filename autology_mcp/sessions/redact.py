"""Remove secrets from session text before anything is written or indexed.

Common credential shapes are replaced by ``[REDACTED:<kind>]``: provider API keys and tokens
(OpenAI/Anthropic ``sk-…``, GitHub ``ghp_…``/``github_pat_…``, Slack ``xox…``, AWS ``AKIA…``,
Google ``AIza…``, Stripe, GitLab, npm, PyPI, Hugging Face), JWTs, bearer/basic authorization
values, private key blocks, passwords in URLs (``scheme://user:password@host``) and
``password=…``-style assignments (also ``--password …`` flags and JSON ``"api_key": "…"``).
It is pattern-based, so it errs on the side of redacting: a variable named ``token`` assigned a
literal loses the literal. Redaction is idempotent: redacting redacted text changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MARK = "[REDACTED:{}]"

_KEY_WORDS = (
    r"pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"client[_-]?secret|auth[_-]?token|credentials?|session[_-]?key|signing[_-]?key|secret[_-]?key|"
    r"encryption[_-]?key|master[_-]?key"
)

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
    (
        "authorization",
        re.compile(r"(?i)\b(bearer|basic|token)(\s+)(?!\[REDACTED)(?=[A-Za-z._~+/=-]*\d)([A-Za-z0-9._~+/=-]{8,})"),
        lambda m: f"{m.group(1)}{m.group(2)}{MARK.format('token')}",
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
    "authorization": ("bearer", "basic", "token"),
    "url_password": ("://",),
    "cli_flag": ("--",),
    "assignment": ("pass", "pwd", "secret", "token", "key", "credential"),
}
assert set(_TRIGGERS) == set(KINDS)


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


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced."""
    if not text:
        return text
    present = set(_ANY_TRIGGER.findall(text.lower()))
    if not present:
        return text
    kinds = set().union(*(_KINDS_OF[literal] for literal in present))
    for kind, pattern, replacement in _RULES:
        if kind in kinds:
            text = pattern.sub(replacement, text)
    return text


def redact_value(value: Any) -> Any:
    """Strings redacted inside any JSON-like value (dicts, lists; keys too)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value
