"""Argument checks of :mod:`robodyn.answers` (issue 28): every field of a
:class:`robodyn.answers.Problem` is checked before anything is stored, and the random
generators and test points the comparisons take, through :mod:`robodyn._value_checks`."""
from __future__ import annotations

import re

import numpy as np

from .. import _value_checks

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
MAX_INPUT_SIZE = 10_000
"""Largest number of entries of one argument of a function answer (``Problem.inputs``)."""


def _range(rng, name):
    """(low, high) finite with low < high, as floats."""
    if isinstance(rng, np.ndarray) and rng.shape == (2,):
        rng = list(_value_checks.real_array(rng, name))   # any byte order or layout
    if not (isinstance(rng, (tuple, list)) and len(rng) == 2):
        raise _value_checks.error(name, "(low, high)", rng, exc=TypeError)
    lo, hi = (_value_checks.real_number(v, name) for v in rng)
    if not lo < hi:
        raise _value_checks.error(name, "(low, high) with low < high", repr(tuple(rng)))
    return lo, hi


def _check_problem(p):
    """Problem's argument checks (all of them, before anything is stored)."""
    for name in ("key", "answer"):
        v = getattr(p, name)
        if not isinstance(v, str) or not re.match(r"[A-Za-z_][A-Za-z0-9_\-]*\Z", v):
            raise _value_checks.error(f"Problem: {name}", "an identifier", repr(v),
                                exc=TypeError if not isinstance(v, str) else ValueError)
    for name in ("title", "chapter"):
        if not isinstance(getattr(p, name), str):
            raise _value_checks.error(f"Problem: {name}", "a string", getattr(p, name), exc=TypeError)
    points = _value_checks.real_number(p.points, "Problem: points")
    if points < 0:
        raise _value_checks.error("Problem: points", "a number >= 0", repr(points))
    object.__setattr__(p, "points", points)
    for name in ("rtol", "atol"):
        object.__setattr__(p, name, _value_checks.tolerance(getattr(p, name), f"Problem: {name}"))
    if not isinstance(p.variables, dict):
        raise _value_checks.error("Problem: variables", "a dict {name: (low, high)}", p.variables,
                            exc=TypeError)
    variables = {}
    for v, rng in p.variables.items():
        if not isinstance(v, str) or not re.match(r"[A-Za-z][A-Za-z0-9_]*\Z", v):
            raise _value_checks.error("Problem: variables", "names (letters, digits, _)", repr(v),
                                exc=TypeError if not isinstance(v, str) else ValueError)
        variables[v] = _range(rng, f"Problem: variables[{v!r}]")
    object.__setattr__(p, "variables", variables)
    if not isinstance(p.angles, (tuple, list)) or not all(isinstance(a, str) for a in p.angles):
        raise _value_checks.error("Problem: angles", "a tuple of variable names", p.angles,
                            exc=TypeError)
    unknown = set(p.angles) - set(variables)
    if unknown:
        raise ValueError(f"Problem: angles: {sorted(unknown)} are not among the variables "
                         f"(expected names among {sorted(variables)})")
    object.__setattr__(p, "angles", tuple(p.angles))
    object.__setattr__(p, "input_range", _range(p.input_range, "Problem: input_range"))
    if p.inputs is not None:
        if not isinstance(p.inputs, (tuple, list)) or not p.inputs:
            raise _value_checks.error("Problem: inputs", "argument shapes, e.g. ((2,),)", p.inputs,
                                exc=TypeError)
        shapes = []
        for s in p.inputs:
            if not isinstance(s, (tuple, list)) or len(s) > 3:
                raise _value_checks.error("Problem: inputs", "shapes (tuples of at most 3 sizes)", s,
                                    exc=TypeError)
            shape = tuple(_value_checks.size(k, "Problem: inputs", high=MAX_INPUT_SIZE) for k in s)
            if int(np.prod(shape)) > MAX_INPUT_SIZE:
                raise _value_checks.error("Problem: inputs", f"at most {MAX_INPUT_SIZE} entries per "
                                    "argument", f"shape {shape}")
            shapes.append(shape)
        object.__setattr__(p, "inputs", tuple(shapes))


def _rng_arg(rng, name):
    """A numpy Generator, from a Generator, a seed (an integer >= 0) or None (fresh)."""
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    return np.random.default_rng(_value_checks.size(rng, name, low=0, high=2**63 - 1,
                                              hint="a seed, or np.random.default_rng(seed)"))


def _checked_points(points, name, problem=None):
    """Given test points -- ``{variable: values}`` (one 1-D sample of each variable, of one
    length; the problem's variables when there is a problem) or a list of argument tuples
    (a function's inputs) -- refused unless finite real numbers (a NaN point would compare
    anything)."""
    if isinstance(points, dict):
        if problem is not None and (problem.is_function or set(points) != set(problem.variables)):
            raise _value_checks.error(name, "{variable: values} of the problem's variables "
                                f"{sorted(problem.variables)}" if not problem.is_function else
                                "argument tuples (the problem's answer is a function)",
                                f"the keys {[str(k)[:40] for k in list(points)[:5]]}")
        out = {}
        for k, v in points.items():
            if not isinstance(k, str) or not _IDENTIFIER.match(k):
                raise _value_checks.error(name, "{variable name: values}", f"the key {k!r}"[:80],
                                    exc=TypeError)
            out[k] = _value_checks.real_array(v, f"{name}[{k!r}]")
        if len({a.shape for a in out.values()}) > 1 or any(
                a.ndim != 1 or not a.size for a in out.values()):
            raise _value_checks.error(name, "one non-empty 1-D sample of each variable, all of one "
                                "length", f"shapes {sorted({a.shape for a in out.values()})}")
        return out
    if isinstance(points, np.ndarray) and points.ndim >= 2:
        points = list(points)                      # an array of argument tuples
    if not isinstance(points, (list, tuple)) or not 0 < len(points) <= 100_000:
        raise _value_checks.error(name, "{variable: values} or a list of argument tuples "
                            "(1 to 100000)", points, exc=TypeError)
    if problem is not None and not problem.is_function:
        raise _value_checks.error(name, f"{{variable: values}} of {sorted(problem.variables)}",
                            "argument tuples (the problem's answer is not a function)")
    out = []
    for args in points:
        if not isinstance(args, (list, tuple, np.ndarray)):
            raise _value_checks.error(name, "argument tuples", args, exc=TypeError)
        out.append(tuple(_value_checks.real_array(a, name) for a in args))
    return out
