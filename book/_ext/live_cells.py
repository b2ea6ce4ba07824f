"""Sphinx extension: "Run here" on the book's sympy cells (issue 40).

A code cell tagged ``live`` in its notebook gets a "Run here" button on its page: pressed, the
cell becomes an editable text box and runs in the page, in Python compiled to WebAssembly
(Pyodide) inside a Web Worker, with sympy and mpmath and robodyn's pure-sympy module
:mod:`robodyn.symbolic`. It prints text and shows sympy results as mathematics (MathJax of the
page); a cell that needs numpy, scipy, matplotlib or robodyn's numeric code says so and where to
run it instead (the page's Colab and Binder buttons, or ``make lab``).

Nothing is loaded before the click but ``_static/live.js`` (deferred: it does not hold up the
first paint) and the ``live.css`` it adds, and only on a page with a live cell
(``bench/bench_live_cells.py`` measures the first paint with and without them). The runtime comes from the book's own files
(``scripts/fetch_assets.sh`` puts Pyodide's core, from npm, and the sympy and mpmath wheels, from
PyPI, compiled to Pyodide's bytecode as ``packages.zip``, into ``_assets/pyodide/``), which this extension writes at the end of the build into
``_static/live/`` as JavaScript files that each hand the bytes of one file (base64) to the page:
a page opened from ``file://`` may load scripts but not ``fetch()`` them, so this one route
works from disk, from the offline zip and from a server alike. robodyn's part goes as a zip of
``robodyn/__init__.py`` (:data:`PAGE_INIT`: the page's robodyn is the pure-sympy part) and
``robodyn/symbolic.py``, the library's own file.
"""
from __future__ import annotations

import base64
import io
import json
import re
import zipfile
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
PYODIDE = ROOT / "_assets" / "pyodide"
STATIC = Path(__file__).with_name("live_static")
RUNTIME = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
           "pyodide-lock.json", "packages.zip"]
ROBODYN_ZIP = "robodyn-live.zip"
LIVE_CELL = re.compile(r'<div class="cell\b[^"]*\btag_live\b')   # myst-nb: a cell tagged live
PAGE_INIT = '''"""robodyn in the book's pages: only its pure-sympy module, robodyn.symbolic (issue 40).

The full library (numpy, scipy, the compiled engine) runs in Colab, Binder or JupyterLab."""
from robodyn.symbolic import *  # noqa: F401,F403
from robodyn import symbolic  # noqa: F401
'''
PRELUDE = "import sympy as sp\nimport robodyn as rd\nfrom robodyn import symbolic\n"
"""What the page's Python runs before the first cell: the chapters' sympy and robodyn names
(their first cell imports numpy and matplotlib too, which the page cannot)."""
FULL_PYTHON = ("Run it in Colab or Binder (the launch buttons at the top of this page) or in "
               "JupyterLab on your machine (make lab).")


def runtime_files() -> list[tuple[str, Path | bytes]]:
    """What the page's Python needs: (name, file or bytes)."""
    missing = [n for n in RUNTIME if not (PYODIDE / n).is_file()]
    if missing:
        raise FileNotFoundError(f"live_cells: no Pyodide runtime in {PYODIDE} (missing "
                                f"{missing}): run scripts/fetch_assets.sh")
    files: list[tuple[str, Path | bytes]] = [(n, PYODIDE / n) for n in RUNTIME]
    files.append((ROBODYN_ZIP, robodyn_zip()))
    return files


def robodyn_zip() -> bytes:
    """The page's robodyn: the library's own ``symbolic.py`` (with ``errors.py``, the error classes
    it raises) and :data:`PAGE_INIT`."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in (("robodyn/__init__.py", PAGE_INIT),
                           ("robodyn/errors.py",
                            (ROOT / "lib" / "robodyn" / "errors.py").read_text()),
                           ("robodyn/symbolic.py",
                            (ROOT / "lib" / "robodyn" / "symbolic.py").read_text())):
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            zf.writestr(info, text)
    return buf.getvalue()


def script_name(name: str) -> str:
    """The JavaScript file that carries file ``name``: ``sympy-1.14.0-py3-none-any.whl`` ->
    ``sympy-1.14.0-py3-none-any.whl.js``."""
    return name + ".js"


def write_payload(files, outdir: Path) -> dict[str, int]:
    """Write one ``<name>.js`` per file into ``outdir``; return their sizes in bytes."""
    outdir.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for name, src in files:
        data = src.read_bytes() if isinstance(src, Path) else src
        text = (f"robodynLive.put({json.dumps(name)}, \""
                + base64.b64encode(data).decode("ascii") + "\");\n")
        target = outdir / script_name(name)
        target.write_text(text)
        sizes[target.name] = len(text)
    return sizes


def live_setups(notebook: Path) -> list[str | None]:
    """The page setup of each live cell of a notebook, in order (None where it has none): the
    cell's metadata ``robodyn_live.setup``, pure-sympy code that makes the state the cells
    above it leave with the full library (tests/test_symbolic.py checks it equals that)."""
    cells = json.loads(notebook.read_text())["cells"]
    out = []
    for c in cells:
        if c["cell_type"] == "code" and "live" in c.get("metadata", {}).get("tags", []):
            setup = c["metadata"].get("robodyn_live", {}).get("setup")
            out.append("".join(setup) if setup else None)
    return out


def add_to_page(app, pagename, templatename, context, doctree):
    """live.js on the pages with live cells only (nothing else before a click)."""
    if app.builder.format != "html" or not LIVE_CELL.search(context.get("body", "")):
        return
    app.env.live_cell_pages = getattr(app.env, "live_cell_pages", set()) | {pagename}
    names = [n for n, _ in runtime_files()]
    source = Path(app.env.doc2path(pagename))
    setups = live_setups(source) if source.suffix == ".ipynb" else []
    app.add_js_file("live.js", **{                # deferred; it adds live.css itself
        "defer": "defer",
        "data-files": json.dumps([[n, script_name(n)] for n in names]),
        "data-setups": json.dumps(setups),
        "data-prelude": PRELUDE,
        "data-fullpython": FULL_PYTHON})


def write_runtime(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    if not getattr(app.env, "live_cell_pages", None):
        return                        # no page has a live cell: no runtime in the site
    write_payload(runtime_files(), Path(app.outdir) / "_static" / "live")


def setup(app):
    app.connect("builder-inited", lambda a: a.config.html_static_path.append(str(STATIC)))
    app.connect("html-page-context", add_to_page)
    app.connect("build-finished", write_runtime)
    return {"parallel_read_safe": True, "parallel_write_safe": False}
