"""Argument checks of the grading package (private): paths, notebooks, cells, rows.

Every public callable of :mod:`robodyn.grading` checks its arguments at its top with these
(or with :mod:`robodyn._value_checks`), each refusal naming ``function: argument`` -- the function
the user called. A notebook is checked for the structure nbformat (v4) gives it before any of
its cells is read: a dict whose ``cells`` is a list of cells (dicts with a ``cell_type`` of
``code``, ``markdown`` or ``raw``, a ``source`` that is text or a list of text, a ``metadata``
dict), ``nbformat`` 4, ``nbformat_minor`` an int, ``metadata`` a dict; a *submission* (a
student's file, read as JSON) is only held to its outline (a dict with a list of cells, str
keys, the known keys of the right types) -- its cells are the grader's to judge, each on its
own. Paths are text by design (str or ``os.PathLike``), without NUL and at most
:data:`MAX_PATH` characters.
"""
from __future__ import annotations

import numbers
import os
import re

import nbformat
import numpy as np

from .. import _value_checks, answers

RECORD_TYPES = ("none", "text", "invalid", "numeric", "sympy", "samples")
"""The kinds of answer record :func:`robodyn.answers.encode` writes."""
MAX_PATH = 4096
"""The longest path accepted (Linux's PATH_MAX)."""
MAX_NOTEBOOK = 20 * 2**20
"""The largest notebook (``grader.MAX_NOTEBOOK_BYTES``)."""
CELL_TYPES = ("code", "markdown", "raw")
_CELL_ID = re.compile(r"[a-zA-Z0-9\-_]{1,64}\Z")     # nbformat 4.5's cell id
_TOP = {"nbformat": numbers.Integral, "nbformat_minor": numbers.Integral, "metadata": dict,
        "cells": list}


def path(x, name, *, none=False):
    """A file or folder path: ``str`` or ``os.PathLike`` (not bytes), non-empty, no NUL, at
    most :data:`MAX_PATH` characters; returned as given. ``none``: None passes too.

    >>> path("a/b.ipynb", "f: path")
    'a/b.ipynb'
    >>> path("a\\0b", "f: path")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: path: expected a file path (text without NUL, 1 to 4096 characters), got 'a\\x00b'
    """
    if x is None and none:
        return None
    if not isinstance(x, (str, os.PathLike)) or isinstance(x, bytes):
        raise _value_checks.error(name, "a file path (str or os.PathLike)" +
                            (" or None" if none else ""), _value_checks.describe(x), exc=TypeError)
    s = os.fspath(x)
    if not isinstance(s, str):
        raise _value_checks.error(name, "a file path as text", _value_checks.describe(x), exc=TypeError)
    if not s or len(s) > MAX_PATH or "\0" in s:
        raise _value_checks.error(name, f"a file path (text without NUL, 1 to {MAX_PATH} "
                            "characters)", repr(s[:80]))
    return x


def existing(x, name, *, folder=False, none=False):
    """:func:`path` of an existing file (``folder``: an existing folder); returned."""
    if x is None and none:
        return None
    path(x, name)
    ok = os.path.isdir(x) if folder else os.path.isfile(x)
    if not ok:
        raise _value_checks.error(name, "an existing folder" if folder else "an existing file",
                            repr(os.fspath(x))[:200])
    return x


def label(x, name, *, high=128):
    """A name (an assignment's, a notebook's): 1 to ``high`` characters, no ``/``, NUL or
    control characters (it names folders and database rows); returned."""
    text(x, name, low=1, high=high)
    if "/" in x or any(ord(c) < 32 or ord(c) == 127 for c in x):
        raise _value_checks.error(name, f"a name of 1 to {high} characters without '/' or control "
                            "characters", repr(x[:80]))
    return x


def text(x, name, *, low=0, high=10**6):
    """A ``str`` of ``low`` to ``high`` characters (returned)."""
    if not isinstance(x, str):
        raise _value_checks.error(name, "text (str)", _value_checks.describe(x), exc=TypeError)
    if not low <= len(x) <= high:
        raise _value_checks.error(name, f"text of {low} to {high} characters",
                            f"{len(x)} characters")
    return x


def _str_keys(d, name):
    for k in d:
        if not isinstance(k, str):
            raise _value_checks.error(name, "a dict with text keys", f"the key {_value_checks.describe(k)}",
                                exc=TypeError)


