"""The history channel's question set (issue 41), built from real histories nobody here wrote.

    python bench/history_sets.py --mirrors /work/.mirror [--json sets.json]

**Questions answered by a link to a commit, the link removed.** A commit message that cites exactly one
earlier commit of its own repository by its sha ("a regression since c8792bd", "Before 72ae3dbf9, the
static traversal order was BFS", "A previous fix … c49100ce wasn't sufficient") is a person pointing at
the commit that explains what they are talking about. The question is that message (subject and body)
with the sha taken out, and with it any URL or "commit" word around it, cut to 400 characters; the
answer is the cited commit. Left out: reverts and cherry-picks (mechanical citations), citations of a
commit the message's own commit does not descend from, messages that cite two commits or more, and
questions under six words, and bots' commits (a deploy naming the commit it deployed). The rule is mechanical: no question was written or judged here.

Each question is asked with the repository at the citing commit's parent: the cited commit is in the
history, the citing one is not. The repositories: pytest, pip, mypy, black, requests, httpx, click,
fzf, zod, ripgrep (their mirrors' HEADs are printed), the newest :data:`PER_REPO` questions of each.
**Split:** per repository, newest first, every third question (index 2, 5, ...) is held out.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPOS = ["pytest-dev/pytest", "pypa/pip", "python/mypy", "psf/black", "psf/requests", "encode/httpx",
         "pallets/click", "junegunn/fzf", "colinhacks/zod", "BurntSushi/ripgrep"]
PER_REPO = 30
SCAN = 6000  # commits read per repository, newest first
QUESTION_MAX = 400
QUESTION_MIN_WORDS = 6
_HEX = re.compile(r"\b[0-9a-f]{7,40}\b")
_URL = re.compile(r"\S*(?:/commit/|/commits/)\S*")
_BOT = re.compile(r"\[bot\]|github-actions|dependabot|renovate", re.IGNORECASE)


def git(repo: Path, *args: str, text: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, input=text.encode() if text else None,
                          check=True).stdout.decode("utf-8", "replace")


def clone(mirrors: Path, owner_name: str) -> Path:
    for path in (mirrors / owner_name.replace("/", "+") / "repo", mirrors / owner_name.split("/")[1]):
        if path.exists():
            return path
    raise SystemExit(f"no clone of {owner_name} under {mirrors}")


def question_of(message: str, cited: str) -> str:
    """The message without the citation: URLs that hold the sha, the sha (and a "commit" before it)."""
    text = _URL.sub(" ", message)
    text = re.sub(r"(?:\b(?:commit|in|from|since|by|of|at)\s+)?\(?\b" + cited + r"[0-9a-f]*\b\)?", " ", text,
                  flags=re.IGNORECASE)
    text = re.sub(r"^(?:Co-authored-by|Signed-off-by|Reviewed-by):.*$", "", text, flags=re.MULTILINE | re.IGNORECASE)
    return " ".join(text.split())[:QUESTION_MAX]


def repo_questions(repo: Path, per_repo: int = PER_REPO) -> list[dict]:
    reachable = git(repo, "rev-list", "HEAD").split()
    by_prefix = {}
    for sha in reachable:
        by_prefix.setdefault(sha[:7], []).append(sha)
    out = git(repo, "log", "--no-merges", "-z", "--format=%H%x1f%P%x1f%an <%ae>%x1f%s%x1f%b", f"--max-count={SCAN}",
              "HEAD")
    questions = []
    for record in out.split("\0"):
        if not record.strip() or len(questions) >= per_repo:
            continue
        sha, parents, author, subject, body = (record.strip("\n").split("\x1f") + [""] * 5)[:5]
        message = subject + "\n" + body
        if "This reverts commit" in message or "cherry picked from commit" in message or not parents:
            continue
        if _BOT.search(author) or subject.startswith("Deploying to "):
            continue  # a bot's citation (a deploy naming the commit it deployed)
        cited = set()
        for word in _HEX.findall(message):
            if word.isdigit():
                continue
            found = [s for s in by_prefix.get(word[:7], []) if s.startswith(word)]
            if len(found) == 1 and found[0] != sha:
                cited.add((word, found[0]))
        if len({c[1] for c in cited}) != 1:
            continue
        word, target = sorted(cited)[0]
        parent = parents.split()[0]
        if subprocess.run(["git", "merge-base", "--is-ancestor", target, parent], cwd=repo).returncode != 0:
            continue
        question = question_of(message, word[:7])
        if len(question.split()) < QUESTION_MIN_WORDS or _HEX.search(question) and target[:7] in question:
            continue
        questions.append({"commit": sha, "parent": parent, "question": question, "answer": target})
    for i, q in enumerate(questions):
        q["split"] = "held-out" if i % 3 == 2 else "tuning"
    return questions


def sets(mirrors: Path, repos: list[str] = REPOS, per_repo: int = PER_REPO) -> dict[str, dict]:
    out = {}
    for name in repos:
        repo = clone(mirrors, name)
        out[name] = {"mirror": str(repo), "head": git(repo, "rev-parse", "--short", "HEAD").strip(),
                     "questions": repo_questions(repo, per_repo)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    found = sets(args.mirrors)
    for name, data in found.items():
        held = sum(q["split"] == "held-out" for q in data["questions"])
        print(f"{name}@{data['head']}: {len(data['questions'])} questions ({held} held out)")
    if args.json:
        args.json.write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
