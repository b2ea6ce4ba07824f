#!/usr/bin/env python3
"""Generate the book's equation index, book/equations.md, so that it cannot drift.

Three inputs, all read statically (nothing is executed):

* the seed list ``book/_data/seed_equations.yml``: every numbered equation of the three source
  texts, with a short description and the source's section, and per source the numbers its
  extracted text does not show (``not_shown``; of them, ``inferred`` ones are placed by position);
* the pages of ``_toc.yml``: an equation of a source is *derived* on the page that defines its
  label -- a MyST ``$$ ... $$ (hb-5-13)`` block, a ``{math}`` directive with ``:label: hb-5-13``
  or a ``(hb-5-13)=`` target -- and *used* on the pages that cite it with ``{eq}`hb-5-13```;
* the tests in ``tests/``: a test *checks* an equation when it carries the marker
  ``@pytest.mark.equation("hb-5-13", ...)`` (read with ``ast``, registered in pytest.ini).

Labels are ``<prefix>-<number with dots as dashes>``: handbook eq. (5.13) is ``hb-5-13``,
Udwadia-Kalaba eq. (36) is ``uk-36``, port-Hamiltonian eq. (42) is ``ph-42``.

Coverage is counted over the numbers the seeds show beside their equations (81: handbook 23,
Udwadia-Kalaba 36, port-Hamiltonian 22): an equation is *covered and verified* when a page
derives it and a test checks it. The numbers a seed only cites or implies are listed as context
rows, not counted; the ones the book derives anyway are reported as *reconstructed*.

Usage::

    python scripts/equation_index.py           # write book/equations.md (`make equations`)
    python scripts/equation_index.py --check   # exit 1 if the committed page is stale

Exit status 2 (with one line per problem) if the inputs disagree: a marker naming a label no
page defines, a page label with a seed prefix that is not in the seed list, a label defined
twice, or a malformed marker.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import json
import re
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_toc import toc_files  # noqa: E402

SEED_LIST = "book/_data/seed_equations.yml"
PAGE = "book/equations.md"
TOC = "_toc.yml"
TESTS = "tests"
MARKER = "equation"

_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,}|:{3,})\s*(?P<info>.*?)\s*$")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*#*\s*$")
_MATH_LABEL = re.compile(r"\$\$\s*\((?P<label>[^()\s]+)\)\s*$")       # $$ (label)
_TARGET = re.compile(r"^\s*\((?P<label>[^()\s]+)\)=\s*$")              # (label)=
_OPTION_LABEL = re.compile(r"^\s*:label:\s*(?P<label>\S+)\s*$")       # :label: label
_EQ_REF = re.compile(r"\{eq\}`(?P<label>[^`]+)`")
_DOUBLE_CODE = re.compile(r"``.*?``")


class EquationIndexError(ValueError):
    """The inputs disagree; ``problems`` holds one readable sentence per problem."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("the equation index cannot be built:\n  " + "\n  ".join(self.problems))


@dataclasses.dataclass(frozen=True)
class SeedEquation:
    """One numbered equation of a source text."""
    prefix: str
    number: str
    section: str
    description: str | None
    shown: bool = True          # the number appears in the extracted seed text
    inferred: bool = False      # not shown; placed by its position between shown numbers

    @property
    def label(self):
        return f"{self.prefix}-{self.number.replace('.', '-')}"


@dataclasses.dataclass(frozen=True)
class Source:
    """One source text and its numbered equations, in order."""
    prefix: str
    title: str
    seed: str
    note: str
    equations: tuple


@dataclasses.dataclass(frozen=True)
class Definition:
    """Where a label is defined: page (doc name without suffix), its title and section."""
    label: str
    doc: str
    where: str          # file and position, for messages
    title: str
    section: str
    kind: str           # "math" ($$ ... $$ (label) or {math} :label:) or "target" ((label)=)


@dataclasses.dataclass(frozen=True)
class Marker:
    """One test that checks the equations ``labels``."""
    test_id: str
    labels: tuple
    where: str


