"""Sphinx extension: a display labelled with a source's equation shows that source's number.

Sphinx numbers the labelled displays of a page 1, 2, 3, ... in order, so the handbook's (5.13)
would appear as, say, (37). This extension gives every labelled display its number from the
label, in the equation and in every ``{eq}`` reference to it, in the HTML and the LaTeX (PDF):

* a seed label shows the seed's number -- ``hb-5-13`` the handbook's ``(5.13)``,
  ``uk-36`` the Udwadia-Kalaba review's ``(UK 36)``, ``ph-59`` the port-Hamiltonian paper's
  ``(PH 59)`` (labels are ``<prefix>-<number with dots as dashes>``);
* every other labelled display of a chapter ``book/partN/NN_topic`` is numbered by part (a
  Roman numeral), chapter and position on the page: ``(II.2.1)`` is the first of Part II,
  chapter 2. A seed number never has a Roman numeral, so the two cannot be confused.

Displays on pages outside the parts, and displays without a label, keep Sphinx's numbering.
A chapter needs nothing beyond the usual ``$$ ... $$ (label)``; the extension is registered in
``_config.yml`` (``sphinx: local_extensions``).

How: after a page is read, each labelled ``math_block`` gets its number string in
``node["number"]`` and in the math domain's table, which the HTML writer and the ``{eq}``
resolver print as ``(number)``; ``math_numfig`` is switched off so that they use it. The LaTeX
writer gets the same string as an amsmath ``\\tag``, so ``\\eqref`` prints it too.
"""
from __future__ import annotations

import re

#: the display form of each seed prefix's numbers; "{}" is the number with dots
SEED_FORMATS = {"hb": "{}", "uk": "UK {}", "ph": "PH {}"}
TAG = "seed_numbers_tag"        # node attribute: the number string this extension assigned

_SEED_LABEL = re.compile(r"^(?P<prefix>[a-z]+)-(?P<number>\d+(?:-\d+)*)$")
_CHAPTER_DOC = re.compile(r"(?:^|/)part(?P<part>\d+)/(?P<chapter>\d+)_[^/]+$")
_ROMAN = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def roman(n: int) -> str:
    """The Roman numeral of a positive integer: ``roman(4) == "IV"``."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"roman: expected a positive integer, got {n!r}")
    out = []
    for value, letters in _ROMAN:
        count, n = divmod(n, value)
        out.append(letters * count)
    return "".join(out)


def seed_number(label: str) -> str | None:
    """The number a seed label shows -- ``"5.13"`` for ``hb-5-13``, ``"UK 36"`` for ``uk-36``,
    ``"PH 59"`` for ``ph-59`` -- or None for a label that is not a seed's."""
    m = _SEED_LABEL.match(label)
    if not m or m["prefix"] not in SEED_FORMATS:
        return None
    return SEED_FORMATS[m["prefix"]].format(m["number"].replace("-", "."))


def chapter_prefix(docname: str) -> str | None:
    """``"II.1"`` for the doc ``book/part2/01_euler_lagrange``; None for a page outside the
    parts."""
    m = _CHAPTER_DOC.search(docname)
    if not m or int(m["part"]) < 1 or int(m["chapter"]) < 1:
        return None
    return f"{roman(int(m['part']))}.{int(m['chapter'])}"


def display_numbers(docname: str, labels):
    """{label: number string} for the labelled displays of one page, ``labels`` in page order:
    seed labels get the seed's number, the others ``<chapter prefix>.<k>`` counted among
    themselves (nothing for them on a page outside the parts)."""
    prefix, k, numbers = chapter_prefix(docname), 0, {}
    for label in labels:
        seed = seed_number(label)
        if seed is not None:
            numbers[label] = seed
        elif prefix is not None:
            k += 1
            numbers[label] = f"{prefix}.{k}"
    return numbers


def _number_page(app, doctree):
    """doctree-read: put the numbers on the page's displays and in the math domain."""
    from docutils import nodes     # here, not at the top: scripts/lab/book_refs.py numbers the
    env = app.env                  # displays for JupyterLab with this module, without Sphinx
    blocks = [b for b in doctree.findall(nodes.math_block)
              if b.get("label") and b.get("number") and not b.get("nowrap")]
    numbers = display_numbers(env.docname, [b["label"] for b in blocks])
    equations = env.get_domain("math").equations
    for block in blocks:
        number = numbers.get(block["label"])
        if number is None:
            continue
        block["number"] = number
        block[TAG] = number
        equations[block["label"]] = (env.docname, number)


def _latex_visit_math_block(self, node):
    """The LaTeX writer's display, with the assigned number as an amsmath ``\\tag``."""
    from docutils import nodes
    from sphinx.util.math import wrap_displaymath
    tag = node.get(TAG)
    if not tag or node.get("nowrap") or not node.get("label"):
        return type(self).visit_math_block(self, node)      # Sphinx's own (raises SkipNode)
    label = f"equation:{node['docname']}:{node['label']}"
    tex = wrap_displaymath(node.astext(), label, True)
    self.body.append(tex.replace(r"\label{%s}" % label, r"\label{%s}\tag{%s}" % (label, tag), 1))
    raise nodes.SkipNode


def _config_inited(app, config):
    # the HTML writer and the {eq} resolver print node["number"] / the domain's number only
    # when math_numfig is off (with it on they count figures-style per page)
    config.math_numfig = False


def setup(app):
    from docutils import nodes
    app.connect("config-inited", _config_inited)
    app.connect("doctree-read", _number_page)
    app.add_node(nodes.math_block, override=True, latex=(_latex_visit_math_block, None))
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}
