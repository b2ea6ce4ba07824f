"""The API reference (book/api/) shows what each argument *is* (issue 37).

A public function of robodyn declares its arguments' kinds in its signature, with the classes
of :mod:`robodyn.kinds` (``def log_so3(R: Rotation, ...)``). autodoc shows signatures without
annotations (the numpy and sympy types in them are no part of the book's reference), so this
extension adds, to the docstring of every documented callable that has kinds, a field list
"Arguments' kinds" naming each such argument and what its kind checks at the call (the kind's
``expected`` phrase), e.g. ``R -- a proper rotation matrix``.
"""
from __future__ import annotations

import inspect


def kinds_of(obj) -> list[tuple[str, type]]:
    """The (argument, kind) pairs of a callable's annotations that are robodyn kinds."""
    try:
        from robodyn.kinds import Kind
    except ImportError:                      # a library without declared kinds
        return []
    func = inspect.unwrap(obj.__init__ if inspect.isclass(obj) else obj)
    try:
        hints = inspect.get_annotations(func, eval_str=True)
    except Exception:                        # an annotation the module cannot resolve
        hints = getattr(func, "__annotations__", {})
    return [(name, hint) for name, hint in hints.items()
            if name != "return" and inspect.isclass(hint) and issubclass(hint, Kind)]


def add_kinds(app, what, name, obj, options, lines):
    if what not in ("function", "method", "class"):
        return
    pairs = kinds_of(obj)
    if not pairs:
        return
    lines += ["", ":Arguments' kinds:"]
    lines += [f"    ``{arg}`` -- {kind.__name__}: {kind.expected}" for arg, kind in pairs]


def setup(app):
    app.connect("autodoc-process-docstring", add_kinds)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