@dataclasses.dataclass
class Index:
    """Everything the page is generated from."""
    sources: list
    definitions: dict       # label -> Definition (seed labels only)
    references: dict        # label -> [doc, ...] pages citing it with {eq}, in toc order
    markers: list           # [Marker]
    titles: dict            # doc -> page title
    files: dict             # doc -> file, relative to the book's top folder

    def tests_for(self, label):
        return [m.test_id for m in self.markers if label in m.labels]

    def counts(self, source=None, shown=True):
        """(equations, derived in the book, covered and verified: derived and checked by a
        test), for one source or all, over the numbers the seeds show (``shown=False``: over
        the context rows, the numbers they do not show)."""
        eqs = [e for s in self.sources if source in (None, s.prefix) for e in s.equations
               if e.shown == shown]
        covered = [e for e in eqs if e.label in self.definitions]
        verified = [e for e in covered if self.tests_for(e.label)]
        return len(eqs), len(covered), len(verified)


# ---------------------------------------------------------------------------- the seed list

def load_seed_list(path):
    """The sources of the seed list at ``path``, checked: prefixes and labels unique."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("sources"), list):
        raise EquationIndexError([f"{path}: expected a mapping with a list `sources`, "
                                  f"got {type(data).__name__}"])
    sources, seen, problems = [], set(), []
    for k, s in enumerate(data["sources"]):
        missing = {"prefix", "title", "equations"} - set(s or {})
        if missing:
            problems.append(f"{path}: source {k + 1} lacks {sorted(missing)}")
            continue
        eqs = []
        not_shown = [str(x) for x in s.get("not_shown") or []]
        inferred = [str(x) for x in s.get("inferred") or []]
        numbers = [str(e.get("number")) for e in s["equations"] if isinstance(e, dict)]
        for name, listed in (("not_shown", not_shown), ("inferred", inferred)):
            unknown = [x for x in listed if x not in numbers]
            if unknown:
                problems.append(f"{path}: source {s['prefix']}: {name} names numbers that are "
                                f"not in its equations: {unknown}")
        if set(inferred) - set(not_shown):
            problems.append(f"{path}: source {s['prefix']}: an inferred number is one the seed "
                            f"does not show; add {sorted(set(inferred) - set(not_shown))} to "
                            f"not_shown")
        for e in s["equations"]:
            if not isinstance(e, dict) or {"number", "section", "description"} - set(e):
                problems.append(f"{path}: source {s['prefix']}: each equation needs number, "
                                f"section and description (null if unknown), got {e!r}")
                continue
            number = str(e["number"])
            eq = SeedEquation(s["prefix"], number, str(e["section"]), e["description"],
                              shown=number not in not_shown, inferred=number in inferred)
            if eq.label in seen:
                problems.append(f"{path}: {eq.label} is listed twice")
            seen.add(eq.label)
            eqs.append(eq)
        sources.append(Source(s["prefix"], s["title"], s.get("seed", ""),
                              " ".join(str(s.get("note", "")).split()), tuple(eqs)))
    prefixes = [s.prefix for s in sources]
    if len(set(prefixes)) != len(prefixes):
        problems.append(f"{path}: prefixes repeat: {prefixes}")
    if problems:
        raise EquationIndexError(problems)
    return sources


# ---------------------------------------------------------------------------- the pages

def toc_docs(root):
    """Doc names (paths without suffix, relative to ``root``) of _toc.yml, in reading order."""
    docs = toc_files(Path(root) / TOC)
    return [str(Path(d).with_suffix("")) if Path(d).suffix in (".md", ".ipynb") else d
            for d in docs]


def doc_file(root, doc):
    """The file of a doc name: .ipynb or .md."""
    for suffix in (".ipynb", ".md"):
        path = Path(root) / (doc + suffix)
        if path.exists():
            return path
    raise EquationIndexError([f"{TOC} lists {doc!r}, but neither {doc}.ipynb nor {doc}.md "
                              f"exists"])


def markdown_blocks(path):
    """(text, position name) of every markdown part of a page: the cells of a notebook, the
    whole of a .md file (after its front matter)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        nb = json.loads(text)
        for k, cell in enumerate(nb.get("cells", [])):
            if cell.get("cell_type") == "markdown":
                src = cell.get("source", "")
                yield ("".join(src) if isinstance(src, list) else src), f"cell {k}"
    else:
        if text.startswith("---\n"):
            end = text.find("\n---", 4)
            if end > 0:
                text = "\n" * text[:end + 4].count("\n") + text[end + 4:]
        yield text, ""


