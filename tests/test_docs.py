"""The documents are true to the repository: what they and the code cite exists.

Code and documents cite the repository's documents in one form (the placeholders in
angle brackets)::

    docs/<name>.md, "<heading>"              several: "<heading>" and "<heading>"
    protocol/<PROTOCOL>.md, section <n>      several: sections <n> and <m>

A heading is cited as the document writes it; a section of the protocol's
specification by its number. Every text file under the scanned paths is read, and
these fail:

- a cited document, heading or section that does not exist;
- a citation in another form (a heading without quotes, after a colon or in
  parentheses, the document's path in backticks, a section of the specification
  without its path);
- a repository path, a ``:mod:`` or a Markdown link (file and anchor) that names
  nothing, or a link out of the repository;
- a reference to files kept outside the repository (the old shared folder, the copies
  of the published rule pages): the repository holds everything it cites.

Each check is a function of the repository's root, so that the last test can show it
catching what it is for, on a small tree of its own.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = (
    "server",
    "protocol",
    "clients",
    "tests",
    "bench",
    "deploy",
    "docs",
    "README.md",
    "CHANGELOG.md",
    "Makefile",
    "pyproject.toml",
)
TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".toml",
    ".txt",
    ".json",
    ".yaml",
    ".yml",
    ".tcss",
    ".service",
    ".example",
    ".dockerignore",
    ".sh",
    ".js",
    ".html",
    ".css",
}
TEXT_NAMES = {"Dockerfile", "Makefile"}

# A mention of a document: its path (not inside a longer path, such as the image's
# /usr/share/doc/...), and the backticks closing a code span around it, if any.
MENTION = re.compile(
    r"(?<![\w/.<-])(?P<path>(?:docs|protocol)/[A-Z]+\.md|PROTOCOL\.md)(?P<tick>`*)"
)
QUOTED = r'"[^"\n]+"'
DOC_CITATION = re.compile(rf", (?P<names>{QUOTED}(?:(?:,|, and| and) {QUOTED})*)")
SPEC_CITATION = re.compile(r", sections? (?P<numbers>\d+(?:(?:,|, and| and| to) \d+)*)\b")
# What makes a mention a citation of a section, whatever its form: a colon, a quoted
# or capitalised name after a comma, in parentheses or after a space, a section number.
LOOSE = re.compile(r'\s*(?::|[,(]\s*(?:["“A-Z]|sections?\b)|,?\s*(?:sections?\b|\d))|\s+["“]')
SPEC = "protocol/PROTOCOL.md"

REPO_PATH = re.compile(
    r"(?<![\w/.~-])((?:server|protocol|clients|tests|bench|deploy|docs)/[\w./-]*?"
    r"\.(?:py|md|toml|tcss|txt|json|yaml))(?![\w/])"
)
MODULE = re.compile(r":mod:`~?([\w.]+)`")
LINK = re.compile(r"\]\(([^()\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
# The old shared folder, the rule pages' copies ("seeds"), and their numbers.
OUTSIDE = re.compile(r"\.\./shared|\bseeds?/|\bseeds? 0\d\d\b", re.IGNORECASE)


def text_files(root: Path) -> list[Path]:
    """Every text file under the scanned paths of ``root`` (hidden files, caches and
    files an operator adds, such as ``deploy/.env``, left out)."""
    found = []
    for name in SCANNED:
        top = root / name
        if top.is_file():
            found.append(top)
            continue
        for path in sorted(top.rglob("*")):
            parts = path.relative_to(root).parts
            if any(p.startswith(".") or p == "__pycache__" for p in parts):
                continue
            if path.is_file() and (path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES):
                found.append(path)
    return found


def headings(path: Path) -> list[str]:
    """The headings of a Markdown file, as written (code blocks left out)."""
    out = []
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(line)):
            out.append(m.group(1))
    return out


def spec_sections(root: Path) -> set[str]:
    """The numbers of the specification's sections ("## 3. The envelope": "3")."""
    return {m.group(1) for h in headings(root / SPEC) if (m := re.match(r"(\d+)\. ", h))}


