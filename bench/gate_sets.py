"""The evidence gate's calibration sets (issue 28), built from public sources nobody here wrote.

    python bench/gate_sets.py --mirrors /work/.mirror [--json sets.json]

prints how many prompts each set has. ``--mirrors DIR`` holds the clones, each found as
``DIR/<owner>+<name>/repo`` (the layout of this workplace's fetched snapshots) or ``DIR/<name>``.
The files are read at each clone's HEAD, whose commit is printed. Nothing here is committed data: the
sets are rebuilt from the clones every time.

**On-topic** (a prompt, and the one record that governs it), three domains, each a store of real
records beside a real project's code:

- ``peps``: the 736 PEPs of python/peps as ``decision`` nodes, beside python/typing_extensions' code;
  the prompts are the changelog entries of python/mypy, pypa/pip, python/typing_extensions and
  psf/black that cite exactly one PEP, the citation removed (bench/records_eval.py's rule);
- ``ember``: the RFCs of emberjs/rfcs (``text/*.md``) as ``decision`` nodes, beside emberjs/ember.js'
  code; the prompts are the entries of ember.js' CHANGELOG.md that cite exactly one RFC that exists,
  with the citation, PR numbers, links and the ``[FEATURE]``-style label removed (link texts stay);
- ``brighter``: BrighterCommand/Brighter's ADRs as ``decision`` nodes, beside its code; the prompts
  are the subjects of the commits that changed exactly one ADR together with C# code
  (bench/mixed_store_eval.py's rule).

**Off-topic** (prompts no software project answers): a seeded sample of 200 questions from each of
three public sets, none of them LoCoMo or PEPs:

- ``truthfulqa``: TruthfulQA's questions (koppula/TruthfulQA, a copy of sylinrl/TruthfulQA's
  ``TruthfulQA.csv``): misconceptions, law, health, history, fiction;
- ``trivia``: uberspot/OpenTriviaQA's quiz questions, every category but ``science-technology`` and
  ``video-games`` (which can touch software);
- ``gsm8k``: openai/grade-school-math's test questions: everyday-life word problems.

**Split:** within each domain and each off-topic source, in the order above, every third prompt
(index 2, 5, ...) is held out. Only the tuning part may be looked at while choosing the gate; the
figures reported are the held-out part's.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import re
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

OFF_TOPIC_PER_SOURCE = 200
TRIVIA_LEFT_OUT = ("science-technology", "video-games")
QUERY_MAX_CHARS = 400  # as bench/records_eval.py: a changelog entry longer than this is left out
QUERY_MIN_WORDS = 4


def git(repo: Path, *args: str) -> str:
    """git's output as text (a few of OpenTriviaQA's bytes are not UTF-8: replaced)."""
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True).stdout.decode("utf-8", "replace")


def clone(mirrors: Path, owner_name: str) -> Path:
    """The clone of ``owner/name`` under ``mirrors`` (a fetched snapshot's ``owner+name/repo``, or ``name``)."""
    for path in (mirrors / owner_name.replace("/", "+") / "repo", mirrors / owner_name.split("/")[1]):
        if path.exists():
            return path
    raise SystemExit(f"no clone of {owner_name} under {mirrors} (as {owner_name.replace('/', '+')}/repo or "
                     f"{owner_name.split('/')[1]})")


def split_of(index: int) -> str:
    return "held-out" if index % 3 == 2 else "tuning"


# ------------------------------------------------------------------------------ off-topic prompts


def truthfulqa_questions(repo: Path) -> list[str]:
    rows = csv.DictReader(io.StringIO(git(repo, "show", "HEAD:TruthfulQA.csv")))
    return [" ".join(r["Question"].split()) for r in rows if r.get("Question", "").strip()]


def trivia_questions(repo: Path) -> list[str]:
    out = []
    for path in sorted(git(repo, "ls-tree", "--name-only", "HEAD", "categories/").split()):
        if path.rsplit("/", 1)[-1] in TRIVIA_LEFT_OUT:
            continue
        text = git(repo, "show", f"HEAD:{path}")
        for block in re.split(r"^#Q ", text, flags=re.MULTILINE)[1:]:
            question = block.split("\n^", 1)[0]
            out.append(" ".join(question.split()))
    return [q for q in out if q]


def gsm8k_questions(repo: Path) -> list[str]:
    lines = git(repo, "show", "HEAD:grade_school_math/data/test.jsonl").splitlines()
    return [" ".join(json.loads(line)["question"].split()) for line in lines if line.strip()]


def off_topic(mirrors: Path) -> tuple[list[dict], dict[str, str]]:
    sources = {
        "truthfulqa": ("koppula/TruthfulQA", truthfulqa_questions),
        "trivia": ("uberspot/OpenTriviaQA", trivia_questions),
        "gsm8k": ("openai/grade-school-math", gsm8k_questions),
    }
    prompts, heads = [], {}
    for name, (repo_name, read) in sources.items():
        repo = clone(mirrors, repo_name)
        heads[repo_name] = git(repo, "rev-parse", "--short", "HEAD").strip()
        questions = list(dict.fromkeys(read(repo)))
        sample = random.Random(f"gate-{name}").sample(questions, min(OFF_TOPIC_PER_SOURCE, len(questions)))
        prompts += [{"prompt": q, "source": name, "split": split_of(i)} for i, q in enumerate(sample)]
    return prompts, heads


# ------------------------------------------------------------------------------ on-topic domains


@dataclass
class Domain:
    """A store of records beside a project's code, and the prompts each record governs."""

    name: str
    code: Path  # the project whose code is indexed beside the records
    nodes: dict[str, object]  # record key -> KnowledgeNode
    queries: list[dict]  # {"prompt", "answer" (record key), "split"}
    exclude_globs: list[str] = field(default_factory=list)
    heads: dict[str, str] = field(default_factory=dict)

    def node_ids(self) -> dict[str, str]:
        return {key: node.id for key, node in self.nodes.items()}


def _split(queries: list[dict]) -> list[dict]:
    return [{**q, "split": split_of(i)} for i, q in enumerate(queries)]


def peps_domain(mirrors: Path) -> Domain:
    from records_eval import judged_queries, pep_nodes

    peps = clone(mirrors, "python/peps")
    changelogs = [(clone(mirrors, "python/mypy"), "CHANGELOG.md"), (clone(mirrors, "pypa/pip"), "NEWS.rst"),
                  (clone(mirrors, "python/typing_extensions"), "CHANGELOG.md"), (clone(mirrors, "psf/black"), "CHANGES.md")]
    nodes = {f"pep-{n}": node for n, node in pep_nodes(peps).items()}
    queries = [{"prompt": q["query"], "answer": f"pep-{q['pep']}"}
               for q in judged_queries(changelogs, {int(k[4:]) for k in nodes})]
    names = ["python/peps", "python/mypy", "pypa/pip", "python/typing_extensions", "psf/black"]
    heads = {name: git(repo, "rev-parse", "--short", "HEAD").strip() for name, repo in zip(names, [peps, *(r for r, _ in changelogs)])}
    return Domain("peps", clone(mirrors, "python/typing_extensions"), nodes, _split(queries), heads=heads)


_RFC_FILE = re.compile(r"text/0*(\d+)-([^/]+)\.md$")
_RFC_CITE = re.compile(
    r"rfcs\.emberjs\.com/id/0*(\d+)|emberjs/rfcs/(?:pull|blob/[\w.-]+/text)/0*(\d+)|emberjs/rfcs#0*(\d+)"
    r"|\bRFC\s*#?\s*0*(\d+)\b",
    re.IGNORECASE,
)
_SECTION_HEADINGS = {"summary", "motivation", "detailed design", "introduction"}
_LABEL = re.compile(r"\[(?:FEATURE|BUGFIX|BREAKING|DEPRECATION|CLEANUP|DOC|DOCS|ENHANCEMENT|INTERNAL|PERF|SECURITY)"
                    r"[^\]]*\]", re.IGNORECASE)


def rfc_nodes(repo: Path) -> dict[int, object]:
    """RFC number -> its ``decision`` node: the first ``# `` heading as the title (the file's name when
    that heading is a section's, "Summary"), its ``teams`` as tags, the text after the frontmatter."""
    from autology_mcp.knowledge.models import KnowledgeNode

    when = datetime(2026, 1, 1, tzinfo=UTC)
    nodes = {}
    for path in git(repo, "ls-tree", "--name-only", "HEAD", "text/").split():
        match = _RFC_FILE.search(path)
        if not match:
            continue
        text = git(repo, "show", f"HEAD:{path}")
        teams: list[str] = []
        if text.startswith("---\n") and "\n---\n" in text[4:]:
            head, text = text[4:].split("\n---\n", 1)
            teams = re.findall(r"^\s+-\s+([a-z][a-z0-9-]*)\s*$", head.split("prs:")[0], re.MULTILINE)
        text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
        heading = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "")
        if not heading or heading.lower().strip(" :") in _SECTION_HEADINGS:
            heading = match[2].replace("-", " ").capitalize()
        body = "\n".join(line for line in text.splitlines() if line.strip() != f"# {heading}").strip()
        number = int(match[1])
        node_id = str(uuid.UUID(bytes=uuid.uuid5(uuid.NAMESPACE_URL, f"ember-rfc:{number}").bytes, version=4))
        nodes[number] = KnowledgeNode(id=node_id, type="decision", title=" ".join(heading.split())[:100] or f"RFC {number}",
                                      content=body[:200_000] or heading, tags=sorted(set(teams))[:8],
                                      created=when, modified=when, source="manual")
    return nodes


