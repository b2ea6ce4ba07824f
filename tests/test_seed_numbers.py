"""The Sphinx extension book/_ext/seed_numbers.py: seed-labelled displays show the seed's number
((5.13), (UK 36), (PH 59)) and the book's own labelled displays a part-chapter number (II.1.2), in
the equation and in every {eq} reference, in HTML and LaTeX. The pure functions are tested
directly, the whole mechanism on a two-page Sphinx project built in a temporary folder."""
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("seed_numbers",
                                               ROOT / "book" / "_ext" / "seed_numbers.py")
sn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sn)


def test_roman():
    assert [sn.roman(k) for k in (1, 2, 4, 6, 9, 14, 40, 1994)] == \
        ["I", "II", "IV", "VI", "IX", "XIV", "XL", "MCMXCIV"]
    for bad in (0, -1, 2.0, "3"):
        with pytest.raises(ValueError, match="roman: expected a positive integer"):
            sn.roman(bad)


@pytest.mark.parametrize("label, number", [
    ("hb-5-13", "5.13"), ("hb-5-31", "5.31"), ("uk-36", "UK 36"), ("ph-59", "PH 59"),
    ("uk-1", "UK 1"), ("prop-passivity", None), ("hb-", None), ("xx-5-13", None),
    ("hb-5-13a", None), ("HB-5-13", None)])
def test_seed_number(label, number):
    assert sn.seed_number(label) == number


def test_chapter_prefix_and_page_numbers():
    assert sn.chapter_prefix("book/part2/01_euler_lagrange") == "II.1"
    assert sn.chapter_prefix("book/part6/12_assignments") == "VI.12"
    assert sn.chapter_prefix("book/intro") is None
    assert sn.chapter_prefix("book/part0/01_x") is None
    labels = ["hb-5-10", "own-a", "hb-5-13", "own-b", "uk-36", "ph-59"]
    assert sn.display_numbers("book/part2/01_x", labels) == {
        "hb-5-10": "5.10", "own-a": "II.1.1", "hb-5-13": "5.13", "own-b": "II.1.2",
        "uk-36": "UK 36", "ph-59": "PH 59"}
    # outside the parts only seed labels are renumbered
    assert sn.display_numbers("book/notation", ["own-a", "hb-5-13"]) == {"hb-5-13": "5.13"}
    # a seed number can never look like an own number (Roman part numeral)
    own = sn.display_numbers("book/part3/02_x", [f"e{k}" for k in range(30)])
    assert all(re.fullmatch(r"III\.2\.\d+", v) for v in own.values())


PAGE_ONE = """# Chapter one

$$
a = b
$$ (hb-5-13)

$$
c = d
$$ (own-first)

$$
e = f
$$ (uk-36)

$$
g = h
$$ (own-second)

Unlabelled:

$$
x = y
$$

See {eq}`hb-5-13`, {eq}`own-second`, {eq}`ph-59`.
"""
PAGE_TWO = """# Chapter two

$$
p = q
$$ (ph-59)

$$
r = s
$$ (own-third)

Cites {eq}`hb-5-13` and {eq}`uk-36` and {eq}`own-first`.
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    pytest.importorskip("myst_parser")
    src = tmp_path_factory.mktemp("book")
    (src / "book" / "part2").mkdir(parents=True)
    (src / "book" / "part2" / "01_one.md").write_text(PAGE_ONE)
    (src / "book" / "part2" / "02_two.md").write_text(PAGE_TWO)
    (src / "index.md").write_text("# Top\n\n```{toctree}\nbook/part2/01_one\nbook/part2/02_two\n```\n")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'book' / '_ext')!r})\n"
        "extensions = ['myst_parser', 'seed_numbers']\n"
        "myst_enable_extensions = ['dollarmath', 'amsmath']\n"
        "numfig = True\nmath_numfig = True\n")            # the extension switches it off
    return src


def build(src, builder):
    from sphinx.application import Sphinx
    out = src / "_build" / builder
    app = Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), builder,
                 status=None, warning=None, freshenv=True)
    app.build()
    return out


def eqnos(html):
    return re.findall(r'<span class="eqno">\((.*?)\)', html)


def test_html_equations_and_references(project):
    out = build(project, "html")
    one = (out / "book" / "part2" / "01_one.html").read_text()
    two = (out / "book" / "part2" / "02_two.html").read_text()
    assert eqnos(one) == ["5.13", "II.1.1", "UK 36", "II.1.2"]
    assert eqnos(two) == ["PH 59", "II.2.1"]
    refs_one = re.findall(r'href="[^"]*#equation-([\w-]+)"[^>]*>\((.*?)\)</a>', one)
    refs_two = re.findall(r'href="[^"]*#equation-([\w-]+)"[^>]*>\((.*?)\)</a>', two)
    assert refs_one == [("hb-5-13", "5.13"), ("own-second", "II.1.2"), ("ph-59", "PH 59")]
    assert refs_two == [("hb-5-13", "5.13"), ("uk-36", "UK 36"), ("own-first", "II.1.1")]


def test_latex_tags_and_references(project):
    out = build(project, "latex")
    tex = next(out.glob("*.tex")).read_text()
    tags = re.findall(r"\\label\{equation:([^}]+)\}\\tag\{([^}]+)\}", tex)
    assert tags == [("book/part2/01_one:hb-5-13", "5.13"), ("book/part2/01_one:own-first", "II.1.1"),
                    ("book/part2/01_one:uk-36", "UK 36"), ("book/part2/01_one:own-second", "II.1.2"),
                    ("book/part2/02_two:ph-59", "PH 59"), ("book/part2/02_two:own-third", "II.2.1")]
    # references print the tag through \eqref; the unlabelled display gets no number
    assert tex.count(r"\eqref{equation:") == 6
    assert r"\begin{equation*}" in tex
