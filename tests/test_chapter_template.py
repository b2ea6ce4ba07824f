"""Every chapter opens its learning objectives the same way (issue 30, erratum 8): in its first
Markdown cell, after the title and an optional short lead, the paragraph
``**Learning objectives.** After this chapter you can`` and then 3 to 5 bullets, as
book/template.ipynb does. The other form some chapters had (a ``{admonition} Learning
objectives`` box) is refused anywhere in a chapter."""
import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OPENING = "**Learning objectives.** After this chapter you can"
BULLETS = re.compile(re.escape(OPENING) + r"\n\n((?:- .*\n(?:  .*\n)*)+)")


def _chapters():
    spec = importlib.util.spec_from_file_location("book_toc", ROOT / "scripts" / "book_toc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pages = module.toc_files(ROOT / "_toc.yml")
    return [p for p in pages if re.match(r"book/part\d+/", p)] + ["book/template"]


CHAPTERS = _chapters()


def objectives_problem(cells):
    """What is wrong with a chapter's learning objectives (its cells), or None."""
    markdown = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    if not markdown:
        return "no Markdown cell"
    if any(re.search(r"\{admonition\}\s*Learning objectives", m) for m in markdown):
        return "learning objectives in an admonition box; use the template's paragraph"
    first = markdown[0] + "\n"
    if OPENING not in first:
        return f"the first Markdown cell does not have {OPENING!r}"
    m = BULLETS.search(first)
    if not m:
        return f"{OPENING!r} is not followed by a blank line and a bullet list"
    n = len(re.findall(r"^- ", m.group(1), re.M))
    if not 3 <= n <= 5:
        return f"{n} learning objectives; 3 to 5 expected"
    return None


def test_the_book_has_chapters():
    assert len(CHAPTERS) > 30 and all((ROOT / f"{c}.ipynb").exists() for c in CHAPTERS)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_learning_objectives_template(chapter):
    cells = json.loads((ROOT / f"{chapter}.ipynb").read_text(encoding="utf-8"))["cells"]
    problem = objectives_problem(cells)
    assert problem is None, f"{chapter}: {problem}"


def _md(text):
    return {"cell_type": "markdown", "source": text}


def test_the_other_forms_are_refused():
    good = f"# T\n\n{OPENING}\n\n- a;\n- b;\n- c.\n"
    assert objectives_problem([_md(good)]) is None
    box = "# T\n\n```{admonition} Learning objectives\n:class: tip\n- a\n- b\n- c\n```\n"
    assert "admonition" in objectives_problem([_md(box)])
    assert "3 to 5" in objectives_problem([_md(f"# T\n\n{OPENING}\n\n- a\n- b\n")])
    assert "bullet" in objectives_problem([_md(f"# T\n\n{OPENING}\n- a\n- b\n- c\n")])
    assert "first Markdown" in objectives_problem([_md("# T\n"), _md(good)])


def numbering_problems(chapters):
    """Chapter files whose number breaks the table of contents' order (issue 30, erratum 9):
    within a part, ``book/partN/NN_topic`` with two digits, rising in reading order."""
    problems, last = [], {}
    for chapter in chapters:
        m = re.fullmatch(r"book/part(\d+)/(\d\d)_[a-z0-9_]+", chapter)
        if not m:
            problems.append(f"{chapter}: not book/partN/NN_topic")
            continue
        part, number = int(m[1]), int(m[2])
        if number <= last.get(part, 0):
            problems.append(f"{chapter}: number {number:02d} after {last[part]:02d}")
        last[part] = number
    return problems


def test_chapter_numbers_follow_the_table_of_contents():
    chapters = [c for c in CHAPTERS if c != "book/template"]
    problems = numbering_problems(chapters)
    assert not problems, "\n".join(problems) + "\n(rename with git mv and add the old name " \
        "to book_redirects in _config.yml)"
    assert numbering_problems(["book/part4/05_a", "book/part4/04_b"]) == [
        "book/part4/04_b: number 04 after 05"]
    assert numbering_problems(["book/part5/03a_x"]) == ["book/part5/03a_x: not book/partN/NN_topic"]
