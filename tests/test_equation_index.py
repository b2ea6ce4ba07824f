"""Tests of the equation index: the committed page book/equations.md equals what
scripts/equation_index.py generates, its counts agree with its own tables and with the seed list,
and the generator refuses inputs that disagree (on small books built in a temporary folder, so
every refusal is shown to happen)."""
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("equation_index",
                                               ROOT / "scripts" / "equation_index.py")
ei = importlib.util.module_from_spec(_spec)
sys.modules["equation_index"] = ei             # dataclasses look their module up there
_spec.loader.exec_module(ei)

SUMMARY = re.compile(r"\*\*Covered and verified: (\d+) of (\d+)\.\*\* Of the (\d+) equation "
                     r"numbers the seed texts show, (\d+) are derived in the book and checked by "
                     r"a test \((\d+) are derived\)\.")

# the numbers the extracted seed texts show beside an equation: 23 + 36 + 22 = 81. The
# Udwadia-Kalaba text cites (12), (14), (16), (22), (27), (34), (35) in its prose ("Eq. (12)")
# without their displays, so they are not shown; the port-Hamiltonian text lost the numbers of
# all its displays, and its prose places the 22 it names.
SHOWN = {
    "hb": ["5.5", "5.6", "5.7", "5.10"] + [f"5.{k}" for k in range(13, 32)],
    "uk": [str(k) for k in range(1, 51)
           if k not in (10, 12, 14, 16, 17, 21, 22, 27, 30, 31, 32, 33, 34, 35)],
    "ph": [str(k) for k in (21, 23, 24, 28, 29, 31, 33, 36, 37, 45, 46, 47, 49, 55, 59, 60, 62,
                            68, 76, 85, 87, 89)],
}


def summary_numbers(text):
    """(covered and verified, total, derived) of the headline; checks its two totals agree."""
    m = SUMMARY.search(text)
    assert m, "no headline"
    verified, total, total2, verified2, covered = map(int, m.groups())
    assert (total, verified) == (total2, verified2), f"the headline disagrees with itself: {m[0]}"
    return covered, total, verified


def page_counts(text):
    """Independent reading of a generated page: per `## ` section, (rows, rows not marked
    missing, rows with at least one test), from the counted table rows themselves (the context
    rows after a `### ...: context rows` heading are not counted)."""
    counts, current = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            counts[current] = [0, 0, 0]
        elif line.startswith("### ") and line.endswith(": context rows"):
            current = None
        elif current and re.match(r"^\| \(\S+\) \|", line):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            assert len(cells) == 6, line
            counts[current][0] += 1
            counts[current][1] += cells[3] != "**missing**"
            counts[current][2] += cells[5].startswith("`tests/")
    return {k: tuple(v) for k, v in counts.items()}


def summary_problems(text, seed_total):
    """Sentences naming every way the page's summary disagrees with its tables or the seed
    list; empty if consistent."""
    try:
        covered, total, verified = summary_numbers(text)
    except AssertionError as exc:
        return [str(exc)]
    rows = page_counts(text)
    problems = []
    sums = tuple(sum(r[i] for r in rows.values()) for i in range(3))
    if (total, covered, verified) != sums:
        problems.append(f"summary says {total}/{covered}/{verified}, tables hold {sums}")
    if total != seed_total:
        problems.append(f"summary says {total} seed equations, the seed list has {seed_total}")
    if not verified <= covered <= total:
        problems.append(f"counts out of order: {verified} <= {covered} <= {total} fails")
    for name, (n, c, v) in rows.items():
        per = re.search(rf"\| {re.escape(name)} \| (\d+) \| (\d+) \| (\d+) \| \d+ \|", text)
        if not per or tuple(map(int, per.groups())) != (n, c, v):
            problems.append(f"source table row of {name!r} disagrees with its table {n, c, v}")
    return problems


# ---------------------------------------------------------------------------- the real book

def test_committed_page_is_current():
    problem = ei.check(ROOT)
    assert problem is None, problem


def test_check_command_passes_on_the_repository(capsys):
    assert ei.main(["--check", "--root", str(ROOT)]) == 0
    assert "up to date" in capsys.readouterr().out


