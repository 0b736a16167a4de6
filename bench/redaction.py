"""Secret redaction (issue 13): how many of the corpus's secrets leak, through our patterns and
through detect-secrets (Yelp's scanner, the library a user would reach for), and through the whole
session pipeline into committed and uncommitted files.

    python bench/redaction.py [--benign REPO] [--json out.json]

The corpus (tests/sessions/secret_corpus.py): 51 forms of secrets (the rules were tuned on them), 20
held-out forms written afterwards (issue 13; the 4 of them that leaked were tuned on in issue 29) and
30 fresh held-out forms (issue 29: written from vendors' documentation of credential formats before
that issue's rule changes, never tuned on), each part reported apart; as they appear in coding
sessions (provider tokens, command lines, config files, headers, URLs, SQL, prose, PEM keys, one
split across two messages), all generated from fixed seeds. Per form, a leak is any of its secret
strings left in the output.

- **ours**: ``common.redact.redact`` on each message (the split PEM key: the two messages apart,
  as the parser sees them).
- **detect-secrets** (if installed: ``pip install detect-secrets``): ``SecretsCollection.scan_file``
  with its default plugins and filters on each message, each secret it reports replaced.
- **false positives** (``--benign REPO``): lines of a public repository's source and docs (20,000
  at most) that each redactor changes.
- **pipeline**: every message as a user prompt of one Claude Code transcript, ingested by
  ``autology sessions ingest --node``: leaks in git-tracked files (``.autology/nodes``,
  ``.autology/graph``) and in the rest of ``.autology/`` (session file, indexes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sessions"))

from secret_corpus import CORPUS, FRESH, HELD_OUT, Form  # noqa: E402

from autology_mcp.common.redact import redact  # noqa: E402


def leaks(form: Form, outputs: list[str]) -> list[str]:
    text = "\n".join(outputs)
    return [s for s in form.secrets if s in text]


def ours(form: Form) -> list[str]:
    return [redact(m) for m in form.messages]


def detect_secrets_redactor():
    """detect-secrets as its users run it: ``SecretsCollection.scan_file`` with the default plugins
    and filters, on each message written to a file; each secret value it reports is replaced."""
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    folder = Path(tempfile.mkdtemp(prefix="redaction-"))

    def run_one(text: str) -> str:
        path = folder / "message.txt"
        path.write_text(text, encoding="utf-8")
        found = SecretsCollection()
        with default_settings():
            found.scan_file(str(path))
        for value in sorted({s.secret_value for _, s in found if s.secret_value}, key=len, reverse=True):
            text = text.replace(value, "[REDACTED]")
        return text

    def run(form: Form) -> list[str]:
        return [run_one(m) for m in form.messages]

    run.one = run_one  # type: ignore[attr-defined]
    return run


def benign_lines(folder: Path, limit: int = 20_000) -> list[str]:
    """Lines of text nobody hid a secret in: source and docs of a public repository."""
    lines: list[str] = []
    for path in sorted(folder.rglob("*")):
        if path.suffix in (".py", ".md", ".rst", ".txt", ".toml", ".cfg", ".yml", ".yaml") and path.is_file():
            lines += [line for line in path.read_text(encoding="utf-8", errors="replace").split("\n") if line.strip()]
        if len(lines) >= limit:
            break
    return lines[:limit]


def pipeline(work: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(leaks in git-tracked files, leaks elsewhere under .autology), by form name."""
    project = work / "project"
    (project / ".autology" / "nodes").mkdir(parents=True)
    lines = []
    n = 0
    for form in CORPUS + HELD_OUT + FRESH:
        for message in form.messages:
            n += 1
            stamp = f"2026-10-02T10:{n // 60:02d}:{n % 60:02d}.000Z"
            lines.append(json.dumps({"type": "user", "uuid": f"u{n}", "timestamp": stamp, "sessionId": "secrets",
                                     "cwd": str(project), "message": {"role": "user", "content": message}}))
            lines.append(json.dumps({"type": "assistant", "uuid": f"a{n}", "timestamp": stamp, "sessionId": "secrets",
                                     "cwd": str(project), "message": {"role": "assistant", "content": [
                                         {"type": "text", "text": f"Noted. {message}"}]}}))
    transcript = work / "secrets.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(project), "sessions", "ingest", "--node",
                    str(transcript)], check=True, capture_output=True)
    tracked, other = b"", b""
    for path in sorted((project / ".autology").rglob("*")):
        if path.is_file():
            rel = path.relative_to(project / ".autology").as_posix()
            if rel.startswith(("nodes/", "graph/")):
                tracked += path.read_bytes()
            else:
                other += path.read_bytes()
    in_tracked = {f.name: [s for s in f.secrets if s.encode() in tracked] for f in CORPUS + HELD_OUT + FRESH}
    in_other = {f.name: [s for s in f.secrets if s.encode() in other] for f in CORPUS + HELD_OUT + FRESH}
    return {k: v for k, v in in_tracked.items() if v}, {k: v for k, v in in_other.items() if v}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--benign", default=None, help="a folder of real text (a repository's source and docs) to count false positives on")
    args = parser.parse_args()
    results: dict[str, dict] = {}
    redactors = {"ours": ours}
    other = detect_secrets_redactor()
    if other is not None:
        redactors["detect-secrets"] = other
    print(f"# forms (secret strings): tuning {len(CORPUS)} ({sum(len(f.secrets) for f in CORPUS)}), held-out {len(HELD_OUT)} "
          f"({sum(len(f.secrets) for f in HELD_OUT)}), fresh {len(FRESH)} ({sum(len(f.secrets) for f in FRESH)}); load {os.getloadavg()}")
    for name, run in redactors.items():
        results[name] = {}
        for part, forms in (("tuning", CORPUS), ("held-out", HELD_OUT), ("fresh", FRESH)):
            started = time.perf_counter()
            leaked = {form.name: leaks(form, run(form)) for form in forms}
            elapsed = time.perf_counter() - started
            missed = [f for f, v in leaked.items() if v]
            results[name][part] = {"forms_leaked": len(missed), "forms": len(forms), "leaked": missed, "ms": round(elapsed * 1000, 1)}
            print(f"{name:16} {part:9} leaks in {len(missed):2d} of {len(forms)} forms ({elapsed * 1000:.0f} ms)")
            for form in missed:
                print(f"    {form}")
    if args.benign:
        lines = benign_lines(Path(args.benign))
        chunk = 200  # detect-secrets scans a file: 200 lines per file
        print(f"false positives on {len(lines)} lines of {args.benign} (lines changed):")
        for name, run in redactors.items():
            if name == "ours":
                changed = sum(redact(line) != line for line in lines)
            else:
                changed = 0
                for i in range(0, len(lines), chunk):
                    block = lines[i : i + chunk]
                    out = run.one("\n".join(block)).split("\n")  # type: ignore[attr-defined]
                    changed += sum(a != b for a, b in zip(block, out))
            results[name]["benign_lines_changed"] = changed
            results[name]["benign_lines"] = len(lines)
            print(f"    {name:16} {changed} ({100 * changed / len(lines):.2f}%)")
    with tempfile.TemporaryDirectory() as tmp:
        tracked, elsewhere = pipeline(Path(tmp))
    results["pipeline"] = {"tracked": tracked, "elsewhere": elsewhere}
    print(f"pipeline: forms leaking into git-tracked files: {len(tracked)}; into the rest of .autology/: {len(elsewhere)}")
    for form, secrets in {**tracked, **elsewhere}.items():
        print(f"    {form}: {len(secrets)} secret string(s)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
