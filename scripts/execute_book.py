"""Run the book's notebooks, one per core, before Sphinx reads them (``make book``).

Jupyter Book 1 executes the notebooks one after another while Sphinx reads the pages (its
command line has no jobs option, and Sphinx's parallel reading needs every extension to
declare itself safe), so on the two cores of the reference machine one core idled through
most of the build. This script executes them first, in parallel, exactly as myst-nb's
``cache`` execution mode does for one notebook
(``jupyter_cache.executors.utils.single_nb_execution`` in the notebook's folder, errors not
allowed, the book's timeout from ``_config.yml``), and stores each executed notebook in the
build's jupyter-cache, emptied first. myst-nb then reads every page's outputs from that cache
and executes only what is missing there. So every build still executes every notebook, once.

A notebook that fails is not stored: myst-nb executes it again while it reads the page and
fails the build with its traceback (``-W``); this script reports it and goes on.

>>> sorted(p.name for p in notebooks(Path("_toc.yml")))[:1]
['01_euler_lagrange.ipynb']
"""
from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_toc import toc_files  # noqa: E402  (the one reader of _toc.yml)

CACHE = Path("_build/.jupyter_cache")
"""Where myst-nb looks (``<outdir>/../.jupyter_cache`` when ``execute.cache`` is empty)."""


def notebooks(toc):
    """The notebooks the table of contents lists (the pages that are ``.ipynb`` files)."""
    root = toc.parent
    return [root / f"{f}.ipynb" for f in toc_files(toc) if (root / f"{f}.ipynb").exists()]


def execute(path, timeout, attempts=2):
    """One notebook executed as myst-nb's cache mode would: (path, notebook, seconds, error).
    A kernel that dies before it answers (two kernels started at once on a loaded machine: seen
    once in a fresh clone) is started again, once; if it fails again, the error is returned
    like a cell's, and the book build runs the notebook itself."""
    from jupyter_cache.executors.utils import single_nb_execution
    for attempt in range(attempts):
        nb = nbformat.read(path, as_version=4)
        try:
            result = single_nb_execution(nb, cwd=str(path.parent.resolve()), timeout=timeout,
                                         allow_errors=False, meta_override=True)
        except RuntimeError as exc:             # the kernel did not start
            if attempt + 1 < attempts:
                continue
            return path, nb, 0.0, f"{type(exc).__name__}: {exc}"
        error = None if result.err is None else f"{type(result.err).__name__}: {result.err}"
        return path, nb, result.time, error


def main(toc=Path("_toc.yml"), config=Path("_config.yml")):
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    execute_config = yaml.safe_load(config.read_text(encoding="utf-8")).get("execute", {})
    if execute_config.get("execute_notebooks") != "cache":
        sys.exit(f"execute_book: _config.yml: execute.execute_notebooks: expected 'cache' "
                 f"(myst-nb reads what this script stores), got "
                 f"{execute_config.get('execute_notebooks')!r}")
    timeout = execute_config.get("timeout", 30)
    cache = get_cache(str(CACHE.resolve()))
    cache.clear_cache()                          # every build executes every notebook
    paths = notebooks(toc)
    workers = max(1, min(len(paths), os.cpu_count() or 1))
    # the longest first (by file size, a fair proxy), so the run does not end on one of them
    paths.sort(key=lambda p: -p.stat().st_size)
    start, failed = time.monotonic(), []
    with ProcessPoolExecutor(workers) as pool:
        jobs = [pool.submit(execute, p, timeout) for p in paths]
        for done, job in enumerate(as_completed(jobs), 1):
            path, nb, seconds, error = job.result()
            name = path.as_posix()
            if error:
                failed.append(str(name))
                print(f"execute_book: [{done}/{len(paths)}] {name}: FAILED ({error[:300]}); "
                      f"the book build runs it again and shows the traceback", flush=True)
                continue
            cache.cache_notebook_bundle(CacheBundleIn(nb, str(path.resolve()),
                                                      data={"execution_seconds": seconds}),
                                        check_validity=False, overwrite=True)
            print(f"execute_book: [{done}/{len(paths)}] {name} in {seconds:.1f} s", flush=True)
    print(f"execute_book: {len(paths) - len(failed)} of {len(paths)} notebooks executed in "
          f"{time.monotonic() - start:.0f} s on {workers} cores", flush=True)


if __name__ == "__main__":
    main()
