"""scripts/lab/book_refs.py over every page of the book (the fast check of issue 39, item 2;
tests/browser/test_lab.py shows three chapters in JupyterLab): what JupyterLab is served has
every reference to another chapter, every labelled display of a chapter and every citation
resolved, and what it saves is the book's text, byte for byte."""
from __future__ import annotations

import copy
import json
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


sys.path.insert(0, str(ROOT / "scripts" / "lab"))   # as scripts/lab.py's PYTHONPATH does
import book_refs as br  # noqa: E402


def _pages():
    return sorted(p for p in ROOT.glob("book/**/*.ipynb")
                  if br.docname(p.relative_to(ROOT).as_posix()) is not None)


def _text(cell):
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def _defined_here(nb):
    """Labels of the displays a notebook defines (jupyterlab-myst resolves those itself)."""
    text = "\n".join(_text(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    return {m["label"] for m in br._DISPLAY.finditer(text)}


def test_every_page_is_served_resolved_and_saved_unchanged():
    pages = _pages()
    assert len(pages) >= 40, len(pages)
    index = br.book_index()
    problems, resolved = [], 0
    for path in pages:
        doc = path.relative_to(ROOT).as_posix()[:-len(".ipynb")]
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            cell["source"] = _text(cell)
        own, original = _defined_here(nb), copy.deepcopy(nb)
        br.rewrite(nb, doc, index)
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            text = _text(cell)
            resolved += len(cell.get("metadata", {}).get(br.KEY, {}).get("pairs", []))
            left = [m["label"] for m in br._EQ.finditer(text) if m["label"] not in own]
            left += [m[0] for m in br._CITE.finditer(text)]
            if doc.startswith("book/part"):        # a chapter: the book numbers every display
                left += [m["label"] for m in br._DISPLAY.finditer(text)]
            if left:
                problems.append(f"{doc}: unresolved {left[:5]}")
        br.restore(nb)
        if nb != original:
            problems.append(f"{doc}: saving would change the page")
    assert not problems, "\n".join(problems)
    assert resolved > 600, resolved


def test_numbers_and_citations_are_the_books():
    """Spot checks against the book's rules: a chapter's first own display is (II.2.1), a
    seed's label shows the seed's number, a reference to another chapter links its notebook,
    a citation is author-year with the whole entry on hover."""
    equations, bib = br.book_index()
    numbers = {number for _, number in equations.values()}
    assert "II.2.1" in numbers and "IV.6.1" in numbers
    seed = next(label for label in equations if re.fullmatch(r"hb-\d+(-\d+)+", label))
    assert equations[seed][1] == seed[3:].replace("-", "."), (seed, equations[seed])
    label, (doc, number) = next((k, v) for k, v in equations.items()
                                if v[0] == "book/part2/02_properties")
    shown, pairs = br.rewrite_source(f"see {{eq}}`{label}`", "book/part4/06_walking",
                                     (equations, bib))
    assert shown == f"see [({number})](../part2/02_properties.ipynb)", shown
    assert pairs == [(shown[4:], f"{{eq}}`{label}`")]
    short, full = bib["buffinton2005kane"]
    assert short == "Buffinton, 2005" and "Kane's Method in Robotics" in full
    shown, _ = br.rewrite_source("{cite}`buffinton2005kane`", "book/part5/01_kane_rr",
                                 (equations, bib))
    assert shown.startswith("[[Buffinton, 2005](../references.bib \"Keith W. Buffinton (2005)")


def test_a_readers_edit_keeps_its_words_and_the_roles_come_back():
    nb = {"cells": [{"cell_type": "markdown", "metadata": {},
                     "source": "By {cite}`buffinton2005kane`, see {eq}`hb-5-13`."}]}
    br.rewrite(nb, "book/part5/01_kane_rr")
    shown = nb["cells"][0]["source"]
    assert "{cite}" not in shown and "(5.13)" in shown
    nb["cells"][0]["source"] = "A reader's note. " + shown
    br.restore(nb)
    assert nb["cells"][0] == {"cell_type": "markdown", "metadata": {}, "source":
                              "A reader's note. By {cite}`buffinton2005kane`, see {eq}`hb-5-13`."}


@pytest.mark.parametrize("path", ["book/intro.md", "notes.ipynb", "book/part1/99_none.ipynb"])
def test_other_files_are_served_as_they_are(path):
    assert br.docname(path) is None