def test_seed_list_is_the_sources_numbered_equations():
    sources = {s.prefix: s for s in ei.load_seed_list(ROOT / ei.SEED_LIST)}
    assert list(sources) == ["hb", "uk", "ph"]
    numbers = {p: [e.number for e in s.equations] for p, s in sources.items()}
    assert numbers["hb"] == ["5.5", "5.6", "5.7"] + [f"5.{k}" for k in range(10, 32)]
    assert numbers["uk"] == [str(k) for k in range(1, 51)]
    assert numbers["ph"] == [str(k) for k in range(21, 90)]
    for s in sources.values():
        for e in s.equations:
            assert e.section.startswith("§"), e
            assert e.description is None or (isinstance(e.description, str)
                                              and 0 < len(e.description) <= 90), e
    # coverage is counted over the numbers the seed texts show; 5.11 and 5.12 are inferred
    shown = {p: [e.number for e in s.equations if e.shown] for p, s in sources.items()}
    assert shown == SHOWN and sum(map(len, shown.values())) == 81
    inferred = [e.label for s in sources.values() for e in s.equations if e.inferred]
    assert inferred == ["hb-5-11", "hb-5-12"] + [f"uk-{k}" for k in (10, 12, 14, 16, 22, 27,
                                                                     32, 33)]
    # the equations the book plan and the seeds name outright have a description
    named = ["hb-5-13", "hb-5-14", "hb-5-31", "uk-1", "uk-18", "uk-36", "uk-50", "ph-21",
             "ph-23", "ph-47", "ph-59", "ph-85", "ph-89"]
    described = {e.label for s in sources.values() for e in s.equations if e.description}
    assert set(named) <= described


def test_repository_inputs_agree_and_counts_are_consistent():
    index = ei.build_index(ROOT)
    for m in index.markers:
        assert m.test_id.startswith("tests/test_") and "::test_" in m.test_id, m
        assert set(m.labels) <= set(index.definitions), m
    text = (ROOT / ei.PAGE).read_text(encoding="utf-8")
    seed_total = sum(1 for s in index.sources for e in s.equations if e.shown)
    assert seed_total == 81
    assert summary_problems(text, seed_total) == []
    total, covered, verified = index.counts()
    assert total == seed_total
    assert summary_numbers(text) == (covered, total, verified)
    assert f"**Covered and verified: {verified} of 81.**" in text
    # the numbers shown only by citation are reported apart, as reconstructed
    hidden = index.counts(shown=False)
    assert f"**Reconstructed: {hidden[1]} of {hidden[0]}.**" in text
    assert index.counts("uk", shown=False)[0] == 14
    assert (total, covered, verified) == tuple(sum(r[i] for r in page_counts(text).values())
                                               for i in range(3))
    # the chapters written so far: Part I labels (5.5)-(5.7), Part II (5.10), (5.13)-(5.17);
    # (5.11) and (5.12) are derived too, as context rows
    assert covered >= 9 and verified >= 9
    assert index.counts("hb", shown=False) == (2, 2, 2)
    # an independent grep of the pages finds the same derived labels
    grep = set()
    for doc in ei.toc_docs(ROOT):
        path = ei.doc_file(ROOT, doc)
        grep |= set(re.findall(r"\$\$ \(((?:hb|uk|ph)-[0-9-]+)\)", path.read_text("utf-8")))
    assert grep == set(index.definitions)


def test_summary_check_can_fail():
    index = ei.build_index(ROOT)
    text = ei.render(index)
    seed_total = index.counts()[0]
    assert summary_problems(text, seed_total) == []
    total, covered, verified = index.counts()
    wrong = text.replace(f"({covered} are derived)", f"({covered + 1} are derived)")
    assert any("summary says" in p for p in summary_problems(wrong, seed_total))
    torn = text.replace(f"verified: {verified} of", f"verified: {verified + 1} of")
    assert any("headline" in p or "summary says" in p for p in summary_problems(torn, seed_total))
    assert any("seed list has" in p for p in summary_problems(text, seed_total + 1))
    first_test_row = next(line for line in text.splitlines() if "| `tests/" in line)
    untested = text.replace(first_test_row, first_test_row.rsplit("| `", 1)[0] + "| — |")
    assert summary_problems(untested, seed_total)


