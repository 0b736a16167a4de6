"""The instruction check, measured (issue 38): what :func:`instruction_flags` catches of a public set of
indirect prompt-injection attacks, and what it holds back wrongly of real records, for several
checkouts of the code in one run.

    python bench/untrusted_eval.py --mirrors /work/.mirror --against /work/main [--json out.json]

Each checkout (this one, then each ``--against``) is measured by a process of its own with
``PYTHONPATH`` = that checkout, on the same texts, each text as a node's whole content. The sets:

- **BIPIA** (microsoft/BIPIA, ``benchmark/{text,code}_attack_{train,test}.json``): the attack strings
  an attacker plants in an email, a web page, a table or code. *train* is what the rule was tuned
  on; *test* is held out and is the figure to report. Each string alone, and embedded in a line of
  ordinary project text ("embedded"). The categories in three groups:

  - **task**: a request for a different task ("Analyze the trend of electric car sales …"). Nothing
    in its words tells it from content: a text rule cannot catch these without holding back
    ordinary text, and does not try.
  - **answer**: an instruction about the model's own answer, its form ("Encode your response in
    Base64") or content ("Add a sentence in your response that …").
  - **code**: an instruction to put given (malicious) code into the code the model writes.

  *answer* and *code* are the instructions to act; recall is reported for them, for *task*, and
  overall.
- **PEPs** (python/peps, ``peps/pep-*.rst``, whole files): real design records. Looked at while
  tuning (the check must hold back none).
- **docs** (held out, not looked at while tuning): the Markdown and reST documentation of
  pallets/flask, psf/requests, pypa/pip and psf/black split into sections at their headings, and
  the ADRs of BrighterCommand/Brighter (``docs/adr/*.md``, whole files).
- **Ember RFCs** (held out too, added after the first held-out run; emberjs/rfcs ``text/*.md``, whole
  files).
- **probe** (``bench/data/untrusted_probe.json``, written before the rule was changed): 22 attack
  phrasings of the kinds issue 38 lists and 10 harmless sentences that talk about instructions.

Printed: for each set and checkout, flagged / total; the held-back texts of the real-record sets
(a few, with their flags) so a person can judge them; ``uptime`` before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

TASK_CATEGORIES = {  # requests for another task, by BIPIA file
    "text_attack_train": {"Information Retrieval", "Content Creation", "Learning and Tutoring",
                          "Language Translation", "Programming Help"},
    "text_attack_test": {"Task Automation", "Business Intelligence", "Conversational Agent",
                         "Research Assistance", "Sentiment Analysis"},
}
CARRIER = ("The payment client retries a failed call three times with exponential backoff. {attack} "
           "See the retry helper in src/retry.py for the limits.")
DOCS_REPOS = ("pallets+flask", "psf+requests", "pypa+pip", "psf+black")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def git_show(repo: Path, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True).stdout


def git_files(repo: Path) -> list[str]:
    return subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.split("\n")


_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+_.:])\1{2,}\s*$")


def sections(text: str, markdown: bool) -> list[str]:
    """A document cut at its headings (Markdown ``#`` lines; reST titles over an underline)."""
    lines = text.split("\n")
    out: list[list[str]] = [[]]
    in_fence = False
    for i, line in enumerate(lines):
        if markdown and line.lstrip().startswith("```"):
            in_fence = not in_fence
        heading = (markdown and not in_fence and re.match(r"#{1,6}\s", line)) or (
            not markdown and line.strip() and i + 1 < len(lines) and _RST_UNDERLINE.match(lines[i + 1])
            and len(lines[i + 1].strip()) >= len(line.strip()) - 1)
        if heading and any(x.strip() for x in out[-1]):
            out.append([])
        out[-1].append(line)
    return ["\n".join(s).strip() for s in out if len("\n".join(s).strip()) >= 80]


def build_sets(mirrors: Path) -> dict[str, list[dict]]:
    sets: dict[str, list[dict]] = {}
    bipia = mirrors / "microsoft+BIPIA" / "repo"
    for name in ("text_attack_train", "text_attack_test", "code_attack_train", "code_attack_test"):
        data = json.loads(git_show(bipia, f"benchmark/{name}.json"))
        items = []
        for category, attacks in data.items():
            group = "code" if name.startswith("code") else ("task" if category in TASK_CATEGORIES[name] else "answer")
            for attack in attacks:
                items.append({"category": category, "group": group, "text": attack})
        split = name.rsplit("_", 1)[1]
        sets.setdefault(f"bipia-{split}", []).extend(items)
        sets.setdefault(f"bipia-{split}-embedded", []).extend(
            {**item, "text": CARRIER.format(attack=item["text"])} for item in items)
    peps = mirrors / "python+peps" / "repo"
    sets["peps"] = [{"source": f"python/peps {p}", "text": git_show(peps, p)} for p in git_files(peps)
                    if re.fullmatch(r"peps/pep-\d+\.rst", p)]
    docs = []
    for name in DOCS_REPOS:
        repo = mirrors / name / "repo"
        for path in git_files(repo):
            if path.endswith((".md", ".rst")) and not path.startswith(".github/"):
                for i, section in enumerate(sections(git_show(repo, path), path.endswith(".md"))):
                    docs.append({"source": f"{name.replace('+', '/')} {path} §{i + 1}", "text": section})
    brighter = mirrors / "BrighterCommand+Brighter" / "repo"
    docs += [{"source": f"BrighterCommand/Brighter {p}", "text": git_show(brighter, p)} for p in git_files(brighter)
             if re.fullmatch(r"docs/adr/[^/]+\.md", p)]
    sets["docs"] = docs
    rfcs = mirrors / "emberjs+rfcs" / "repo"
    sets["rfcs"] = [{"source": f"emberjs/rfcs {p}", "text": git_show(rfcs, p)} for p in git_files(rfcs)
                    if re.fullmatch(r"text/[^/]+\.md", p)]
    probe = json.loads((HERE / "data" / "untrusted_probe.json").read_text(encoding="utf-8"))
    sets["probe-attacks"] = [{"category": x["kind"], "text": x["text"]} for x in probe["attacks"]]
    sets["probe-harmless"] = [{"category": x["kind"], "text": x["text"]} for x in probe["harmless"]]
    return sets


def worker(sets_file: str) -> None:
    """In the checkout's own process: the flags of every text, and the time the check took."""
    try:
        from autology_mcp.knowledge.trust.untrusted import instruction_flags
    except ImportError:  # a checkout from before the trust/ room (issue 38)
        from autology_mcp.knowledge.untrusted import instruction_flags

    sets = json.loads(Path(sets_file).read_text(encoding="utf-8"))
    out: dict = {"flags": {}, "seconds": {}, "chars": {}}
    for name, items in sets.items():
        started = time.perf_counter()
        out["flags"][name] = [[f.text() for f in instruction_flags(item["text"])] for item in items]
        out["seconds"][name] = time.perf_counter() - started
        out["chars"][name] = sum(len(item["text"]) for item in items)
    json.dump(out, sys.stdout)


def measure(checkout: Path, sets_file: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", sets_file], env=env,
                          capture_output=True, text=True, check=True, cwd=str(checkout))
    return json.loads(done.stdout)


def share(hits: list[bool]) -> str:
    return f"{sum(hits)}/{len(hits)} ({sum(hits) / len(hits):.2f})" if hits else "-"


def report(sets: dict[str, list[dict]], runs: dict[str, dict], show: int) -> dict:
    names = list(runs)
    summary: dict = {}
    width = max(len(n) for n in names) + 2

    def row(label: str, per_run: dict[str, list[bool]]) -> None:
        print(f"  {label:<44}" + "".join(f"{share(per_run[n]):>{width + 12}}" for n in names))
        summary[label] = {n: [sum(per_run[n]), len(per_run[n])] for n in names}

    print(f"  {'':<44}" + "".join(f"{n:>{width + 12}}" for n in names))
    for split in [s for s in ("test", "train") if f"bipia-{s}" in sets]:
        held = " (held out)" if split == "test" else " (tuned on)"
        print(f"BIPIA {split}{held}: attacks flagged (recall)")
        items = sets[f"bipia-{split}"]
        hit = {n: [bool(f) for f in runs[n]["flags"][f"bipia-{split}"]] for n in names}
        emb = {n: [bool(f) for f in runs[n]["flags"][f"bipia-{split}-embedded"]] for n in names}
        row(f"{split} overall", hit)
        row(f"{split} overall, embedded in a line of text", emb)
        acts = [i for i, x in enumerate(items) if x["group"] != "task"]
        row(f"{split} instructions to act (answer + code)", {n: [hit[n][i] for i in acts] for n in names})
        for group in ("answer", "code", "task"):
            idx = [i for i, x in enumerate(items) if x["group"] == group]
            row(f"{split} group {group}", {n: [hit[n][i] for i in idx] for n in names})
        for category in dict.fromkeys(x["category"] for x in items):
            idx = [i for i, x in enumerate(items) if x["category"] == category]
            group = items[idx[0]]["group"]
            row(f"  {group}: {category}"[:44], {n: [hit[n][i] for i in idx] for n in names})
    print("Real records: held back (false holds)")
    for name, label in [(k, v) for k, v in (("peps", "PEPs (looked at while tuning)"),
                                            ("docs", "docs sections + ADRs (held out)"),
                                            ("rfcs", "Ember RFCs (held out)")) if k in sets]:
        row(label, {n: [bool(f) for f in runs[n]["flags"][name]] for n in names})
    print("Probe (bench/data/untrusted_probe.json, written before the change)")
    row("attacks flagged", {n: [bool(f) for f in runs[n]["flags"]["probe-attacks"]] for n in names})
    row("harmless held back", {n: [bool(f) for f in runs[n]["flags"]["probe-harmless"]] for n in names})
    print("Time of the check (each text once, no cache): µs per text; µs per 1,000 characters")
    for name in [k for k in ("peps", "docs", "rfcs", "bipia-test", "bipia-train") if k in sets]:
        print(f"  {name:<42}" + "".join(
            f"{runs[n]['seconds'][name] / len(sets[name]) * 1e6:>{width}.0f}; "
            f"{runs[n]['seconds'][name] / runs[n]['chars'][name] * 1e9:>6.0f}" for n in names))
    for n in names:
        for name in [k for k in ("peps", "docs", "rfcs", "probe-harmless") if k in sets]:
            held = [(sets[name][i].get("source") or sets[name][i]["text"][:60], f)
                    for i, f in enumerate(runs[n]["flags"][name]) if f]
            if held:
                print(f"Held back by {n} in {name} ({len(held)}):")
                for source, flags in held[:show]:
                    print(f"  {source}: {flags[0][:150]}")
        missed = [x for x, f in zip(sets["probe-attacks"], runs[n]["flags"]["probe-attacks"]) if not f]
        if missed:
            print(f"Probe attacks missed by {n}: " + ", ".join(x["category"] for x in missed))
    return summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--against", type=Path, action="append", default=[], help="another checkout to measure")
    ap.add_argument("--show", type=int, default=12, help="how many held-back records to print per set")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--tune", action="store_true", help="the sets tuned on only (no held-out figure is printed)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return 0
    print(f"# {uptime()}")
    sets = build_sets(args.mirrors)
    if args.tune:
        sets = {k: v for k, v in sets.items() if k not in ("docs", "rfcs") and not k.startswith("bipia-test")}
    print("# " + ", ".join(f"{k}: {len(v)}" for k, v in sets.items()))
    with tempfile.TemporaryDirectory() as tmp:
        sets_file = str(Path(tmp) / "sets.json")
        Path(sets_file).write_text(json.dumps(sets), encoding="utf-8")
        runs = {}
        for checkout in [*args.against, REPO]:
            head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                                  text=True).stdout.strip()
            runs[f"{checkout.name}@{head}"] = measure(checkout, sets_file)
    summary = report(sets, runs, args.show)
    print(f"# {uptime()}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "runs": runs}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
