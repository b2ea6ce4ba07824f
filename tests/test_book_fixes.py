"""The Sphinx extension book/_ext/book_fixes.py: proofs keep a "Proof" title in LaTeX, the
bibliography's labels are author-year like the citations, and a "References" heading emptied by
the LaTeX builder (its bibliography moved to the end) leaves the PDF. Built on a small project."""
import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXT = ROOT / "book" / "_ext"
_spec = importlib.util.spec_from_file_location("book_fixes", EXT / "book_fixes.py")
bf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bf)

BIB = """@book{lynch2017modern, author = {Kevin M. Lynch and Frank C. Park}, title = {Modern
Robotics}, publisher = {CUP}, year = {2017}}
@book{featherstone2008rigid, author = {Roy Featherstone}, title = {Rigid Body Dynamics
Algorithms}, publisher = {Springer}, year = {2008}}
@book{murray1994mathematical, author = {Richard M. Murray and Zexiang Li and S. Shankar Sastry},
title = {A Mathematical Introduction to Robotic Manipulation}, publisher = {CRC}, year = {1994}}
@book{docarmo1992riemannian, author = {Manfredo P. do Carmo}, title = {Riemannian Geometry},
publisher = {Birkh{\\"a}user}, year = {1992}}
"""


def test_author_year_label():
    from pybtex.database import parse_string
    entries = parse_string(BIB, "bibtex").entries
    assert [bf.author_year_label(entries[k]) for k in entries] == [
        "Lynch and Park, 2017", "Featherstone, 2008", "Murray et al., 1994", "do Carmo, 1992"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("sphinxcontrib.bibtex")
    src = tmp_path_factory.mktemp("fixes")
    (src / "refs.bib").write_text(BIB)
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(EXT)!r})\n"
        "extensions = ['myst_parser', 'sphinx_proof', 'sphinxcontrib.bibtex', 'book_fixes']\n"
        "bibtex_bibfiles = ['refs.bib']\nbibtex_reference_style = 'author_year'\n"
        "bibtex_default_style = 'authoryear'\nnumfig = True\n")
    (src / "index.md").write_text("# Top\n\n```{toctree}\none\n```\n\n## References\n\n"
                                  "```{bibliography}\n```\n")
    (src / "one.md").write_text(
        "# One\n\n```{prf:theorem} A claim\n:label: thm-a\nIt holds {cite}`lynch2017modern`.\n"
        "```\n\n```{prf:proof}\nObvious from {cite}`docarmo1992riemannian`.\n```\n")
    from sphinx.application import Sphinx
    out = {}
    # the LaTeX build sets ROBODYN_PDF_DPI and MATPLOTLIBRC for the notebooks it runs
    # (book_fixes._pdf_pictures); taken back afterwards, or every later test of this worker
    # made its pictures at the PDF's dpi
    environ = dict(os.environ)
    try:
        for builder in ("latex", "html"):
            d = src / "_build" / builder
            Sphinx(str(src), str(src), str(d), str(d / ".doctrees"), builder, status=None,
                   warning=None, freshenv=True).build()
            out[builder] = d
    finally:
        os.environ.clear()
        os.environ.update(environ)
    return out


def test_latex_proof_title_labels_and_no_empty_references(built):
    tex = next(built["latex"].glob("*.tex")).read_text()
    assert r"\begin{sphinxadmonition}{note}{Proof}" in tex
    assert "Proof. Obvious" not in tex and "Obvious from" in tex
    labels = re.findall(r"\\bibitem\[([^\]]+)\]", tex)
    assert sorted(labels) == ["Lynch and Park, 2017", "do Carmo, 1992"]
    cited = re.findall(r"\\hyperlink\{cite\.[^}]+\}\{([^}]+)\}", tex)
    assert {c.replace("\xa0", " ") for c in cited} == set(labels)  # the text cites what the list labels
    assert r"\chapter{References}" not in tex and r"\section{References}" not in tex
    assert r"\begin{sphinxthebibliography}" in tex


def test_html_bibliography_labels(built):
    page = (built["html"] / "index.html").read_text()
    labels = re.findall(r'class="label"><span class="fn-bracket">\[</span>([^<]+)<', page)
    assert sorted(labels) == ["Lynch and Park, 2017", "do Carmo, 1992"]