def slug(heading: str) -> str:
    """A heading's anchor, as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def after(path: Path, text: str, end: int) -> str:
    """The text after a mention, its lines joined (a citation may wrap, inside a comment
    too): what the reader reads next."""
    rest = text[end : end + 300]
    prefix = r"(?:>[ \t]*)?" if path.suffix == ".md" else r"(?:(?:#+|//)[ \t]*)?"
    return re.sub(rf"[ \t]*\r?\n[ \t]*{prefix}", " ", rest)


def citation_problems(root: Path) -> list[str]:
    """Citations of the repository's documents: in the one form, naming what exists."""
    problems = []
    known: dict[str, list[str]] = {}
    sections = spec_sections(root)
    for path in text_files(root):
        text = path.read_text(encoding="utf-8")
        for m in MENTION.finditer(text):
            where = f"{path.relative_to(root)}:{line_of(text, m.start())}"
            cited, tick = m.group("path"), m.group("tick")
            document = root / (SPEC if cited == "PROTOCOL.md" else cited)
            if not document.is_file():
                problems.append(f"{where}: {cited} does not exist")
                continue
            rest = after(path, text, m.end())
            shown = f"{cited}{tick}{rest[:50]}"
            if cited.startswith("docs/") and not tick and (c := DOC_CITATION.match(rest)):
                names = known.setdefault(cited, headings(document))
                problems.extend(
                    f"{where}: {cited} has no heading {name}"
                    for name in re.findall(QUOTED, c.group("names"))
                    if name.strip('"') not in names
                )
            elif cited == SPEC and not tick and (c := SPEC_CITATION.match(rest)):
                problems.extend(
                    f"{where}: {SPEC} has no section {number}"
                    for number in re.findall(r"\d+", c.group("numbers"))
                    if number not in sections
                )
            elif LOOSE.match(rest):
                problems.append(
                    f"{where}: not in the one citation form: {shown!r} (write "
                    f'docs/<name>.md, "<heading>" or {SPEC}, section <n>)'
                )
    return problems


def path_problems(root: Path) -> list[str]:
    """Repository paths and modules named anywhere: each exists."""
    problems = []
    for path in text_files(root):
        text = path.read_text(encoding="utf-8")
        for m in REPO_PATH.finditer(text):
            if not (root / m.group(1)).exists():
                where = f"{path.relative_to(root)}:{line_of(text, m.start())}"
                problems.append(f"{where}: {m.group(1)} does not exist")
        if path.suffix == ".py":
            for m in MODULE.finditer(text):
                if importlib.util.find_spec(m.group(1)) is None:
                    where = f"{path.relative_to(root)}:{line_of(text, m.start())}"
                    problems.append(f"{where}: no module {m.group(1)}")
    return problems


def link_problems(root: Path) -> list[str]:
    """Markdown links inside the repository: to a file that exists, inside it, and to a
    heading of it."""
    problems = []
    for path in text_files(root):
        if path.suffix != ".md":
            continue
        text = path.read_text(encoding="utf-8")
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            where = f"{path.relative_to(root)}:{line_of(text, m.start())}"
            file, _, anchor = target.partition("#")
            linked = (path.parent / file).resolve() if file else path
            if not linked.is_relative_to(root.resolve()):
                problems.append(f"{where}: {target} leads out of the repository")
            elif not linked.exists():
                problems.append(f"{where}: {target}: no such file")
            elif anchor and anchor not in {slug(h) for h in headings(linked)}:
                problems.append(f"{where}: {target}: no such heading")
    return problems


def outside_problems(root: Path) -> list[str]:
    """References to files that are not in the repository."""
    problems = []
    for path in text_files(root):
        text = path.read_text(encoding="utf-8")
        for m in OUTSIDE.finditer(text):
            where = f"{path.relative_to(root)}:{line_of(text, m.start())}"
            problems.append(f"{where}: points outside the repository: {m.group(0)!r}")
    return problems


def decision_problems(root: Path) -> list[str]:
    """The last column of the rules' "Decisions at a glance" table names their sections."""
    rules = root / "docs" / "RULES.md"
    names = headings(rules)
    text = rules.read_text(encoding="utf-8").split("## Decisions at a glance", 1)[1]
    rows = [line for line in text.splitlines() if line.startswith("|")][2:]
    assert rows, "the decisions table has no rows"
    return [
        f"docs/RULES.md, decisions: no heading {section!r}"
        for row in rows
        if (section := row.strip("| ").rsplit("|", 1)[1].strip()) not in names
    ]


CHECKS = (citation_problems, path_problems, link_problems, outside_problems)


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_the_repository(check: Callable[[Path], list[str]]) -> None:
    problems = check(ROOT)
    assert not problems, "\n".join(problems)