def scan_markdown(text):
    """Events of one markdown text, in order: ("heading", level, text, line),
    ("define", label, kind, line) and ("ref", label, None, line). Code fences are skipped;
    directive fences (```{name}) are read, and `:label:` counts inside {math} only."""
    stack = []                          # open fences: (char, length, directive name or None)
    for n, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if m:
            fence, info = m["fence"], m["info"]
            top = stack[-1] if stack else None
            if top and top[2] is None:                          # inside a code block
                if not info and fence[0] == top[0] and len(fence) >= top[1]:
                    stack.pop()
                continue
            if not info and top and fence[0] == top[0] and len(fence) >= top[1]:
                stack.pop()                                     # closes a directive
                continue
            name = re.match(r"\{([^}]+)\}", info)
            stack.append((fence[0], len(fence), name[1] if name else None))
            continue
        if stack and stack[-1][2] is None:
            continue
        if stack and stack[-1][2] == "math":
            opt = _OPTION_LABEL.match(line)
            if opt:
                yield "define", opt["label"], "math", n
                continue
        h = _HEADING.match(line)
        if h and not stack:
            yield "heading", len(h["hashes"]), h["text"], n
            continue
        t = _TARGET.match(line)
        if t:
            yield "define", t["label"], "target", n
            continue
        d = _MATH_LABEL.search(line)
        if d:
            yield "define", d["label"], "math", n
        for r in _EQ_REF.finditer(_DOUBLE_CODE.sub("", line)):
            yield "ref", r["label"], None, n


def scan_pages(root, docs, prefixes):
    """Definitions (seed-prefixed labels), {eq} references and titles of the given docs.
    Returns (definitions: {label: [Definition, ...]}, references: {label: [doc]}, titles,
    files)."""
    definitions, references, titles, files = {}, {}, {}, {}
    seed_label = re.compile(r"^(%s)-" % "|".join(map(re.escape, prefixes)))
    for doc in docs:
        path = doc_file(root, doc)
        rel = path.relative_to(root).as_posix()
        title, section = None, None
        for text, cell in markdown_blocks(path):
            for kind, a, b, line in scan_markdown(text):
                if kind == "heading":
                    if a == 1 and title is None:
                        title = b
                    elif a > 1:
                        section = b
                elif kind == "define" and seed_label.match(a):
                    where = f"{rel} {cell + ' ' if cell else ''}line {line}"
                    definitions.setdefault(a, []).append(
                        Definition(a, doc, where, title or doc, section or title or doc, b))
                elif kind == "ref" and seed_label.match(a):
                    refs = references.setdefault(a, [])
                    if doc not in refs:
                        refs.append(doc)
        titles[doc], files[doc] = title or doc, rel
    return definitions, references, titles, files


# ---------------------------------------------------------------------------- the tests

