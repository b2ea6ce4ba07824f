"""Chapters refer to each other by label, never by number (issue 39, erratum 9).

Numbers go stale when a chapter is inserted or moved: "chapter 5 of this part" in the cradle
chapter pointed at itself once the LCP chapter moved. So every chapter of the table of contents
carries a label ``(ch-<name>)=`` on its title, and the text of the book says ``{ref}`ch-<name>```
(MyST renders the title, or the given text) instead of "chapter N"; this test fails on any
"chapter 5", "Chapter 2's", "chapters 1 and 2" in a chapter, a problem set or a page, and on a
reference to a chapter label that does not exist.
"""
import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BY_NUMBER = re.compile(r"(?<!Handbook, )\b[Cc]hapters? \d")
CH_LABEL = re.compile(r"^\((ch-[a-z0-9-]+)\)=\n# ")
CH_REF = re.compile(r"\{ref\}`(?:[^`<]*<)?(ch-[a-z0-9-]+)>?`")


def _toc_pages():
    spec = importlib.util.spec_from_file_location("book_toc", ROOT / "scripts" / "book_toc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.toc_files(ROOT / "_toc.yml")


def _texts(path):
    """(where, text) of a page: its Markdown cells and code cells, or the whole .md file."""
    if path.suffix == ".md":
        return [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(f"{path.relative_to(ROOT)} cell {i}", "".join(c["source"]))
            for i, c in enumerate(cells)]


PAGES = [p for page in _toc_pages() for p in (ROOT / f"{page}.ipynb", ROOT / f"{page}.md")
         if p.exists()] + sorted((ROOT / "book" / "assignments" / "source").glob("*.ipynb"))
CHAPTERS = [p for p in PAGES if re.match(r"book/part\d+/", p.relative_to(ROOT).as_posix())]


def by_number(text):
    """The references to chapters by number in ``text``."""
    return [m.group(0) for m in BY_NUMBER.finditer(text)]


def test_by_number_finds_what_it_should():
    assert by_number("the LCP (chapter 5 of this part)") == ["chapter 5"]
    assert by_number("Chapter 2's Zeno behaviour; chapters 1 and 2") == ["Chapter 2", "chapters 1"]
    assert by_number("the handbook chapter on Lagrangian dynamics, §5.3") == []
    assert by_number("| Handbook, chapter 5 “Lagrangian Dynamics” |") == []      # a source
    assert by_number("({ref}`ch-many-contacts`)") == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_chapter_is_referred_to_by_number(page):
    found = [(where, hit) for where, text in _texts(page) for hit in by_number(text)]
    assert not found, f"refer to chapters by label ({{ref}}`ch-...`), not by number: {found}"


def test_every_chapter_has_a_label_and_every_reference_resolves():
    labels = {}
    for page in CHAPTERS:
        first = _texts(page)[0][1]
        m = CH_LABEL.match(first)
        assert m, f"{page.relative_to(ROOT)}: the first cell must open with (ch-<name>)= then the title"
        assert m.group(1) not in labels, f"label {m.group(1)} twice"
        labels[m.group(1)] = page
    refs = {(where, label) for page in PAGES for where, text in _texts(page)
            for label in CH_REF.findall(text)}
    missing = sorted((w, lab) for w, lab in refs if lab not in labels)
    assert not missing, f"references to chapter labels that do not exist: {missing}"
    assert len(refs) > 30