def test_the_decisions_table_names_sections_of_the_rules() -> None:
    problems = decision_problems(ROOT)
    assert not problems, "\n".join(problems)


def test_the_scan_reads_the_code_and_the_documents() -> None:
    scanned = {p.relative_to(ROOT).as_posix() for p in text_files(ROOT)}
    for name in ("README.md", "docs/RULES.md", "deploy/Dockerfile", "server/table/machine.py"):
        assert name in scanned
    assert Path(__file__).relative_to(ROOT).as_posix() in scanned  # this file too
    assert "Faults" in headings(ROOT / "docs" / "RULES.md")
    assert {"3", "13"} <= spec_sections(ROOT)


# A small repository for the checks to find faults in. Written with placeholders, so
# that the scan of this very file does not read them as citations.
TINY_RULES = "# Rules\n\n## Faults\n\n### The joker\n\n```\n## Not a heading\n```\n"
TINY_SPEC = "# Spec\n\n## 3. The envelope\n"
TINY_CODE = """\
# Good: {docs}/RULES.md, "Faults"; {docs}/RULES.md, "Faults" and "The joker";
# {proto}/PROTOCOL.md, section 3; {proto}/PROTOCOL.md, sections 3
# and 3; {docs}/RULES.md's joker; see {docs}/RULES.md.
# Bad heading: {docs}/RULES.md, "The table".
# Wrapped, bad: {docs}/RULES.md,
#     "Not a
#     heading".
# Bad forms: {docs}/RULES.md, Faults. ({docs}/RULES.md: Faults) {docs}/RULES.md ("Faults")
# `{docs}/RULES.md`, "Faults"; ({base}.md, section 3); {proto}/PROTOCOL.md 3
# Bad section: {proto}/PROTOCOL.md, section 14. Bad file: {docs}/DESIGN.md.
# Bad path: {server}/gone.py; bad module: :mod:`{server}.gone`.
# Outside: {up}/{shared}/{rules}, {seeds}/{page}.html, {seed} 003.
"""
TINY_MD = "[up]({up}/{up}/x.md) [gone](gone.md) [anchor](RULES.md#nowhere) [ok](#the-joker)\n"


def test_the_checks_find_what_they_are_for(tmp_path: Path) -> None:
    fill = {
        "docs": "docs",
        "proto": "protocol",
        "base": "PROTOCOL",
        "server": "server",
        "up": "..",
        "seeds": "seeds",
        "seed": "seed",
        # Filled in here so that this file names no place outside the repository.
        "shared": "shared",
        "rules": "RULES.md",
        "page": "000",
    }
    (tmp_path / "docs").mkdir()
    (tmp_path / "protocol").mkdir()
    (tmp_path / "server").mkdir()
    (tmp_path / "docs" / "RULES.md").write_text(TINY_RULES + TINY_MD.format_map(fill))
    (tmp_path / SPEC).write_text(TINY_SPEC)
    (tmp_path / "server" / "x.py").write_text(TINY_CODE.format_map(fill))

    def found(problems: list[str]) -> list[tuple[int, str]]:
        """(line, problem) of each, a citation's form as "form"."""
        out = []
        for problem in problems:
            _, line, text = problem.split(":", 2)
            out.append((int(line), "form" if "one citation form" in text else text.strip()))
        return out

    rules, design = "{docs}/RULES.md".format_map(fill), "{docs}/DESIGN.md".format_map(fill)
    assert found(citation_problems(tmp_path)) == [
        (4, f'{rules} has no heading "The table"'),
        (5, f'{rules} has no heading "Not a heading"'),
        *[(8, "form")] * 3,
        *[(9, "form")] * 3,
        (10, f"{SPEC} has no section 14"),
        (10, f"{design} does not exist"),
    ]
    gone = "{server}/gone".format_map(fill)
    assert found(path_problems(tmp_path)) == [
        (10, f"{design} does not exist"),
        (11, f"{gone}.py does not exist"),
        (11, f"no module {gone.replace('/', '.')}"),
    ]
    assert found(link_problems(tmp_path)) == [
        (10, "../../x.md leads out of the repository"),
        (10, "gone.md: no such file"),
        (10, "RULES.md#nowhere: no such heading"),
    ]
    assert [line for line, _ in found(outside_problems(tmp_path))] == [12, 12, 12]
