"""Sphinx extension: small fixes of what the book's extensions produce, mostly for the PDF.

* **Proofs in LaTeX.** sphinx-proof writes a ``{prf:proof}`` as an admonition without a title
  whose text starts with "Proof. "; Sphinx's LaTeX writer then opens
  ``\\begin{sphinxadmonition}{note}`` and the box's title bar takes the first token of the text
  (an empty bar). For the LaTeX builder the admonition gets the title "Proof" and the text loses
  its "Proof. " prefix.
* **Bibliography labels.** The text cites author--year, "(Lynch and Park, 2017)"
  (``bibtex_reference_style: author_year``), while pybtex's default labels the bibliography
  "[LP17]". The style ``authoryear`` (pybtex's ``plain`` order and formatting, labels "Lynch and
  Park, 2017") makes the two match, in HTML and PDF; ``_config.yml`` selects it with
  ``bibtex_default_style: authoryear``.
* **200 dpi pictures for the PDF.** For a LaTeX build the notebooks' kernels (started by this
  process, so they inherit its environment) get ``MATPLOTLIBRC=scripts/latex/matplotlibrc``
  (``figure.dpi: 200``: the plt.show() figures) and ``ROBODYN_PDF_DPI=200`` (the still pictures
  of :mod:`robodyn.viz`'s interactive figures and animations); the HTML build keeps 100 dpi.
  A LaTeX build reads every notebook again (it would otherwise reuse the doctrees, pictures
  included, of an earlier HTML build in the same ``_build``).
* **Empty "References" sections in LaTeX.** sphinxcontrib-bibtex moves every ``{bibliography}``
  to the end of the LaTeX document, where Sphinx gives it its own "Bibliography" chapter; a
  section left with nothing but its heading (e.g. "References" above the directive) is removed
  from the LaTeX doctree, and so is such a heading of the root page (which
  sphinx-jupyterbook-latex turns from a section into a heading node).
"""
from __future__ import annotations

import os
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

PROOF_PREFIX = "Proof. "
PDF_DPI = "200"
MATPLOTLIBRC = Path(__file__).resolve().parents[2] / "scripts" / "latex" / "matplotlibrc"


def author_year_label(entry) -> str:
    """``"Lynch and Park, 2017"``, ``"Featherstone, 2008"``, ``"Ortega et al., 1989"``: the label
    of a pybtex entry, as the author--year citations print it."""
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [" ".join(p.prelast_names + p.last_names) for p in persons]
    names = [n.replace("{", "").replace("}", "") for n in names if n]
    if not names:
        who = entry.fields.get("title", entry.key).split(":")[0]
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


def _register_pybtex_style():
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.plain import Style as PlainStyle
    from pybtex.style.labels import BaseLabelStyle

    class AuthorYearLabels(BaseLabelStyle):
        def format_labels(self, sorted_entries):
            seen = {}
            for entry in sorted_entries:
                label = author_year_label(entry)
                seen[label] = seen.get(label, 0) + 1
                # two works of the same authors and year: 2017a, 2017b (rare; keeps labels unique)
                yield label if seen[label] == 1 else f"{label}{chr(ord('a') + seen[label] - 1)}"

    class AuthorYearStyle(PlainStyle):
        default_label_style = "authoryear"

    for group, cls in (("pybtex.style.labels", AuthorYearLabels),
                       ("pybtex.style.formatting", AuthorYearStyle)):
        try:
            register_plugin(group, "authoryear", cls)
        except Exception:          # registered already (a second Sphinx app in one process)
            pass


class LatexProofTitles(SphinxPostTransform):
    """LaTeX only: give sphinx-proof's proof admonitions a title instead of the text prefix."""
    default_priority = 400
    formats = ("latex",)

    def run(self, **kwargs):
        for adm in list(self.document.findall(nodes.admonition)):
            if "proof" not in adm.get("classes", []) or \
                    (adm.children and isinstance(adm.children[0], nodes.title)):
                continue
            first = next(iter(adm.findall(nodes.Text)), None)
            if first is not None and str(first).startswith(PROOF_PREFIX):
                first.parent.replace(first, nodes.Text(str(first)[len(PROOF_PREFIX):]))
            adm.insert(0, nodes.title("", "Proof"))


def _is_empty(node) -> bool:
    """A target, or a container left empty (a bibliography whose citations were moved)."""
    if isinstance(node, nodes.target):
        return True
    return isinstance(node, nodes.container) and not node.astext().strip() and \
        not any(True for _ in node.findall(nodes.image))


class LatexDropEmptySections(SphinxPostTransform):
    """LaTeX only: remove a section that holds nothing but its title, targets and emptied
    containers -- a "References" heading whose bibliography the LaTeX builder moved to the end
    (after Sphinx's BibliographyTransform, priority 750)."""
    default_priority = 900
    formats = ("latex",)

    def run(self, **kwargs):
        for section in list(self.document.findall(nodes.section)):
            body = [c for c in section.children if not isinstance(c, nodes.title)]
            if all(_is_empty(c) for c in body) and section.parent is not None:
                section.parent.remove(section)
        # the root page (intro): sphinx-jupyterbook-latex flattens its sections into headings
        # (RootHeader nodes, priority 700); drop a heading with nothing under it before the next
        # heading, section or the toctree of the parts
        for header in [n for n in self.document.findall(nodes.Element)
                       if type(n).__name__ == "RootHeader"]:
            parent = header.parent
            if parent is None:
                continue
            following = parent.children[parent.index(header) + 1:]
            under = []
            for node in following:
                if type(node).__name__ in ("RootHeader", "start_of_file") or \
                        isinstance(node, nodes.section) or \
                        (isinstance(node, nodes.compound) and
                         "toctree-wrapper" in node.get("classes", [])):
                    break
                under.append(node)
            if all(_is_empty(n) for n in under):
                parent.remove(header)


def _pdf_pictures(app):
    """builder-inited: for LaTeX, the environment the notebooks are executed in."""
    if app.builder.format == "latex":
        os.environ.setdefault("ROBODYN_PDF_DPI", PDF_DPI)
        if MATPLOTLIBRC.is_file():
            os.environ.setdefault("MATPLOTLIBRC", str(MATPLOTLIBRC))


def _reexecute_notebooks(app, env, added, changed, removed):
    """env-get-outdated: a LaTeX build reads (executes) every notebook again, so that its
    pictures are made at the PDF's dpi, not reused from an HTML build's doctrees."""
    if app.builder.format != "latex":
        return []
    return sorted(doc for doc in env.found_docs
                  if str(env.doc2path(doc)).endswith(".ipynb") and doc not in added | changed)


def setup(app):
    _register_pybtex_style()
    app.connect("builder-inited", _pdf_pictures)
    app.connect("env-get-outdated", _reexecute_notebooks)
    app.add_post_transform(LatexProofTitles)
    app.add_post_transform(LatexDropEmptySections)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