def cell(c, name):
    """One notebook cell (a dict: ``cell_type``, ``source`` text or list of text,
    ``metadata`` a dict, an nbgrader entry there a dict); returned."""
    if not isinstance(c, dict):
        raise _value_checks.error(name, "a notebook cell (a dict)", _value_checks.describe(c), exc=TypeError)
    _str_keys(c, name)
    if c.get("cell_type") not in CELL_TYPES:
        raise _value_checks.error(name, f"a cell whose cell_type is one of {CELL_TYPES}",
                            f"cell_type {_value_checks.describe(c.get('cell_type'))}")
    src = c.get("source", "")
    if not (isinstance(src, str) or isinstance(src, list) and
            all(isinstance(s, str) for s in src)):
        raise _value_checks.error(name, "a cell whose source is text or a list of text",
                            f"source {_value_checks.describe(src)}", exc=TypeError)
    cid = c.get("id")
    if cid is not None and not (isinstance(cid, str) and _CELL_ID.match(cid)):
        raise _value_checks.error(name, "a cell whose id is 1 to 64 letters, digits, - and _",
                            f"id {_value_checks.describe(cid)}", exc=TypeError)
    md = c.get("metadata", {})
    if not isinstance(md, dict) or not isinstance(md.get("nbgrader", {}), dict):
        raise _value_checks.error(name, "a cell whose metadata (and its nbgrader entry) is a dict",
                            f"metadata {_value_checks.describe(md)}", exc=TypeError)
    _str_keys(md, name)
    return c


def notebook(nb, name, *, submission=False, node=True):
    """A notebook (see the module): checked, returned as an ``nbformat.NotebookNode`` when
    ``node`` (a plain dict is converted; a node is returned as it is), else as given.
    ``submission``: only the outline is checked (a student's file).

    >>> notebook({"cells": []}, "f: nb")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: f: nb: expected an nbformat v4 notebook (nbformat 4, nbformat_minor, metadata, a list of cells), got a dict lacking ['metadata', 'nbformat', 'nbformat_minor']
    """
    what = "a notebook (a dict with a list of cells)" if submission else \
        "an nbformat v4 notebook (nbformat 4, nbformat_minor, metadata, a list of cells)"
    if not isinstance(nb, dict):
        raise _value_checks.error(name, what, _value_checks.describe(nb), exc=TypeError)
    _str_keys(nb, name)
    need = ("cells",) if submission else tuple(_TOP)
    missing = sorted(k for k in need if k not in nb)
    if missing:
        raise _value_checks.error(name, what, f"a dict lacking {missing}")
    for k, kind in _TOP.items():
        if k in nb and (not isinstance(nb[k], kind) or isinstance(nb[k], (bool, np.bool_))):
            raise _value_checks.error(name, what, f"{k} {_value_checks.describe(nb[k])}", exc=TypeError)
    if not submission:
        if nb["nbformat"] != 4:
            raise _value_checks.error(name, what, f"nbformat {nb['nbformat']}")
        for i, c in enumerate(nb["cells"]):
            cell(c, f"{name} (cell {i})")
    lists = any(isinstance(c.get("source"), list) for c in nb["cells"] if isinstance(c, dict))
    if node and (lists or not isinstance(nb, nbformat.NotebookNode)):
        nb = nbformat.from_dict(nb)               # new containers: the caller's stay as given
        for c in nb.cells:                        # sources as text (nbformat.reads does so)
            if isinstance(c.get("source"), list):
                c.source = "".join(c.source)
    return nb


def row(r, name, *, keys=()):
    """A grader row: a dict with text keys; ``keys`` must be there and hold text (its
    ``file`` and ``id`` a file's name: no ``/``, no NUL, 1 to 1000 characters); numbers in it
    (points, total, seconds) finite; ``manual`` a dict of texts; returned."""
    if not isinstance(r, dict):
        raise _value_checks.error(name, "a grader row (a dict)", _value_checks.describe(r), exc=TypeError)
    _str_keys(r, name)
    for k in ("file", "id"):
        if k in r and r[k] is not None:
            v = text(r[k], f"{name} ({k!r})", low=1, high=1000)
            if "/" in v or "\0" in v:
                raise _value_checks.error(name, f"a grader row whose {k!r} is a file's name (no '/' "
                                    "or NUL)", repr(v[:80]))
    manual = r.get("manual", {})
    if manual is not None and not (isinstance(manual, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in manual.items())):
        raise _value_checks.error(name, "a grader row whose 'manual' is a dict {grade_id: text}",
                            f"manual {_value_checks.describe(manual)}", exc=TypeError)
    for k in keys:
        if not isinstance(r.get(k), str):
            raise _value_checks.error(name, f"a grader row whose {k!r} is text",
                                f"{k} {_value_checks.describe(r.get(k))}", exc=TypeError)
    for k, v in r.items():
        if isinstance(v, (numbers.Number, np.generic)) and not isinstance(v, (bool, np.bool_)):
            try:
                ok = np.isfinite(float(v))
            except (TypeError, ValueError, OverflowError):
                ok = False
            if not ok:
                raise _value_checks.error(name, "a grader row of finite numbers",
                                    f"{k} {_value_checks.describe(v)}")
    return r


