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
  title (shown on hover) is the whole entry;
- ``{ref}`label``` and ``{numref}`label``` (with or without their own text) become the text the
  book prints, as a link to the notebook that holds the label (:func:`label_index`):
  a target ``(label)=`` on a heading (every chapter's ``(ch-<name>)=``) shows the heading; an
  ``{exercise}``'s ``:label:`` shows "Exercise N", numbered as Sphinx numbers them in the book's
  unnumbered table of contents: one count over the whole book in reading order (a
  ``:nonumber:`` exercise shows "Exercise"); a ``{solution}``'s ``:label:`` shows "Solution to",
  sphinx-exercise's title of it. ``{numref}`` with its own text fills in ``%s``, ``{number}``
  and ``{name}``. What the book cannot resolve either (an unknown label, ``{numref}`` of a
  section or solution, ``{ref}`` without text of a target that is on no heading) is left as it
  is, so the lab shows it with a "⚠" where the build warns.

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
import json
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
_REF = re.compile(r"\{(?P<role>ref|numref)\}`(?:(?P<text>[^`<]*?)\s*<(?P<label>[^`<>]+)>"
                  r"|(?P<bare>[^`<>]+))`")
_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,}|:{3,})\s*(?P<info>.*?)\s*$")
_DIRECTIVE = re.compile(r"^\s*(?:`{3,}|~{3,}|:{3,})\{(?P<name>[\w:-]+)\}")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
_TARGET = re.compile(r"^\s*\((?P<label>[^()\s]+)\)=\s*$")
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)(?:\s+#+)?\s*$")
_CODE_DIRECTIVES = {"code", "code-block", "code-cell", "sourcecode", "literalinclude"}
EXERCISE_TITLE, SOLUTION_TITLE = "Exercise", "Solution to"
"""sphinx-exercise's titles (its ``numfig_format`` is "Exercise %s"; the book keeps the
default ``exercise_style``, whose solutions are titled "Solution to")."""


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
    """``({label: (doc, number)}, {key: (short, full)}, {label: (doc, title, number)})``:
    every labelled display of the book's pages with the number the book gives it, every entry
    of references.bib and every target of ``{ref}``/``{numref}`` (:func:`label_index`)."""
    seeds, scan = _tools(root)
    equations = {}
    for doc in sorted(_toc(root)):
        labels = [a for text, _ in scan.markdown_blocks(scan.doc_file(root, doc))
                  for kind, a, b, _ in scan.scan_markdown(text)
                  if kind == "define" and b == "math"]
        for label, number in seeds.display_numbers(doc, labels).items():
            equations[label] = (doc, number)
    pages = [(doc, page_cells(scan.doc_file(root, doc))) for doc in scan.toc_docs(root)]
    return (equations, bibliography(Path(root) / "book" / "references.bib"),
            label_index(pages))


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


# ---------------------------------------------------------------------------- labels

def page_cells(path):
    """``[(cell type, text), ...]`` of a page as the book reads it: a notebook's cells (those
    tagged ``remove-cell`` left out), or a .md file as one Markdown cell."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return [("markdown", text)]
    out = []
    for cell in json.loads(text).get("cells", []):
        if "remove-cell" in cell.get("metadata", {}).get("tags", []):
            continue
        src = cell.get("source", "")
        out.append((cell.get("cell_type"), src if isinstance(src, str) else "".join(src)))
    return out


def _outside_code(text):
    """The lines of a Markdown text that MyST reads as Markdown, with their index: code
    fences are skipped, directive fences (```{name}, :::{name}) are read into."""
    stack = []                          # open fences: (char, length, is code)
    lines = text.splitlines()
    for n, line in enumerate(lines):
        m = _FENCE.match(line)
        top = stack[-1] if stack else None
        if m and top and not m["info"] and m["fence"][0] == top[0] \
                and len(m["fence"]) >= top[1]:
            stack.pop()
        elif top and top[2]:
            continue
        elif m:
            name = re.match(r"\{([^}]+)\}", m["info"])
            stack.append((m["fence"][0], len(m["fence"]),
                          not name or name[1] in _CODE_DIRECTIVES))
            if name:
                yield n, line
        else:
            yield n, line


def _options(lines, start):
    """The options of the directive opened on ``lines[start]``: ``:key: value`` lines, or a
    ``---`` block of ``key: value``."""
    out, rest = {}, lines[start + 1:]
    if rest and rest[0].strip() == "---":
        for line in rest[1:]:
            if line.strip() == "---":
                break
            key, _, value = line.partition(":")
            out[key.strip()] = value.strip()
        return out
    for line in rest:
        m = _OPTION.match(line)
        if not m:
            break
        out[m["key"]] = m["value"]
    return out


def _next_heading(cells, k, lines, n):
    """The title of the heading a target on ``lines[n]`` of cell ``k`` stands on (the next
    line that is neither blank nor another target, in the cell or the next one), or None."""
    for line in lines[n + 1:]:
        if line.strip() and not _TARGET.match(line):
            h = _HEADING.match(line)
            return h["title"] if h else None
    if k + 1 < len(cells) and cells[k + 1][0] == "markdown":
        return _next_heading(cells, k + 1, [""] + cells[k + 1][1].splitlines(), 0)
    return None


def _page_targets(doc, cells):
    """``[(label or None, doc, title, numbered), ...]`` of one page's targets and labelled or
    numbered exercises and solutions, in order."""
    out = []
    for k, (kind, text) in enumerate(cells):
        if kind != "markdown":
            continue
        lines = text.splitlines()
        for n, line in _outside_code(text):
            t, d = _TARGET.match(line), _DIRECTIVE.match(line)
            if t:
                out.append((t["label"], doc, _next_heading(cells, k, lines, n), False))
            elif d and d["name"] in ("exercise", "solution"):
                options = _options(lines, n)
                if "hidden" in options:             # sphinx-exercise drops it
                    continue
                exercise = d["name"] == "exercise"
                out.append((options.get("label"), doc,
                            EXERCISE_TITLE if exercise else SOLUTION_TITLE,
                            exercise and "nonumber" not in options))
    return out


def label_index(pages):
    """``{label: (doc, title, number)}`` of the pages ``[(doc, page_cells), ...]`` given in
    the book's reading order: every target ``(label)=`` (title: its heading's, None when it
    stands on none) and every labelled ``{exercise}`` and ``{solution}`` (number: the
    exercise's in the whole book, None when the book does not number it). Labels are
    compared as Sphinx does, without case; the first of a label defined twice wins (the build
    warns, and sphinx-exercise drops the second exercise, which then takes no number).

    >>> a = [("markdown", "(ch-a)=\\n# Chapter A\\n\\n```{exercise}\\n:label: ex-a\\n```")]
    >>> label_index([("a", a), ("b", [("markdown", ":::{exercise}\\n:label: ex-b\\n:::")])])
    {'ch-a': ('a', 'Chapter A', None), 'ex-a': ('a', 'Exercise', 1), 'ex-b': ('b', 'Exercise', 2)}
    """
    out, count = {}, 0
    for doc, cells in pages:
        for label, where, title, numbered in _page_targets(doc, cells):
            key = label.lower() if label else None
            if key in out:
                continue
            number = None
            if numbered:
                count += 1
                number = count
            if key:
                out[key] = (where, title, number)
    return out


def ref_text(role, text, target):
    """What the book prints for ``{role}`text <label>``` (text None: ``{role}`label```) of a
    label found as ``target``, or None where the build warns instead."""
    _, title, number = target
    if role == "numref":
        if number is None:
            return None
        if text is None:
            return f"{title} {number}"
        if "{number}" in text or "{name}" in text:
            return text.replace("{number}", str(number)).replace("{name}", title)
        return text.replace("%s", str(number))
    if text is not None:
        return text
    if number is not None:
        return f"{title} {number}"
    return title


# ---------------------------------------------------------------------------- rewriting

def _link_path(doc, here):
    return posixpath.relpath(f"{doc}.ipynb", posixpath.dirname(here))


def rewrite_source(text, here, index):
    """(the cell's text with the book's references resolved, [(shown, original), ...]);
    ``here`` is the notebook's docname (``book/part4/06_walking``)."""
    equations, bib, *more = index
    labels = more[0] if more else {}
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

    def ref(m):
        label = (m["label"] or m["bare"]).strip()
        target = labels.get(label.lower())
        words = None if target is None else ref_text(m["role"], m["text"], target)
        if not words:
            return m[0]
        # a link even to this notebook: plain words ("an exercise") would be found again in
        # a reader's edit of the cell and taken back to the role (restore)
        return keep(f"[{words}]({_link_path(target[0], here)})", m[0])

    text = _DISPLAY.sub(display, text)
    text = _EQ.sub(eq, text)
    text = _CITE.sub(cite, text)
    text = _REF.sub(ref, text)
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