# ---------------------------------------------------------------------------- small books

SEEDS = {"sources": [
    {"prefix": "hb", "title": "Handbook", "seed": "h.txt", "equations": [
        {"number": "5.13", "section": "§5.3", "description": "Christoffel symbols"},
        {"number": "5.14", "section": "§5.3", "description": "M qdd + C qd + G = Y"},
        {"number": "5.15", "section": "§5.3.3", "description": "generalized force | pull-back"}]},
    {"prefix": "uk", "title": "UK review", "seed": "u.txt", "equations": [
        {"number": "36", "section": "§5", "description": None}]}]}

CHAPTER = [
    "# Chapter one\n\nIntro citing {eq}`hb-5-14` before it is defined.\n",
    "## 2. Theory\n\n$$\n\\Gamma_{ijk} = 0\n$$ (hb-5-13)\n\n```python\n$$ (hb-5-15)\n"
    "# not a heading\n```\n",
    "### 2.1 Vector form\n\n````{prf:definition} Equations\n:label: def-x\n```{math}\n"
    ":label: hb-5-14\nM\\ddot q = Y\n```\n````\n\nAnd ``{eq}`hb-5-15` `` is only code.\n",
]
TEST_FILE = '''import pytest


@pytest.mark.parametrize("x", [1, 2])
@pytest.mark.equation("hb-5-13")
def test_gamma(x):
    assert x


class TestVector:
    @pytest.mark.equation("hb-5-13", "hb-5-14")
    def test_m(self):
        pass


def test_unmarked():
    pass
'''