def ember_clean(entry: str) -> str:
    """A changelog entry without its RFC citations, PR numbers, links' targets and its label."""
    text = re.sub(r"\[#\d+\]\([^)]*\)\s*/?\s*", " ", entry)  # [#123](url) / ...: PR numbers
    # a link whose text is a citation goes whole, with the "per" / "see" / "implement" before it
    text = re.sub(r"(?:\b(?:per|see|as in|implements?|implementing|to implement)\s+)?(?:the\s+)?"
                  r"\[(?:RFC\s*#?\s*\d+|emberjs/rfcs#\d+)\]\([^)]*\)", " ", text, flags=re.IGNORECASE)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](url) -> text
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"(?:\b(?:per|see)\s+)?" + _RFC_CITE.pattern, " ", text, flags=re.IGNORECASE)
    text = _LABEL.sub(" ", text)
    text = re.sub(r"^([-*+]|\d+\.)\s+", "", text.strip())
    text = re.sub(r"`+|\*\*?", " ", text)
    text = re.sub(r"\(\s*(?:for more details)?\s*\)", " ", text)
    text = re.sub(r"\s+([.,;:)])", r"\1", text)
    return " ".join(text.split()).strip(" .,;:-/")


def ember_domain(mirrors: Path) -> Domain:
    from records_eval import entries

    rfcs = clone(mirrors, "emberjs/rfcs")
    ember = clone(mirrors, "emberjs/ember.js")
    numbers = rfc_nodes(rfcs)
    queries, seen = [], set()
    for entry in entries(git(ember, "show", "HEAD:CHANGELOG.md")):
        cited = {int(next(g for g in m.groups() if g)) for m in _RFC_CITE.finditer(entry)}
        if len(cited) != 1 or not cited <= set(numbers):
            continue
        query = ember_clean(entry)
        if len(query.split()) < QUERY_MIN_WORDS or len(query) > QUERY_MAX_CHARS or query.lower() in seen:
            continue
        seen.add(query.lower())
        queries.append({"prompt": query, "answer": f"rfc-{cited.pop()}"})
    heads = {"emberjs/rfcs": git(rfcs, "rev-parse", "--short", "HEAD").strip(),
             "emberjs/ember.js": git(ember, "rev-parse", "--short", "HEAD").strip()}
    return Domain("ember", ember, {f"rfc-{n}": node for n, node in numbers.items()}, _split(queries), heads=heads)


