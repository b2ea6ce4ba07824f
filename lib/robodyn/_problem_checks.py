"""Argument checks of :class:`robodyn.answers.Problem` (issue 28): every field is checked
before anything is stored, through :mod:`robodyn._checks`."""
from __future__ import annotations

import re

import numpy as np

from . import _checks

MAX_INPUT_SIZE = 10_000
"""Largest number of entries of one argument of a function answer (``Problem.inputs``)."""


def _range(rng, name):
    """(low, high) finite with low < high, as floats."""
    if isinstance(rng, np.ndarray) and rng.shape == (2,):
        rng = list(_checks.real_array(rng, name))   # any byte order or layout
    if not (isinstance(rng, (tuple, list)) and len(rng) == 2):
        raise _checks.error(name, "(low, high)", rng, exc=TypeError)
    lo, hi = (_checks.real_number(v, name) for v in rng)
    if not lo < hi:
        raise _checks.error(name, "(low, high) with low < high", repr(tuple(rng)))
    return lo, hi


def _check_problem(p):
    """Problem's argument checks (all of them, before anything is stored)."""
    for name in ("key", "answer"):
        v = getattr(p, name)
        if not isinstance(v, str) or not re.match(r"[A-Za-z_][A-Za-z0-9_\-]*\Z", v):
            raise _checks.error(f"Problem: {name}", "an identifier", repr(v),
                                exc=TypeError if not isinstance(v, str) else ValueError)
    for name in ("title", "chapter"):
        if not isinstance(getattr(p, name), str):
            raise _checks.error(f"Problem: {name}", "a string", getattr(p, name), exc=TypeError)
    points = _checks.real_number(p.points, "Problem: points")
    if points < 0:
        raise _checks.error("Problem: points", "a number >= 0", repr(points))
    object.__setattr__(p, "points", points)
    for name in ("rtol", "atol"):
        object.__setattr__(p, name, _checks.tolerance(getattr(p, name), f"Problem: {name}"))
    if not isinstance(p.variables, dict):
        raise _checks.error("Problem: variables", "a dict {name: (low, high)}", p.variables,
                            exc=TypeError)
    variables = {}
    for v, rng in p.variables.items():
        if not isinstance(v, str) or not re.match(r"[A-Za-z][A-Za-z0-9_]*\Z", v):
            raise _checks.error("Problem: variables", "names (letters, digits, _)", repr(v),
                                exc=TypeError if not isinstance(v, str) else ValueError)
        variables[v] = _range(rng, f"Problem: variables[{v!r}]")
    object.__setattr__(p, "variables", variables)
    if not isinstance(p.angles, (tuple, list)) or not all(isinstance(a, str) for a in p.angles):
        raise _checks.error("Problem: angles", "a tuple of variable names", p.angles,
                            exc=TypeError)
    unknown = set(p.angles) - set(variables)
    if unknown:
        raise ValueError(f"Problem: angles: {sorted(unknown)} are not among the variables "
                         f"(expected names among {sorted(variables)})")
    object.__setattr__(p, "angles", tuple(p.angles))
    object.__setattr__(p, "input_range", _range(p.input_range, "Problem: input_range"))
    if p.inputs is not None:
        if not isinstance(p.inputs, (tuple, list)) or not p.inputs:
            raise _checks.error("Problem: inputs", "argument shapes, e.g. ((2,),)", p.inputs,
                                exc=TypeError)
        shapes = []
        for s in p.inputs:
            if not isinstance(s, (tuple, list)) or len(s) > 3:
                raise _checks.error("Problem: inputs", "shapes (tuples of at most 3 sizes)", s,
                                    exc=TypeError)
            shape = tuple(_checks.size(k, "Problem: inputs", high=MAX_INPUT_SIZE) for k in s)
            if int(np.prod(shape)) > MAX_INPUT_SIZE:
                raise _checks.error("Problem: inputs", f"at most {MAX_INPUT_SIZE} entries per "
                                    "argument", f"shape {shape}")
            shapes.append(shape)
        object.__setattr__(p, "inputs", tuple(shapes))