def notebook(cells):
    return json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": c}
                                 for c in cells]
                       + [{"cell_type": "code", "metadata": {}, "execution_count": None,
                           "outputs": [], "source": "x = '$$ (hb-5-15)'\n"}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def make_book(tmp, chapter=CHAPTER, second="# Page two\n\nUses {eq}`hb-5-13`.\n",
              tests=TEST_FILE, seeds=SEEDS):
    """A book with two pages (a notebook and a .md), one test file and a seed list."""
    (tmp / "book" / "_data").mkdir(parents=True)
    (tmp / "tests").mkdir()
    (tmp / "_toc.yml").write_text(yaml.safe_dump({
        "format": "jb-book", "root": "book/one",
        "parts": [{"caption": "A", "chapters": [{"file": "book/two"}]},
                  {"caption": "Reference", "chapters": [{"file": "book/equations"}]}]}))
    (tmp / "book" / "one.ipynb").write_text(notebook(chapter))
    (tmp / "book" / "two.md").write_text(second)
    (tmp / "tests" / "test_x.py").write_text(tests)
    (tmp / ei.SEED_LIST).write_text(yaml.safe_dump(seeds, allow_unicode=True))
    return tmp


def problems_of(root):
    with pytest.raises(ei.EquationIndexError) as err:
        ei.build_index(root)
    return "\n".join(err.value.problems)


def test_small_book_index(tmp_path):
    index = ei.build_index(make_book(tmp_path))
    d13, d14 = index.definitions["hb-5-13"], index.definitions["hb-5-14"]
    assert (d13.doc, d13.title, d13.section, d13.kind) == \
        ("book/one", "Chapter one", "2. Theory", "math")
    assert (d14.section, d14.kind) == ("2.1 Vector form", "math")
    assert "hb-5-15" not in index.definitions            # code fence, code cell, code span
    assert index.references == {"hb-5-14": ["book/one"], "hb-5-13": ["book/two"]}
    assert index.tests_for("hb-5-13") == ["tests/test_x.py::test_gamma",
                                          "tests/test_x.py::TestVector::test_m"]
    assert index.counts() == (4, 2, 2) and index.counts("uk") == (1, 0, 0)
    text = ei.render(index)
    assert summary_problems(text, 4) == []
    assert "**Covered and verified: 2 of 4.** Of the 4 equation numbers the seed texts show, 2 " \
        "are derived in the book and checked by a test (2 are derived)." in text
    row15 = next(line for line in text.splitlines() if line.startswith("| (5.15)"))
    assert "**missing**" in row15 and "generalized force \\| pull-back" in row15
    row13 = next(line for line in text.splitlines() if line.startswith("| (5.13)"))
    assert "[Chapter one](/book/one.ipynb), § 2. Theory: {eq}`hb-5-13`" in row13
    assert "[Page two](/book/two.md)" in row13 and "`tests/test_x.py::test_gamma`" in row13
    assert "*not shown in the extracted seed text*" in text              # uk-36


def test_target_labels_link_with_ref(tmp_path):
    chapter = ["# One\n\n## S\n\n(hb-5-13)=\n$$\nx\n$$\n"]
    index = ei.build_index(make_book(tmp_path, chapter=chapter,
                                     tests="def test_nothing():\n    pass\n"))
    assert index.definitions["hb-5-13"].kind == "target"
    assert "{ref}`(5.13) <hb-5-13>`" in ei.render(index)


def test_stale_page_is_reported(tmp_path, capsys):
    root = make_book(tmp_path)
    assert ei.check(root) == f"{ei.PAGE} does not exist; run `make equations`"
    assert ei.main(["--root", str(root)]) == 0
    assert ei.check(root) is None
    assert ei.main(["--check", "--root", str(root)]) == 0
    # a chapter gains (5.15): the page no longer says what the book holds
    two = root / "book" / "two.md"
    two.write_text(two.read_text() + "\n## New\n\n$$\nY = J^TW\n$$ (hb-5-15)\n")
    message = ei.check(root)
    assert message.startswith(f"{ei.PAGE} is stale") and "make equations" in message
    assert "+| (5.15) | generalized force" in message and "-| (5.15)" in message
    capsys.readouterr()
    assert ei.main(["--check", "--root", str(root)]) == 1
    assert "is stale" in capsys.readouterr().err
    # regenerate: fresh again; then a test is renamed: stale again
    assert ei.main(["--root", str(root)]) == 0 and ei.check(root) is None
    tests = root / "tests" / "test_x.py"
    tests.write_text(tests.read_text().replace("def test_gamma", "def test_christoffel"))
    assert "test_christoffel" in ei.check(root)


def test_marker_naming_an_undefined_label_is_refused(tmp_path, capsys):
    tests = TEST_FILE.replace('equation("hb-5-13")', 'equation("hb-5-15")')
    root = make_book(tmp_path, tests=tests)
    text = problems_of(root)
    assert "tests/test_x.py::test_gamma (tests/test_x.py:5) is marked as checking hb-5-15" in text
    assert "no page of _toc.yml defines hb-5-15" in text and "seed list" not in text
    assert ei.main(["--root", str(root)]) == 2
    assert "hb-5-15" in capsys.readouterr().err
    assert not (root / ei.PAGE).exists()
    bogus = make_book(tmp_path / "b", tests=TEST_FILE.replace('"hb-5-14"', '"hb-9-99"'))
    assert f"defines hb-9-99 (and it is not in {ei.SEED_LIST} either)" in problems_of(bogus)


def test_page_label_outside_the_seed_list_is_refused(tmp_path):
    chapter = CHAPTER + ["## Extra\n\n$$\nz\n$$ (hb-5-99)\n\n$$\nw\n$$ (own-label)\n"]
    text = problems_of(make_book(tmp_path, chapter=chapter))
    assert "hb-5-99 (book/one.ipynb cell 3 line 5) is not a numbered equation of the seed list" \
        in text
    assert "own-label" not in text                      # the book's own labels are free


def test_label_defined_twice_is_refused(tmp_path):
    second = "# Page two\n\n## Again\n\n(hb-5-13)=\n$$\nx\n$$\n"
    text = problems_of(make_book(tmp_path, second=second))
    assert "hb-5-13 is defined 2 times: book/one.ipynb cell 1 line 5, book/two.md line 5" in text


@pytest.mark.parametrize("decorator, expected", [
    ("@pytest.mark.equation", "got a bare @pytest.mark.equation"),
    ("@pytest.mark.equation()", "takes one or more label strings"),
    ("@pytest.mark.equation(LABEL)", "got pytest.mark.equation(LABEL)"),
    ("@pytest.mark.equation('hb-5-13', why='x')", "takes one or more label strings"),
])
def test_malformed_markers_are_refused(tmp_path, decorator, expected):
    tests = f"import pytest\nLABEL = 'hb-5-13'\n\n\n{decorator}\ndef test_a():\n    pass\n"
    assert expected in problems_of(make_book(tmp_path, tests=tests))


def test_markers_in_unread_places_are_refused(tmp_path):
    tests = ("import pytest\n\n\n@pytest.mark.equation('hb-5-13')\ndef helper():\n    pass\n\n\n"
             "@pytest.mark.parametrize('x', [pytest.param(1, marks=pytest.mark.equation("
             "'hb-5-14'))])\ndef test_b(x):\n    pass\n")
    text = problems_of(make_book(tmp_path, tests=tests))
    assert "tests/test_x.py:4: the equation marker is on 'helper', which pytest does not" in text
    assert "tests/test_x.py:9: the equation marker is only read as a decorator" in text


def test_module_pytestmark_is_read(tmp_path):
    tests = "import pytest\n\npytestmark = [pytest.mark.equation('hb-5-14')]\n"
    index = ei.build_index(make_book(tmp_path, tests=tests))
    assert index.tests_for("hb-5-14") == ["tests/test_x.py"]


def test_bad_seed_list_and_toc_are_refused(tmp_path):
    seeds = {"sources": [{"prefix": "hb", "title": "H", "equations": [
        {"number": "5.13", "section": "§5.3", "description": "a"},
        {"number": "5.13", "section": "§5.3", "description": "b"},
        {"number": "5.14", "section": "§5.3"}]}]}
    text = problems_of(make_book(tmp_path, seeds=seeds))
    assert "hb-5-13 is listed twice" in text and "needs number, section and description" in text
    root = make_book(tmp_path / "b")
    (root / "book" / "two.md").unlink()
    assert "neither book/two.ipynb nor book/two.md exists" in problems_of(root)


def test_context_rows_are_listed_but_not_counted(tmp_path):
    seeds = yaml.safe_load(yaml.safe_dump(SEEDS))
    hb = seeds["sources"][0]
    hb["equations"].insert(0, {"number": "5.12", "section": "§5.3", "description": "components"})
    hb["not_shown"], hb["inferred"] = ["5.12", "5.15"], ["5.12"]
    chapter = CHAPTER + ["## More\n\n$$\nq\n$$ (hb-5-12)\n"]
    index = ei.build_index(make_book(tmp_path, chapter=chapter, seeds=seeds))
    assert index.counts() == (3, 2, 2)                       # 5.13, 5.14, uk-36
    assert index.counts(shown=False) == (2, 1, 0)            # 5.12 derived, untested; 5.15
    text = ei.render(index)
    assert summary_problems(text, 3) == []
    assert "**Covered and verified: 2 of 3.**" in text
    assert "**Reconstructed: 1 of 2.**" in text
    assert "The other 2 numbers" in text and "The book reconstructs 1 of them (0 checked" in text
    assert "| Handbook | 2 | 2 | 2 | 2 | 1 |" in text
    context = text.split("### Handbook: context rows", 1)[1].split("## ", 1)[0]
    assert "| (5.12) | *reconstructed:* *number inferred:* components |" in context
    assert "| (5.15) | generalized force" in context and "| (5.13)" not in context
    # not_shown and inferred must name listed numbers, and inferred ones are not shown
    bad = yaml.safe_load(yaml.safe_dump(SEEDS))
    bad["sources"][0]["not_shown"], bad["sources"][0]["inferred"] = ["5.99"], ["5.14"]
    text = problems_of(make_book(tmp_path / "b", seeds=bad))
    assert "not_shown names numbers that are not in its equations: ['5.99']" in text
    assert "add ['5.14'] to not_shown" in text