def reference_fields(ref, fname, arg="", complete=False):
    """The checks of a :class:`Reference` (``arg``: the argument holding it, for messages)."""
    at = f"{fname}: {arg}" if arg else fname
    if not isinstance(ref.problems, list) or not all(isinstance(p, answers.Problem)
                                                     for p in ref.problems):
        raise _value_checks.error(f"{at}: problems" if not arg else at, "a list of answers.Problem",
                            _value_checks.describe(ref.problems), exc=TypeError)
    keys = [p.key for p in ref.problems]
    if len(set(keys)) != len(keys):
        raise _value_checks.error(f"{at}: problems" if not arg else at, "problems with distinct keys",
                            repr(keys)[:200])
    for name, kind in (("answers", dict), ("inputs", list)):
        d = getattr(ref, name)
        if not isinstance(d, dict) or not all(
                isinstance(k, str) and isinstance(v, kind) for k, v in d.items()):
            raise _value_checks.error(f"{at}: {name}" if not arg else at,
                                f"a dict {{problem key: {kind.__name__}}}",
                                _value_checks.describe(d), exc=TypeError)
    for k, v in ref.answers.items():
        if k not in keys or v.get("type") not in RECORD_TYPES:
            raise _value_checks.error(f"{at}: answers" if not arg else at, "an encoded reference "
                                f"(a record whose 'type' is one of {RECORD_TYPES}) per problem",
                                f"{k!r}: {_value_checks.describe(v)}"[:200])
    lacking = [k for k in keys if k not in ref.answers]
    if lacking and complete:
        raise _value_checks.error(f"{at}: answers" if not arg else at,
                            "an encoded reference of every problem", f"none for {lacking}")


def callable_arg(f, name):
    """A callable or None (returned)."""
    if f is not None and not callable(f):
        raise _value_checks.error(name, "a callable or None", _value_checks.describe(f), exc=TypeError)
    return f


def run_cells_args(cells, problems, inputs, sandboxed, spec_from, seed, unsafe, notebook):
    """:func:`run_cells`'s argument checks (before any process starts)."""
    f = "run_cells"
    if isinstance(cells, (str, bytes, dict)) or not isinstance(cells, (list, tuple)):
        raise _value_checks.error(f"{f}: cells", "a list of code cells' sources (str)",
                            _value_checks.describe(cells),
                            exc=TypeError)
    cells = [text(c, f"{f}: cells", high=MAX_NOTEBOOK) for c in cells]
    if isinstance(problems, (str, bytes, dict)) or not isinstance(problems, (list, tuple)):
        raise _value_checks.error(f"{f}: problems", "a list of problem specs (Problem.to_dict())",
                            _value_checks.describe(problems), exc=TypeError)
    try:
        problems = [answers.Problem.from_dict(p).to_dict() if isinstance(p, dict) else None
                    for p in problems]
    except (TypeError, ValueError) as exc:
        raise _value_checks.error(f"{f}: problems", "a list of problem specs (Problem.to_dict())",
                            f"a spec that is not one ({str(exc)[:200]})") from exc
    if None in problems:
        raise _value_checks.error(f"{f}: problems", "a list of problem specs (dicts)",
                            "a list holding something else", exc=TypeError)
    keys = {p["key"] for p in problems}
    if inputs is not None and not (isinstance(inputs, dict) and all(
            isinstance(k, str) and k in keys and isinstance(v, list) and
            numeric_lists(v) for k, v in inputs.items())):
        raise _value_checks.error(f"{f}: inputs", "None or {problem key: a list of argument lists "
                            "of finite numbers}", _value_checks.describe(inputs), exc=TypeError)
    _value_checks.flag(sandboxed, f"{f}: sandboxed")
    _value_checks.flag(unsafe, f"{f}: unsafe")
    if spec_from is not None and not (isinstance(spec_from, str) and spec_from.isidentifier()
                                      and len(spec_from) <= 100):
        raise _value_checks.error(f"{f}: spec_from", "None or the name of a notebook variable",
                            _value_checks.describe(spec_from), exc=TypeError)
    _value_checks.size(seed, f"{f}: seed", low=0, high=2**63 - 1)
    if notebook is not None and not isinstance(notebook, (bytes, bytearray)):
        existing(notebook, f"{f}: notebook")
    elif notebook is not None and len(notebook) > MAX_NOTEBOOK:
        raise _value_checks.error(f"{f}: notebook", f"at most {MAX_NOTEBOOK} bytes",
                            f"{len(notebook)} bytes")
    return cells, problems, inputs, notebook


def numeric_lists(v, depth=0):
    """Nested lists of finite numbers (the inputs of function answers), at most 6 deep."""
    if isinstance(v, (list, tuple)):
        return depth < 6 and all(numeric_lists(e, depth + 1) for e in v)
    return isinstance(v, (int, float, np.integer, np.floating)) and \
        not isinstance(v, (bool, np.bool_)) and bool(np.isfinite(v))


def read_path(x, name):
    """A path to read: str, bytes (a file name that is not UTF-8) or os.PathLike."""
    if isinstance(x, bytes):
        if not x or len(x) > MAX_PATH or b"\0" in x:
            raise _value_checks.error(name, "a file path", repr(x[:80]))
        return x
    return path(x, name)