def _dotted(node):
    """'pytest.mark.equation' for that attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id] + parts[::-1])
    return None


def _is_marker(node):
    name = _dotted(node.func if isinstance(node, ast.Call) else node)
    return name is not None and name.split(".")[-2:] == ["mark", MARKER]


def scan_tests(root):
    """The equation markers of every tests/**/*.py, as [Marker], in file and line order.
    Raises EquationIndexError for a marker without labels, with a non-string label, on
    something that is not a test, or in a place this reader does not understand."""
    markers, problems = [], []
    base = Path(root) / TESTS
    for path in sorted(p for p in base.rglob("*.py") if "__pycache__" not in p.parts):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_marker(n)]
        called = {id(c.func) for c in calls}
        bare = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                and id(n) not in called and _is_marker(n)]
        handled = set()

        def take(node, test_id):
            handled.add(id(node))
            where = f"{rel}:{node.lineno}"
            if not isinstance(node, ast.Call):
                problems.append(f"{where}: write @pytest.mark.{MARKER}(\"hb-5-13\", ...) with "
                                f"the labels the test checks, got a bare @pytest.mark.{MARKER}")
                return
            labels = [a.value for a in node.args
                      if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if not node.args or len(labels) != len(node.args) or node.keywords:
                problems.append(f"{where}: the {MARKER} marker takes one or more label strings "
                                f"(e.g. \"hb-5-13\"), got {ast.unparse(node)}")
                return
            markers.append(Marker(test_id, tuple(labels), where))

        def visit(body, prefix):
            for node in body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    is_class = isinstance(node, ast.ClassDef)
                    is_test = node.name.startswith("Test" if is_class else "test")
                    for dec in node.decorator_list:
                        if not _is_marker(dec):
                            continue
                        if is_test:
                            take(dec, f"{prefix}::{node.name}")
                        else:
                            handled.add(id(dec))
                            problems.append(f"{rel}:{dec.lineno}: the {MARKER} marker is on "
                                            f"{node.name!r}, which pytest does not collect "
                                            f"as a test")
                    if is_class and is_test:
                        visit(node.body, f"{prefix}::{node.name}")
                elif isinstance(node, ast.Assign) and prefix == rel and any(
                        isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
                    values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) \
                        else [node.value]
                    for v in values:
                        if _is_marker(v):
                            take(v, rel)

        visit(tree.body, rel)
        for node in calls + bare:
            if id(node) not in handled:
                problems.append(f"{rel}:{node.lineno}: the {MARKER} marker is only read as a "
                                f"decorator of a test function or class (or in `pytestmark`), "
                                f"found {ast.unparse(node)} elsewhere")
    if problems:
        raise EquationIndexError(problems)
    return markers


# ---------------------------------------------------------------------------- the index

def build_index(root):
    """Read the seed list, the toc pages and the tests below ``root``; check that they agree."""
    root = Path(root)
    sources = load_seed_list(root / SEED_LIST)
    seed = {e.label: e for s in sources for e in s.equations}
    docs = [d for d in toc_docs(root) if d != str(Path(PAGE).with_suffix(""))]
    defs, references, titles, files = scan_pages(root, docs, [s.prefix for s in sources])
    markers = scan_tests(root)
    problems = []
    for label, places in defs.items():
        if len(places) > 1:
            problems.append(f"{label} is defined {len(places)} times: "
                            + ", ".join(p.where for p in places))
        if label not in seed:
            problems.append(f"{label} ({places[0].where}) is not a numbered equation of the "
                            f"seed list {SEED_LIST}")
    for m in markers:
        for label in m.labels:
            if label not in defs:
                known = "" if label in seed else f" (and it is not in {SEED_LIST} either)"
                problems.append(f"{m.test_id} ({m.where}) is marked as checking {label}, but "
                                f"no page of {TOC} defines {label}{known}")
    if problems:
        raise EquationIndexError(problems)
    definitions = {label: places[0] for label, places in defs.items()}
    return Index(sources, definitions, references, markers, titles, files)


def _cell(text):
    """Text safe inside a markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _eq_name(e):
    return f"({e.number})"


def _page_link(index, doc):
    """A link to a page with its title as text (a markdown link, so math in it is typeset)."""
    title = _cell(index.titles[doc]).replace("[", "\\[").replace("]", "\\]")
    return f"[{title}](/{index.files[doc]})"


HEADLINE = "**Covered and verified: {verified} of {total}.**"
RECONSTRUCTED = "**Reconstructed: {covered} of {total}.**"
CONTEXT_HEADING = "### {title}: context rows"


def _row(index, e):
    """One table row of equation ``e``."""
    what = _cell(e.description) if e.description else "*not shown in the extracted seed text*"
    if e.inferred:
        what = "*number inferred:* " + what
    d = index.definitions.get(e.label)
    if not e.shown and d is not None:
        what = "*reconstructed:* " + what
    if d is None:
        where, used = "**missing**", ""
    else:
        link = f"{{eq}}`{e.label}`" if d.kind == "math" else \
            f"{{ref}}`{_eq_name(e)} <{e.label}>`"
        where = f"{_page_link(index, d.doc)}, § {_cell(d.section)}: {link}"
        used = ", ".join(_page_link(index, doc)
                         for doc in index.references.get(e.label, []) if doc != d.doc)
    tests = ", ".join(f"`{t}`" for t in index.tests_for(e.label)) or \
        ("—" if d is not None else "")
    return f"| {_eq_name(e)} | {what} | {_cell(e.section)} | {where} | {used} | {tests} |"


