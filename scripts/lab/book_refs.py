"""The book's references and citations in a reader's JupyterLab, as the book shows them.

jupyterlab-myst renders one notebook at a time: an ``{eq}`` to another chapter and a ``{cite}``
of ``book/references.bib`` show as "⚠ label", and it numbers a chapter's displays (1), (2), …
where the book writes (IV.6.1) (its issue jupyter-book/jupyterlab-myst#218). So ``make lab``'s
server hands JupyterLab the chapters with these resolved (:class:`BookContentsManager`, named in
``scripts/lab/jupyter_server_config.json``), from an index of the whole book made here with
the book's own numbering (``book/_ext/seed_numbers.py``) and scanner
(``scripts/equation_index.py``):

- a labelled display ``$$ … $$ (label)`` carries its number as ``\\tag{IV.6.1}``;
- ``{eq}`label``` becomes "(IV.6.1)", a link to the chapter when it is another one;
- ``{cite}`key``` becomes "[Author et al., Year]", a link to ``book/references.bib`` whose
  title (shown on hover) is the whole entry.

The files are never changed: what JupyterLab saves goes back to the book's text first (each
rewritten cell keeps its source in its metadata while it is open; a reader's edits of a cell
keep their words, the resolved references return to their roles). ``tests/test_book_refs.py``
checks every chapter (nothing left unresolved, the round trip exact) and
``tests/browser/test_lab.py`` shows three chapters without a "⚠".

>>> _names("Andy Ruina and M. Garcia and Anindya Chatterjee"), _names("Lynch, Kevin M.")
('Ruina et al.', 'Lynch')
"""
from __future__ import annotations

import functools
import importlib.util
import posixpath
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEY = "robodyn_lab"
"""The cell metadata key that holds a rewritten cell's own text while JupyterLab has it."""

_DISPLAY = re.compile(r"\$\$(?P<body>(?:(?!\$\$).)+?)\$\$[ \t]*\((?P<label>[\w:.-]+)\)", re.S)
_EQ = re.compile(r"\{eq\}`(?:[^`<]*<)?(?P<label>[^`>]+)>?`")
_CITE = re.compile(r"\{cite(?::[a-z]+)?\}`(?P<keys>[^`]+)`")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def _tools(root=ROOT):
    return (_load("seed_numbers", Path(root) / "book" / "_ext" / "seed_numbers.py"),
            _load("equation_index", Path(root) / "scripts" / "equation_index.py"))


# ---------------------------------------------------------------------------- the index

@functools.lru_cache(maxsize=4)
def book_index(root=ROOT):
    """``({label: (doc, number)}, {key: (short, full)})``: every labelled display of the
    book's pages with the number the book gives it, and every entry of references.bib."""
    seeds, scan = _tools(root)
    equations = {}
    for doc in sorted(_toc(root)):
        labels = [a for text, _ in scan.markdown_blocks(scan.doc_file(root, doc))
                  for kind, a, b, _ in scan.scan_markdown(text)
                  if kind == "define" and b == "math"]
        for label, number in seeds.display_numbers(doc, labels).items():
            equations[label] = (doc, number)
    return equations, bibliography(Path(root) / "book" / "references.bib")


def _field(entry, name):
    m = re.search(rf"\b{name}\s*=\s*[{{\"](?P<v>(?:[^{{}}]|\{{[^{{}}]*(?:\{{[^{{}}]*\}}[^{{}}]*)*\}})*)[}}\"]",
                  entry, re.I)
    return re.sub(r"\s+", " ", re.sub(r"\\[a-zA-Z]+\s*|[{}\\]", "", m["v"])).strip() if m else ""


def _names(authors):
    """The author part of an author-year citation: "Last", "Last and Last", "Last et al."."""
    last = [(a.split(",")[0] if "," in a else a.split()[-1]).strip()
            for a in re.split(r"\s+and\s+", authors.strip()) if a.strip()]
    if len(last) > 2:
        return f"{last[0]} et al."
    return " and ".join(last)