def brighter_domain(mirrors: Path) -> Domain:
    from mixed_store_eval import ADR_DIR, adr_node, judged_queries

    from autology_mcp.code.config import DEFAULT_EXCLUDE

    repo = clone(mirrors, "BrighterCommand/Brighter")
    when = datetime(2026, 1, 1, tzinfo=UTC)
    nodes = {}
    with tempfile.TemporaryDirectory(prefix="gate-adr-") as tmp:  # adr_node reads a file; its name makes the id
        for path in git(repo, "ls-tree", "--name-only", "HEAD", ADR_DIR).split():
            if path.endswith(".md"):
                scratch = Path(tmp) / Path(path).name
                scratch.write_text(git(repo, "show", f"HEAD:{path}"), encoding="utf-8")
                nodes[path] = adr_node(scratch, when)
    queries = [{"prompt": q["query"], "answer": q["adr"]} for q in judged_queries(repo) if q["adr"] in nodes]
    return Domain("brighter", repo, nodes, _split(queries), exclude_globs=[*DEFAULT_EXCLUDE, "docs/adr/**"],
                  heads={"BrighterCommand/Brighter": git(repo, "rev-parse", "--short", "HEAD").strip()})


DOMAINS = {"peps": peps_domain, "ember": ember_domain, "brighter": brighter_domain}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--json", type=Path, help="write the prompts (without the records) here")
    args = parser.parse_args()
    off, heads = off_topic(args.mirrors)
    out: dict = {"off_topic": off, "domains": {}, "heads": heads}
    for name, build in DOMAINS.items():
        domain = build(args.mirrors)
        out["domains"][name] = {"records": len(domain.nodes), "queries": domain.queries}
        out["heads"].update(domain.heads)
    print("# " + ", ".join(f"{k}@{v}" for k, v in out["heads"].items()))
    for name, d in out["domains"].items():
        held = sum(q["split"] == "held-out" for q in d["queries"])
        print(f"on-topic {name}: {d['records']} records, {len(d['queries'])} prompts ({held} held out)")
    for source in ("truthfulqa", "trivia", "gsm8k"):
        mine = [p for p in off if p["source"] == source]
        print(f"off-topic {source}: {len(mine)} prompts ({sum(p['split'] == 'held-out' for p in mine)} held out)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
