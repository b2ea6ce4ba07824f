"""scripts/lab/book_refs.py over every page of the book (the fast check of issue 39, item 2;
tests/browser/test_lab.py shows three chapters in JupyterLab): what JupyterLab is served has
every reference to another chapter, every labelled display of a chapter, every citation and
every ``{ref}``/``{numref}`` resolved, and what it saves is the book's text, byte for byte.
What ``{ref}``/``{numref}`` print is checked against Sphinx itself: a small book built with
sphinx-exercise, every form of the roles compared with the HTML."""
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
    problems, resolved, refs = [], 0, 0
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
            left += [m[0] for m in br._REF.finditer(text)]
            refs += sum("ref}`" in original for _, original in
                        cell.get("metadata", {}).get(br.KEY, {}).get("pairs", []))
            if doc.startswith("book/part"):        # a chapter: the book numbers every display
                left += [m["label"] for m in br._DISPLAY.finditer(text)]
            if left:
                problems.append(f"{doc}: unresolved {left[:5]}")
        br.restore(nb)
        if nb != original:
            problems.append(f"{doc}: saving would change the page")
    assert not problems, "\n".join(problems)
    assert resolved > 600, resolved
    assert refs >= 49, refs              # errata39's chapter and exercise references


def test_numbers_and_citations_are_the_books():
    """Spot checks against the book's rules: a chapter's first own display is (II.2.1), a
    seed's label shows the seed's number, a reference to another chapter links its notebook,
    a citation is author-year with the whole entry on hover."""
    equations, bib, _ = br.book_index()
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


def test_references_to_chapters_and_exercises_are_the_books():
    """A chapter's label shows the chapter's title (its first cell's heading) and links its
    notebook; explicit text stays the text; an exercise without text is "Exercise N"."""
    index = br.book_index()
    first = json.loads((ROOT / "book/part4/04_many_contacts.ipynb").read_text())["cells"][0]
    title = _text(first).splitlines()[1].lstrip("# ").strip()
    shown, pairs = br.rewrite_source("({ref}`ch-many-contacts`)", "book/part4/05_newtons_cradle",
                                     index)
    assert shown == f"([{title}](04_many_contacts.ipynb))", shown
    assert pairs == [(shown[1:-1], "{ref}`ch-many-contacts`")]
    shown, _ = br.rewrite_source("{ref}`The chapter on wall contacts <ch-wall-contacts>`",
                                 "book/part2/01_euler_lagrange", index)
    assert shown == "[The chapter on wall contacts](../part4/03_wall_contacts.ipynb)", shown
    shown, _ = br.rewrite_source("{ref}`ex-imp-3` {numref}`Ex. %s <ex-imp-3>`",
                                 "book/part4/03_wall_contacts", index)
    number = re.fullmatch(r"\[Exercise (\d+)\]\(01_impact_equations\.ipynb\) "
                          r"\[Ex\. (\d+)\]\(01_impact_equations\.ipynb\)", shown)
    assert number and number[1] == number[2] and int(number[1]) > 50, shown
    for unknown in ("{ref}`ch-no-such-chapter`", "{numref}`ch-many-contacts`",
                    "{ref}`text <no-such-label>`"):      # the book warns: the lab shows "⚠"
        assert br.rewrite_source(unknown, "book/part4/03_wall_contacts", index) == (unknown, [])


# ---------------------------------------------------------------------------- against Sphinx

SMALL_BOOK = {
    "index": "# Top\n\n```{toctree}\na\nb\n```\n",
    "a": """(ch-a)=
# Chapter A

(sec-a)=
(sec-a-again)=

## A section

```{exercise}
:label: ex-a-1
First.
```

```{solution} ex-a-1
:label: sol-a-1
:class: dropdown
A solution.
```

````markdown
```{exercise}
:label: ex-in-code
Only shown, never numbered.
```
````

```{exercise} With a title
:label: ex-a-2
Second.
```

```{exercise}
:label: ex-a-nonum
:nonumber:
Unnumbered.
```

```{exercise}
:label: ex-a-hidden
:hidden:
Hidden.
```

```{exercise}
No label, still numbered.
```

:::{exercise}
:label: ex-a-colon
A colon fence.
:::

```{exercise}
---
label: ex-a-yaml
---
Options in YAML.
```

(par-a)=
A paragraph.
""",
    "b": """(ch-b)=
# Chapter B

```{exercise}
:label: ex-b-1
In B.
```
""",
}
ROLES = ["{ref}`ex-a-1`", "{ref}`some text <ex-a-1>`", "{numref}`ex-a-1`",
         "{numref}`Ex. %s <ex-a-1>`", "{numref}`{name} no. {number} <ex-a-2>`", "{ref}`ex-a-2`",
         "{ref}`ex-a-nonum`", "{numref}`ex-a-nonum`", "{ref}`ex-a-hidden`", "{ref}`ex-a-colon`",
         "{ref}`ex-a-yaml`", "{ref}`ex-b-1`", "{ref}`ex-in-code`", "{ref}`sol-a-1`",
         "{numref}`sol-a-1`", "{ref}`a solution <sol-a-1>`", "{ref}`ch-a`", "{ref}`CH-A`",
         "{ref}`Back to A <ch-a>`", "{numref}`ch-a`", "{ref}`sec-a`", "{ref}`sec-a-again`",
         "{ref}`par-a`", "{ref}`a paragraph <par-a>`", "{ref}`ch-b`", "{ref}`no-such-label`"]


def _sphinx_small_book(src):
    """{role: (text, page) or None where Sphinx leaves it unresolved} of page b's ROLES."""
    from sphinx.application import Sphinx
    (src / "conf.py").write_text("extensions = ['myst_parser', 'sphinx_exercise']\n"
                                 "myst_enable_extensions = ['colon_fence']\n")
    for name, text in SMALL_BOOK.items():
        body = text + ("\n" + "\n\n".join(f"R{k} {r}" for k, r in enumerate(ROLES))
                       if name == "b" else "")
        (src / f"{name}.md").write_text(body + "\n")
    out = src / "_build"
    Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), "html", status=None,
           warning=None, freshenv=True).build()
    page = (out / "b.html").read_text()
    found = {}
    for k, role in enumerate(ROLES):
        inner = re.search(rf"<p>R{k} (.*?)</p>", page, re.S)[1]
        link = re.search(r'<a class="reference internal" href="([^"#]*)[^"]*">(.*?)</a>', inner)
        found[role] = None if link is None else (
            re.sub(r"<[^>]+>", "", link[2]), link[1].removesuffix(".html") or "b")
    return found


def test_refs_print_what_sphinx_prints(tmp_path):
    sphinx = _sphinx_small_book(tmp_path)
    pages = [(name, [("markdown", text)]) for name, text in SMALL_BOOK.items()]
    index = ({}, {}, br.label_index(pages))
    ours = {}
    for role in ROLES:
        shown, _ = br.rewrite_source(role, "b", index)
        link = re.fullmatch(r"\[(.*)\]\((\w+)\.ipynb\)", shown)
        assert link or shown == role, shown
        ours[role] = (link[1], link[2]) if link else None
    assert ours == sphinx
    assert sphinx["{ref}`ex-b-1`"] == ("Exercise 6", "b")     # one count over the book
    assert sum(v is None for v in sphinx.values()) == 7       # the forms the build warns on