def bibliography(path):
    """{key: (short citation, full entry)} of a .bib file."""
    text = Path(path).read_text(encoding="utf-8")
    out = {}
    for m in re.finditer(r"@\w+\s*\{\s*(?P<key>[^,\s]+)\s*,(?P<body>.*?)\n\}", text, re.S):
        body = m["body"]
        authors, year = _field(body, "author") or _field(body, "editor"), _field(body, "year")
        where = _field(body, "journal") or _field(body, "booktitle") or _field(body, "publisher")
        full = f"{authors} ({year}). {_field(body, 'title')}." + (f" {where}." if where else "")
        out[m["key"]] = (f"{_names(authors)}, {year}", full.replace('"', "'"))
    return out


# ---------------------------------------------------------------------------- rewriting

def _link_path(doc, here):
    return posixpath.relpath(f"{doc}.ipynb", posixpath.dirname(here))


def rewrite_source(text, here, index):
    """(the cell's text with the book's references resolved, [(shown, original), ...]);
    ``here`` is the notebook's docname (``book/part4/06_walking``)."""
    equations, bib = index
    pairs = []

    def keep(shown, original):
        pairs.append((shown, original))
        return shown

    def display(m):
        found = equations.get(m["label"])
        if found is None:
            return m[0]
        return keep(f"$${m['body'].rstrip()} \\tag{{{found[1]}}}$$", m[0])

    def eq(m):
        found = equations.get(m["label"])
        if found is None:
            return m[0]
        doc, number = found
        shown = f"({number})" if doc == here else f"[({number})]({_link_path(doc, here)})"
        return keep(shown, m[0])

    def cite(m):
        keys = [k.strip() for k in m["keys"].split(",")]
        if not all(k in bib for k in keys):
            return m[0]
        bibfile = posixpath.relpath("book/references.bib", posixpath.dirname(here))
        shown = "[" + "; ".join(f'[{bib[k][0]}]({bibfile} "{bib[k][1]}")' for k in keys) + "]"
        return keep(shown, m[0])

    text = _DISPLAY.sub(display, text)
    text = _EQ.sub(eq, text)
    text = _CITE.sub(cite, text)
    return text, pairs


def rewrite(nb, here, index=None):
    """Resolve the references of every markdown cell of ``nb`` (a notebook dict) in place; each
    changed cell keeps its own text and the replacements under ``metadata[KEY]``."""
    index = book_index() if index is None else index
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        shown, pairs = rewrite_source(source, here, index)
        if pairs:
            cell.setdefault("metadata", {})[KEY] = {"source": source, "shown": shown,
                                                    "pairs": [list(p) for p in pairs]}
            cell["source"] = shown
    return nb


def restore(nb):
    """The book's text back in every rewritten cell of ``nb`` (in place): the cell's own text
    when the reader left it as shown, else the reader's text with each resolved reference turned
    back into its role."""
    for cell in nb.get("cells", []):
        kept = cell.get("metadata", {}).pop(KEY, None)
        if kept is None:
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if source == kept["shown"]:
            cell["source"] = kept["source"]
        else:
            for shown, original in reversed(kept["pairs"]):
                source = source.replace(shown, original)
            cell["source"] = source
    return nb


def docname(path, root=ROOT):
    """The book's docname of a served notebook path, or None when it is not a page of the book
    (then it is served as it is)."""
    path = str(path).strip("/")
    if not path.endswith(".ipynb"):
        return None
    doc = path[:-len(".ipynb")]
    return doc if doc in _toc(root) else None


@functools.lru_cache(maxsize=4)
def _toc(root):
    return frozenset(_tools(root)[1].toc_docs(root))


# ---------------------------------------------------------------------------- the server

def _manager_base():
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    return AsyncLargeFileManager


class BookContentsManager(_manager_base()):
    """JupyterLab's contents manager, with the book's pages served resolved and saved back as
    the book writes them."""

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        doc = docname(path)
        if doc and content and model.get("type") == "notebook" and model.get("content"):
            rewrite(model["content"], doc)
        return model

    async def save(self, model, path=""):
        if model.get("type") == "notebook" and model.get("content"):
            restore(model["content"])
        saved = await super().save(model, path)
        return saved