def render(index):
    """The page book/equations.md, as a string."""
    total, covered, verified = index.counts()
    context = index.counts(shown=False)
    out = [
        "# Equation index",
        "",
        "% Generated by scripts/equation_index.py from book/_data/seed_equations.yml, the",
        "% equation labels of the pages in _toc.yml and the @pytest.mark.equation markers of",
        "% tests/. Do not edit: run `make equations`. tests/test_equation_index.py fails when",
        "% this page is stale.",
        "",
        "Every numbered equation of the three source texts, where the book derives it and which "
        "tests check it. The page is generated from the equation labels in the chapters and "
        "from markers on the tests, so it cannot drift from them.",
        "",
        HEADLINE.format(verified=verified, total=total) + f" Of the {total} equation numbers "
        f"the seed texts show, {verified} are derived in the book and checked by a test "
        f"({covered} are derived).",
        "",
        RECONSTRUCTED.format(covered=context[1], total=context[0]) + f" The other "
        f"{context[0]} numbers are cited or implied by the sources but not shown beside an "
        "equation in the extracted texts (some are inferred from their position); they are "
        f"listed as context rows at the end of each source's section and not counted above. "
        f"The book reconstructs {context[1]} of them ({context[2]} checked by a test).",
        "",
        "Counted are the numbers a reader finds beside an equation in the seed texts: a number "
        "the prose only cites, its display lost in the extraction, is not counted.",
        "",
        "| Source | Numbers the seed shows | Derived in the book | Covered and verified "
        "| Context rows | Reconstructed |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in index.sources:
        n, c, v = index.counts(s.prefix)
        hn, hc, _ = index.counts(s.prefix, False)
        out.append(f"| {_cell(s.title)} | {n} | {c} | {v} | {hn} | {hc} |")
    out += [
        "",
        "*How to read the tables.* **Derived in** names the page and section that state the "
        "equation, with a link to it; the link shows the source's own number — (5.13) for the "
        "handbook, (UK 36) and (PH 59) for the other two — as the equation does on its page, "
        "where the book's own equations are numbered by part and chapter, e.g. (II.2.1). "
        "**missing** means no chapter has it yet. **Also used in** lists the other pages "
        "that cite it. **Checked by** lists the tests that verify it by an independent route.",
        "",
        "*How to add an equation.* Give its display the seed label — handbook (5.13) is "
        "`$$ ... $$ (hb-5-13)`, Udwadia–Kalaba (36) is `uk-36`, port-Hamiltonian (47) is "
        "`ph-47` — mark the tests that check it with `@pytest.mark.equation(\"hb-5-13\")`, and "
        "run `make equations`.",
    ]
    header = ["| Eq. | What it is | Source § | Derived in | Also used in | Checked by |",
              "| --- | --- | --- | --- | --- | --- |"]
    for s in index.sources:
        n, c, v = index.counts(s.prefix)
        shown = [e for e in s.equations if e.shown]
        hidden = [e for e in s.equations if not e.shown]
        out += ["", f"## {s.title}", "",
                f"{n} numbers shown in the seed text; {c} derived in the book, {v} covered and "
                "verified." + (f" {s.note}" if s.note else ""), ""]
        out += header + [_row(index, e) for e in shown]
        if hidden:
            rebuilt = sum(e.label in index.definitions for e in hidden)
            out += ["", CONTEXT_HEADING.format(title=s.title), "",
                    f"{len(hidden)} numbers, not counted above: the seed text cites or implies "
                    f"them without showing them; the book reconstructs {rebuilt} "
                    "(*reconstructed* below)"
                    + ("; *number inferred* marks a number placed by its position between "
                       "shown ones." if any(e.inferred for e in hidden) else "."), ""]
            out += header + [_row(index, e) for e in hidden]
    return "\n".join(out) + "\n"


def check(root):
    """None if the committed page equals the generated one, else a message naming the
    difference."""
    root = Path(root)
    want = render(build_index(root))
    path = root / PAGE
    if not path.exists():
        return f"{PAGE} does not exist; run `make equations`"
    have = path.read_text(encoding="utf-8")
    if have == want:
        return None
    diff = list(difflib.unified_diff(have.splitlines(), want.splitlines(),
                                     f"{PAGE} (committed)", f"{PAGE} (generated)", lineterm="",
                                     n=0))
    shown = diff[:40] + ([f"... ({len(diff) - 40} more diff lines)"] if len(diff) > 40 else [])
    return (f"{PAGE} is stale: it differs from what scripts/equation_index.py generates from "
            f"the pages, the seed list and the test markers. Run `make equations`.\n"
            + "\n".join(shown))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 if {PAGE} is stale instead of writing it")
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent),
                        help="the book's top folder (default: this script's parent folder)")
    args = parser.parse_args(argv)
    try:
        if args.check:
            problem = check(args.root)
            if problem:
                print(problem, file=sys.stderr)
                return 1
            print(f"{PAGE} is up to date")
            return 0
        index = build_index(args.root)
        (Path(args.root) / PAGE).write_text(render(index), encoding="utf-8")
    except EquationIndexError as exc:
        print(exc, file=sys.stderr)
        return 2
    total, covered, verified = index.counts()
    print(f"wrote {PAGE}: covered and verified {verified} of the {total} numbers the seeds "
          f"show ({covered} derived)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
