"""Every "facts §" citation names its document and resolves to a heading in docs/reference/.

Two documents number their sections independently ("flip147 facts" and "recovery facts"), so a
citation must say which one it means. A section number that follows a citation in the same
paragraph ("flip147 facts §3.2, §5") belongs to that citation's document.
"""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
DOCUMENTS = {"flip147": REFERENCE / "flip147-facts.md", "recovery": REFERENCE / "recovery-facts.md"}

_NUMBER = r"\d+(?:\.\d+)*"
_CITATION = re.compile(r"\b(flip147|recovery) facts(?:\]\([^)\s]*\))?\s+§(" + _NUMBER + ")", re.I)
_BARE = re.compile(r"(?<![\w-])facts\s+§\d", re.I)
_SECTION = re.compile(r"§(" + _NUMBER + ")")
# How far back a lone "§N" looks for the citation it continues; a blank line ends the search.
_CONTINUATION_REACH = 300


def headings() -> dict[str, set[str]]:
    return {doc: set(re.findall(r"^#{2,3} (" + _NUMBER + r")\.?\s", path.read_text(encoding="utf-8"), re.M))
            for doc, path in DOCUMENTS.items()}


def citation_problems(text: str, name: str, known: dict[str, set[str]]) -> list[str]:
    """One message per citation in ``text`` that is bare or does not resolve, as ``name:line: ...``."""
    problems = []

    def report(pos: int, message: str) -> None:
        problems.append((pos, f"{name}:{text.count(chr(10), 0, pos) + 1}: {message}"))

    cited = {}  # position of each "§" that a citation owns -> its document
    for m in _BARE.finditer(text):
        if not re.search(r"(flip147|recovery)\s+$", text[max(0, m.start() - 12):m.start()], re.I):
            cited[m.end() - 2] = None
            report(m.start(), f"{m.group(0)[:-1]!r} does not say which document (flip147 facts / recovery facts)")
    for m in _CITATION.finditer(text):
        doc, number = m.group(1).lower(), m.group(2)
        cited[m.start(2) - 1] = doc
        if number not in known[doc]:
            report(m.start(), f"{doc} facts §{number} is not a heading of {DOCUMENTS[doc].name}")
    for m in _SECTION.finditer(text):
        if m.start() in cited:
            continue
        before = text[max(0, m.start() - _CONTINUATION_REACH):m.start()]
        before = before[before.rfind("\n\n") + 1:]
        owners = [c for c in _CITATION.finditer(before)]
        if not owners:
            report(m.start(), f"§{m.group(1)} follows no citation that names its document")
        elif m.group(1) not in known[owners[-1].group(1).lower()]:
            doc = owners[-1].group(1).lower()
            report(m.start(), f"§{m.group(1)} (continuing {doc} facts) is not a heading of {DOCUMENTS[doc].name}")
    return [message for _, message in sorted(problems)]


def cited_files() -> list[Path]:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--", "*.py", "*.md"],
                            capture_output=True, text=True, check=True).stdout.split("\0")
    return [ROOT / p for p in listed
            if p and not p.startswith(("docs/reference/", ".venv/")) and (ROOT / p).is_file()]


def test_every_citation_names_its_document_and_resolves():
    known = headings()
    problems = []
    for path in cited_files():
        problems += citation_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), known)
    assert problems == []


def test_citations_exist_to_check():
    """The scan sees the repository's citations (an empty scan would pass vacuously)."""
    texts = [p.read_text(encoding="utf-8") for p in cited_files()]
    found = {doc: sum(len([m for m in _CITATION.finditer(t) if m.group(1).lower() == doc]) for t in texts)
             for doc in DOCUMENTS}
    assert found["flip147"] > 50 and found["recovery"] > 50


def test_bad_citations_fail_with_file_and_line():
    # Built with S so that this file's own scan (and the rewriting script) sees no citations here.
    S = "\u00a7"
    known = {"flip147": {"1", "1.5", "5"}, "recovery": {"2", "2.4"}}
    text = (f"ok: flip147 facts {S}1.5, {S}5 and recovery facts {S}2.4.\n"
            f"bare: (facts {S}1.7)\n"
            f"Facts {S}2 at a sentence start\n"
            f"wrong document: flip147 facts {S}2.4\n"
            f"unknown: recovery facts {S}9\n"
            f"\n"
            f"continuation of nothing: {S}2\n"
            f"continuation out of range: recovery facts {S}2, {S}1.5\n")
    problems = citation_problems(text, "x.py", known)
    assert [p.split(": ", 1)[0] for p in problems] == ["x.py:2", "x.py:3", "x.py:4", "x.py:5", "x.py:7", "x.py:8"]
    assert "does not say which document" in problems[0]
    assert f"flip147 facts {S}2.4 is not a heading of flip147-facts.md" in problems[2]


def test_markdown_link_form_resolves():
    known = {"flip147": {"2", "3.1"}, "recovery": set()}
    text = "Facts: [flip147 facts](reference/flip147-facts.md) §2 (handler states), §3.1 and more."
    assert citation_problems(text, "d.md", known) == []


def test_every_heading_is_numbered_and_indexed():
    known = headings()
    assert {"1", "1.7", "2.5", "3.2", "5"} <= known["flip147"]
    assert {"1", "2", "3", "4", "2.4", "4.5"} <= known["recovery"]
    index = (REFERENCE / "README.md").read_text(encoding="utf-8")
    assert all(path.name in index for path in DOCUMENTS.values())
    assert "reference/README.md" in (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
