r"""Forgiving answer checking for the book's problem sets (the Assignments part).

A student's answer -- a sympy expression or matrix, numbers, a numpy array, a function, or a
text such as ``"l1*cos(q1) + l2*cos(q1 + q2)"`` -- is compared with the reference and accepted
in any equivalent form:

1. **symbolically** first: small differences are simplified and a zero proves equality;
2. then **numerically**, at many random points of the problem's variables (or random inputs of a
   function), with a relative and an absolute tolerance.

When the answer is wrong, the comparison tries the common mistakes and names the one that fits:
a flipped sign, a missing or extra factor ½, a transposed matrix (a transposed Jacobian), the
twist order (v, ω) instead of the book's (ω, v), degrees instead of radians, a wrong shape, a
missing term (e.g. one Christoffel term of C), or which entries are wrong.

Text is never evaluated: :func:`parse_expression` reads it with Python's :mod:`ast` parser and
turns the syntax tree into sympy through a whitelist (numbers, names of variables, ``+ - * / **``,
a few functions such as ``sin`` and ``sqrt``, lists for matrices). Attribute access, subscripts,
``__import__`` and every name that starts with an underscore are refused, and sizes are bounded.

A :class:`ProblemSet` holds the problems of a set; in a student notebook it carries an *answer
key* (:func:`fingerprint`: one salted digest of the whole reference's values at fixed points,
rounded -- neither its formula, nor its values, nor anything about one entry), so that
``problems.check("p1", J)`` gives feedback while the student works: correct, one of the common
mistakes of the whole answer, or "does not match" -- never which entries are wrong, so the key
cannot be searched entry by entry. The grade itself is made
outside the student's process by :mod:`robodyn.grading`, from the instructor's references at
fresh random points.

>>> import sympy as sp
>>> q = sp.Symbol('q')
>>> compare(sp.sin(2 * q), 2 * sp.sin(q) * sp.cos(q)).correct
True
>>> compare(-sp.cos(q), sp.cos(q)).mistake
'sign'
"""
from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from .. import _value_checks

from . import _key_hash as _key_hash
from ._problem_checks import (MAX_INPUT_SIZE, _check_problem,  # noqa: F401 (MAX_INPUT_SIZE)
                              _checked_points, _rng_arg)
from ._values import (MAX_NESTED_ENTRIES, MAX_SYMBOLIC_DEGREE,  # noqa: F401
                             MAX_SYMBOLIC_OPS, SYMBOLIC_BUDGET, _as_value, _canonical,
                             _all_close, _close, _evaluator, _negated, _npoints, _OverBudget,
                             _resolved,
                             _Samples, _scaled, _shape_of, _shape_str, _swap_halves,
                             _symbolic_equal, _to_grid, _within_budget)
from ..text_parser import MAX_TEXT, UnsafeExpressionError, parse_expression
from ..errors import RobodynError

__all__ = ["parse_expression", "UnsafeExpressionError", "Feedback", "Problem", "ProblemSet",
           "compare", "equivalent", "encode", "decode", "fingerprint"]

# --------------------------------------------------------------------------
# feedback
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Feedback:
    """The outcome of checking one answer.

    ``status`` is ``'correct'``, ``'incorrect'``, ``'unanswered'``, ``'error'`` or ``'form'``
    (a self-check that can judge only the form: shape, finite numbers); ``mistake``
    names the likely mistake (``'sign'``, ``'half'``, ``'double'``, ``'transpose'``,
    ``'twist-order'``, ``'degrees'``, ``'shape'``, ``'missing-term'``, ``'entries'``,
    ``'variables'``, ``'type'``) or is None; ``message`` says it in words; ``fraction`` is
    the share of right entries of a partly right answer.
    """
    status: str
    message: str
    mistake: str | None = None
    key: str = ""
    fraction: float | None = None
    """The share of right entries of a wrong answer whose entries are partly right (the
    grader's partial credit); None otherwise."""

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    def __bool__(self):
        return self.correct

    def __str__(self):
        mark = {"correct": "✔", "incorrect": "✘", "unanswered": "…", "error": "✘",
                "form": "○"}[self.status]
        head = f"{mark} {self.key}: " if self.key else f"{mark} "
        return head + self.message

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


def _fb(status, message, mistake=None):
    return Feedback(status, message, mistake)


# --------------------------------------------------------------------------
# problems
# --------------------------------------------------------------------------

class UnknownProblemError(RobodynError, KeyError, ValueError):
    """A problem key that the set does not have (a KeyError for mappings, a ValueError for the
    argument checks)."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Problem:
    """One problem of a set: where its answer lives and how to sample it.

    Parameters
    ----------
    key : short id, e.g. ``'p1'`` (letters, digits, ``_``, ``-``)
    answer : the name of the notebook variable that holds the answer, e.g. ``'J'``
    title : a few words shown in feedback and score tables
    chapter : the book page the problem practises, e.g. ``'book/part1/04_velocity_kinematics'``
    points : its weight in the score
    variables : ``{name: (low, high)}`` sampling ranges of the symbols the answer may contain
        (unlisted symbols are refused as unexpected)
    angles : names among ``variables`` that are angles in radians (degree mistakes are tried)
    inputs : for an answer that is a *function*: the shapes of its arguments, e.g. ``((2,),)``;
        arguments are drawn uniformly from ``input_range``
    rtol, atol : tolerances of the numeric comparison: an answer passes where it is within
        ``atol + rtol * size`` of the reference, ``size`` the larger of the reference's
        magnitude there and its largest over the test points; ``rtol`` is relative, ``atol``
        absolute (in the answer's units). A reference within ``10 * atol`` of zero (but not
        zero) is refused: every answer that small would pass; give such a problem a smaller
        ``atol``.
    """
    key: str
    answer: str
    title: str = ""
    chapter: str = ""
    points: float = 1.0
    variables: dict = field(default_factory=dict)
    angles: tuple = ()
    inputs: tuple | None = None
    input_range: tuple = (-2.0, 2.0)
    rtol: float = 1e-6
    atol: float = 1e-9

    def __post_init__(self):
        _check_problem(self)

    @property
    def is_function(self) -> bool:
        return self.inputs is not None

    def symbols(self):
        """The problem's variables as sympy Symbols (real; positive when the range is)."""
        return {n: sp.Symbol(n, real=True, positive=True) if lo > 0 else sp.Symbol(n, real=True)
                for n, (lo, hi) in self.variables.items()}

    def sample_points(self, n, rng):
        """``n`` random points: ``{name: array(n)}``, or a list of argument tuples for a
        function; ``rng`` is a numpy Generator (advanced) or a seed.

        >>> Problem("p", "x", variables={"q": (0, 1)}).sample_points(2, 0)["q"].shape
        (2,)
        """
        n = _value_checks.size(n, "Problem.sample_points: n", high=100_000)
        rng = _rng_arg(rng, "Problem.sample_points: rng")
        if self.is_function:
            lo, hi = self.input_range
            return [tuple(rng.uniform(lo, hi, size=s) for s in self.inputs) for _ in range(n)]
        return {v: rng.uniform(lo, hi, size=n) for v, (lo, hi) in self.variables.items()}

    def to_dict(self):
        return {"key": self.key, "answer": self.answer, "title": self.title,
                "chapter": self.chapter, "points": self.points,
                "variables": {k: list(v) for k, v in self.variables.items()},
                "angles": list(self.angles),
                "inputs": None if self.inputs is None else [list(s) for s in self.inputs],
                "input_range": list(self.input_range), "rtol": self.rtol, "atol": self.atol}

    @classmethod
    def from_dict(cls, d):
        """The Problem back from ``to_dict`` (JSON-safe lists become tuples); every field
        is checked as by ``Problem(...)``, errors naming ``Problem.from_dict: d``.

        >>> p = Problem("p1", "J", variables={"q": (0.0, 1.0)})
        >>> Problem.from_dict(p.to_dict()) == p
        True
        """
        name = "Problem.from_dict: d"
        if not isinstance(d, dict):
            raise _value_checks.error(name, "a dict of Problem fields (Problem.to_dict())", d,
                                exc=TypeError)
        fields = ("key", "answer", "title", "chapter", "points", "variables", "angles",
                  "inputs", "input_range", "rtol", "atol")
        unknown = [k for k in d if k not in fields]
        if unknown or "key" not in d or "answer" not in d:
            raise _value_checks.error(name, f"a dict with 'key', 'answer' and fields among {fields}",
                                f"unknown fields {[str(k)[:40] for k in unknown[:3]]}"
                                if unknown else "a dict without 'key' or 'answer'")
        d = dict(d)
        try:
            if not isinstance(d.get("variables", {}), dict):
                raise _value_checks.refusal(TypeError, "variables: expected a dict {name: [low, high]}")
            d["variables"] = {k: tuple(v) for k, v in d.get("variables", {}).items()}
            for f, default in (("angles", ()), ("input_range", (-2.0, 2.0))):
                if not isinstance(d.get(f, default), (list, tuple)):
                    raise _value_checks.refusal(TypeError, f"{f}: expected a list")
                d[f] = tuple(d.get(f, default))
            if d.get("inputs") is not None:
                d["inputs"] = tuple(tuple(s) for s in d["inputs"])
            return cls(**d)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{name}: expected the fields of a Problem, got {exc}") from exc


# --------------------------------------------------------------------------
# comparison
# --------------------------------------------------------------------------

def _diagnose(S, R, shape, problem, student_ev, pts, ref_sym):
    """Name the likely mistake of an answer S (values at pts) against R."""
    nonzero = np.max(np.abs(R[np.isfinite(R)]), initial=0) > (problem.atol if problem else 1e-9)
    if nonzero and _all_close(S, -R, problem):
        return _fb("incorrect", "it equals the answer with the sign flipped: check a sign "
                   "(an orientation, a cross product, a minus in a derivative).", "sign")
    if nonzero and _all_close(S, 2 * R, problem):
        return _fb("incorrect", "it is twice the answer: a factor ½ is missing (e.g. in "
                   "T = ½ q̇ᵀM q̇ or in a Christoffel symbol).", "half")
    if nonzero and _all_close(S, R / 2, problem):
        return _fb("incorrect", "it is half the answer: an extra factor ½.", "double")
    if len(shape) == 2 and shape[0] == shape[1] and _all_close(S, np.swapaxes(R, 1, 2), problem):
        return _fb("incorrect", "it is the transpose of the answer (a transposed Jacobian or "
                   "rotation? rows are output components, columns are joints).", "transpose")
    swapped = _swap_halves(R)
    if swapped is not None and _all_close(S, swapped, problem):
        return _fb("incorrect", "it has the angular and linear parts in the wrong order: the "
                   "book writes twists as (ω, v) and wrenches as (m, f).", "twist-order")
    if problem is not None and nonzero:
        for factor, what in ((180 / np.pi, "in degrees where radians are expected"),
                             (np.pi / 180, "in radians where degrees are expected")):
            if _all_close(S, R * factor, problem):
                return _fb("incorrect", f"it is the answer {what} (× {factor:.4g}).", "degrees")
        if problem.angles or problem.is_function:
            try:
                Sd = student_ev(_scaled(pts, problem, 180 / np.pi))
            except Exception:                       # noqa: BLE001 -- a guess, nothing more
                Sd = None
            if Sd is not None and _all_close(_to_grid(Sd, shape) if _to_grid(Sd, shape)
                                             is not None else Sd, R, problem):
                return _fb("incorrect", "it treats the angles as degrees: sympy and numpy "
                           "trigonometric functions take radians.", "degrees")
    if ref_sym is not None:
        found = _missing_term(S, ref_sym, pts, problem, shape)
        if found is not None:
            return found
    order = _reverse_order(student_ev, pts, shape, R, problem)
    wrong = ~np.all(_close(S, R, problem), axis=0)
    if wrong.shape and wrong.any() and not wrong.all():
        idx = [tuple(int(i) + 1 for i in np.atleast_1d(ix)) for ix in np.argwhere(wrong)]
        where = ", ".join(str(i[0]) if len(i) == 1 else str(i) for i in idx[:8])
        # partial credit counts the entries that vary from point to point (an entry that is
        # the same everywhere, like the 0 0 0 1 row of a pose, proves little)
        varying = ~np.all(np.abs(R - R[:1]) <= 1e-12 * (1 + np.abs(R[:1])), axis=0) \
            if R.shape[0] > 1 else np.ones(wrong.shape, bool)
        counted = varying if varying.any() else np.ones(wrong.shape, bool)
        return Feedback("incorrect", f"some entries are right, but not entries {where} "
                        f"(counted from 1)." + (" " + _key_hash.ROTATION_ORDER if order else ""),
                        "rotation-order" if order else "entries",
                        fraction=float(1 - wrong[counted].sum() / counted.sum()))
    if order:
        return _fb("incorrect", _key_hash.ROTATION_ORDER, "rotation-order")
    return _fb("incorrect", "it does not equal the answer at random test points.")


def _reverse_order(student_ev, pts, shape, R, problem):
    """Is the answer a product of rotations in the reverse order? B(α)A(θ) = (A(-θ)B(-α))ᵀ:
    the answer at the negated angles, transposed, is then the reference (see _key_mistakes)."""
    if not (len(shape) == 2 and shape[0] == shape[1] and problem is not None and
            len(problem.angles) >= 2 and isinstance(pts, dict)):
        return False
    try:
        Sr = _to_grid(student_ev(_negated(pts, problem)), shape)
    except Exception:                               # noqa: BLE001 -- a guess, nothing more
        return False
    return Sr is not None and _all_close(np.swapaxes(Sr, 1, 2), R, problem)


def _missing_term(S, ref_sym, pts, problem, shape):
    """Is every wrong entry of S the reference entry with one additive term left out (or
    added twice)?"""
    M = ref_sym if isinstance(ref_sym, sp.MatrixBase) else sp.Matrix([[ref_sym]])
    entries = list(M)
    R = np.asarray(S)
    flatS = R.reshape(R.shape[0], -1)
    notes = []
    for j, e in enumerate(entries):
        terms = sp.Add.make_args(sp.expand(e)) if sp.count_ops(e) < 400 else (e,)
        if len(terms) > 40:
            return None
        full = _evaluator("symbolic", e, problem, ())(pts)
        col = flatS[:, j]
        if np.all(_close(col, full, problem)):
            continue
        hit = None
        for t in terms:
            tv = _evaluator("symbolic", t, problem, ())(pts)
            if np.all(_close(col, full - tv, problem)):
                hit = ("misses", t)
                break
            if np.all(_close(col, full + tv, problem)):
                hit = ("doubles", t)
                break
        if hit is None:
            return None
        notes.append((j, hit))
    if not notes:
        return None
    cols = M.shape[1]
    parts = [f"entry {(j // cols + 1, j % cols + 1) if len(shape) == 2 else j + 1} "
             f"{verb} a term" for j, (verb, t) in notes]
    return Feedback("incorrect", "; ".join(parts) + " of the answer (e.g. one Christoffel "
                    "term Γ_ijk q̇_k of C, or a term of a sum over links).", "missing-term",
                    fraction=float(1 - len(notes) / len(entries)) if len(entries) > 1 else None)


def compare(answer, reference, problem=None, *, n_points=24, rng=None, points=None):
    """Compare an answer with the reference; accept any equivalent form, name likely mistakes.

    Parameters
    ----------
    answer : sympy expression or Matrix, number(s), ndarray, str (read by
        :func:`parse_expression`), a function (for a problem with ``inputs``), or None
    reference : the same kinds (or an answer-key fingerprint, see :func:`fingerprint`)
    problem : Problem, optional: variables and their ranges, angle names, tolerances
    n_points : number of random points of the numeric comparison
    rng : numpy Generator or seed for the random points
    points : the points to use (overrides n_points and rng)

    Returns
    -------
    Feedback

    Examples
    --------
    >>> import sympy as sp
    >>> th = sp.Symbol('theta')
    >>> R = sp.Matrix([[sp.cos(th), -sp.sin(th)], [sp.sin(th), sp.cos(th)]])
    >>> compare(R.T, R).mistake, compare("[[cos(theta), -sin(theta)], [sin(theta), cos(theta)]]", R).status
    ('transpose', 'correct')
    """
    return _compare(answer, reference, problem, n_points, rng, points, "compare")


def _compare(answer, reference, problem, n_points, rng, points, fname):
    """:func:`compare` for the function the user called, ``fname`` (every argument checked
    first, named ``fname: argument``)."""
    n_points = _value_checks.size(n_points, f"{fname}: n_points", high=100_000)
    _problem_arg(problem, f"{fname}: problem")
    rng = _rng_arg(rng, f"{fname}: rng")
    if points is not None:
        points = _checked_points(points, f"{fname}: points", problem)
    if isinstance(reference, _HashKey):
        return _key_compare(answer, reference, problem) if answer is not None else \
            _fb("unanswered", "not answered yet.")
    rkind, rval = _value_arg(reference, problem, f"{fname}: reference", reference=True)
    if isinstance(points, dict) and rkind == "symbolic":
        missing = sorted(s.name for s in rval.free_symbols if s.name not in points)
        if missing:
            raise _value_checks.error(f"{fname}: points", "values of every variable of the "
                                "reference", f"none of {missing}")
    if rkind == "function" and (problem is None or not problem.is_function):
        raise _no_inputs(f"{fname}: problem", problem)
    if answer is None:
        return _fb("unanswered", "not answered yet.")
    # a value is checked (text inside it read by the safe parser); a text is the student's
    read = _read_answer(answer, problem, None if isinstance(answer, str) else f"{fname}: answer")
    if isinstance(read, Feedback):
        return read
    skind, sval = read
    ref_shape = _shape_of(rkind, rval)
    if rkind == "symbolic":
        rval = _canonical(rval, problem)
    # symbolic first
    if skind == "symbolic" and rkind == "symbolic" and _shape_of(skind, sval) == ref_shape:
        if _symbolic_equal(sval, rval, problem):
            return _fb("correct", "correct (equal symbolically).")
    # then numerically at random points
    if rkind in ("key", "samples"):
        pts = rval.points
    elif points is not None:
        pts = points
    else:
        syms = [v for k, v in ((rkind, rval), (skind, sval)) if k == "symbolic"]
        pts = _default_points(problem, syms, n_points, rng, fname,
                              function=(rkind == "function"))
    if rkind == "function":
        R = _reference_values(rkind, rval, problem, None, pts, f"{fname}: reference")
        ref_shape = R.shape[1:]
    else:
        R = _reference_values(rkind, rval, problem, ref_shape, pts, f"{fname}: reference")
    if not np.all(np.isfinite(R)):
        return _fb("error", "the reference is not finite (NaN or infinity) at some test "
                   "points: it cannot be compared with.")
    _resolved(R, problem, f"{fname}: reference", rval if rkind == "symbolic" else None)
    evaluated = _evaluate_answer(skind, sval, problem, pts)
    if isinstance(evaluated, Feedback):
        return evaluated
    student_ev, S = evaluated
    grid = _to_grid(S, ref_shape)
    if grid is not None and not np.all(np.isfinite(grid[np.isfinite(R)])):
        return _fb("incorrect", "the answer is not finite (NaN or infinity) where the "
                   "reference is.", "type")
    if grid is None:
        if len(ref_shape) == 2 and S.shape[1:] == ref_shape[::-1] and \
                _all_close(np.swapaxes(S, 1, 2), R, problem):
            return _fb("incorrect", f"it is the transpose of the answer ({_shape_str(S.shape[1:])}"
                       f" instead of {_shape_str(ref_shape)}).", "transpose")
        return _fb("incorrect", f"wrong shape: expected {_shape_str(ref_shape)}, got "
                   f"{_shape_str(S.shape[1:])}.", "shape")
    if _all_close(grid, R, problem):
        n = _npoints(pts) if (isinstance(pts, list) or pts) else 0
        return _fb("correct", f"correct (equal at {n} random points)." if n > 1 else
                   "correct (equal within the tolerance).")
    ref_sym = rval if rkind == "symbolic" else None
    return _diagnose(grid, R, ref_shape, problem, student_ev, pts, ref_sym)


def _read_answer(answer, problem, name=None):
    """``(kind, value)`` of an answer (symbols onto the problem's), or the Feedback that
    refuses it: unreadable text, a kind that cannot be an answer, unexpected variables. With
    ``name``, what cannot be an answer (unreadable text included) raises an error naming it
    instead (:func:`_value_arg`)."""
    try:
        kind, val = _as_value(answer, problem) if name is None else \
            _value_arg(answer, problem, name)
    except UnsafeExpressionError as exc:
        if name is not None:
            raise
        return _fb("error", f"the text could not be read: {exc}", "type")
    except (TypeError, ValueError) as exc:
        if name is not None:
            raise
        return _fb("incorrect", f"this kind of answer cannot be right: {exc}", "type")
    if kind == "symbolic":
        val = _canonical(val, problem)
        if problem is not None:
            extra = sorted(s.name for s in val.free_symbols if s.name not in problem.variables)
            if extra:
                return _fb("incorrect", f"it depends on {', '.join(extra)}, which the answer "
                           f"does not (allowed: {', '.join(problem.variables) or 'no symbols'})."
                           , "variables")
    return kind, val


_VALUE = ("a number, an expression, a matrix, numbers (a list or an array), text of an "
          "expression, or a function")


def _value_arg(x, problem, name, reference=False):
    """``(kind, value)`` of an argument that must be a value (an answer or a reference), its
    text read by the safe parser; a ValueError/TypeError naming ``name`` otherwise (never a
    silent reading as something else). The symbols of an expression must be the problem's
    variables (checked here for a ``reference``; an answer's are feedback)."""
    try:
        kind, val = _as_value(x, problem)
    except UnsafeExpressionError as exc:
        raise UnsafeExpressionError(f"{name}: expected text the safe parser reads, got text "
                                    f"it refuses ({exc})") from exc
    except (TypeError, ValueError) as exc:
        msg = str(exc) if str(exc).startswith("expected") else f"expected {_VALUE}, got {exc}"
        raise type(exc)(f"{name}: {msg}") from exc
    if kind == "symbolic" and problem is not None:
        names = set(problem.variables)
        extra = sorted(s.name for s in val.free_symbols if s.name not in names)
        if extra and reference:
            raise _value_checks.error(name, f"an expression in the problem's variables "
                                f"{sorted(names)}", f"one in {extra}",
                                "list every symbol in Problem(variables=...)")
    return kind, val


def _problem_arg(problem, name, required=False):
    """A Problem (or None when not ``required``)."""
    if not isinstance(problem, Problem) and (required or problem is not None):
        raise _value_checks.error(name, "a Problem" if required else "a Problem or None", problem,
                            exc=TypeError)
    return problem


def _evaluate_answer(kind, val, problem, pts):
    """``(evaluator, values at pts)`` of an answer, or the Feedback when evaluating it fails."""
    try:
        ev = _evaluator(kind, val, problem, _shape_of(kind, val))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ev, ev(pts)
    except Exception as exc:                        # noqa: BLE001 -- student code may raise anything
        return _fb("incorrect", f"evaluating the answer failed: {type(exc).__name__}: "
                   f"{str(exc)[:200]}", "type")


def _reference_values(kind, val, problem, shape, pts, name):
    """The values of a reference at ``pts`` (N, *shape); a reference that cannot be evaluated
    (a function that fails, an expression numpy cannot evaluate: an undefined function, a
    Derivative, zoo) is an error naming it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _evaluator(kind, val, problem, shape)(pts)
    except Exception as exc:                        # noqa: BLE001 -- the author's value
        raise _value_checks.error(name, "a function that returns numbers of one shape at the test "
                            "inputs" if kind == "function" else "an expression numpy can "
                            "evaluate", f"{type(exc).__name__}: {str(exc)[:160]}") from exc


def _no_inputs(name, problem):
    return _value_checks.error(name, "a Problem with inputs (a function answer needs a Problem "
                         "with inputs)", "None" if problem is None else "one without inputs")


def _default_points(problem, exprs, n, rng, fname, function=False):
    if problem is not None:
        return problem.sample_points(n, rng)
    if function:                                    # a function answer, a numeric reference
        raise _no_inputs(f"{fname}: problem", problem)
    names = sorted({s.name for e in exprs for s in e.free_symbols})
    return {v: rng.uniform(-2, 2, size=n) for v in names}


def equivalent(answer, reference, problem=None, *, n_points=24, rng=None, points=None) -> bool:
    """True when :func:`compare` accepts the answer (for ``assert`` in tests); the same
    arguments, checked and named as ``equivalent``'s.

    >>> import sympy as sp
    >>> x = sp.Symbol('x')
    >>> equivalent(sp.cos(x)**2, 1 - sp.sin(x)**2)
    True
    """
    return _compare(answer, reference, problem, n_points, rng, points, "equivalent").correct


# --------------------------------------------------------------------------
# encoding answers as JSON (what leaves the student's process), and answer keys
# --------------------------------------------------------------------------

MAX_ENTRY_TEXT = 20_000
MAX_ENTRIES = 400
MAX_ANSWER_TEXT = 60_000
"""Most characters of all entries of one encoded answer (bounds the grader's work)."""


def _num_list(a):
    a = np.asarray(a, dtype=complex).ravel()
    out = {"real": [float(x) for x in a.real]}
    if np.any(a.imag != 0):
        out["imag"] = [float(x) for x in a.imag]
    return out


_NOT_FINITE = "the answer is not finite (NaN or infinity): it cannot be right."


def encode(value, problem=None, inputs=None):
    """A JSON-safe description of an answer: ``{'type': 'none'|'numeric'|'sympy'|'text'|
    'samples'|'invalid', ...}``. Sympy entries become text (sympy's str printer), which
    :func:`decode` reads back with :func:`parse_expression`. A function is evaluated at
    ``inputs`` (a list of argument tuples) and its outputs are kept; an answer that is too
    large or not finite, or a function that fails, gives an ``'invalid'`` record. A text is
    kept as it is (read when it is compared); text inside a list or an array is read now by
    the safe parser.

    Raises ValueError/TypeError naming ``encode: value`` for what is not an answer (a dict, a
    boolean, a list holding text the safe parser refuses).

    >>> import sympy as sp
    >>> encode(sp.Matrix([[sp.Symbol('x'), 1]]))
    {'type': 'sympy', 'shape': [1, 2], 'entries': ['x', '1']}
    """
    _problem_arg(problem, "encode: problem")
    if inputs is not None:
        inputs = _checked_points(inputs, "encode: inputs", problem)
        if isinstance(inputs, dict):
            raise _value_checks.error("encode: inputs", "a list of argument tuples", "a dict",
                                exc=TypeError)
    if value is None:
        return {"type": "none"}
    if isinstance(value, str):                  # the student's text: read when it is compared
        return {"type": "text", "text": value[:MAX_TEXT + 1]}
    kind, v = _value_arg(value, problem, "encode: value") if not callable(value) or \
        isinstance(value, (sp.Basic, sp.MatrixBase, np.ndarray)) else ("function", value)
    if kind == "numeric":
        if v.size > MAX_ENTRIES * 10:
            return {"type": "invalid", "message": f"an array of {v.size} numbers is too large"}
        if not np.all(np.isfinite(v)):
            return {"type": "invalid", "message": _NOT_FINITE}
        return {"type": "numeric", "shape": list(v.shape), **_num_list(v)}
    if kind == "symbolic":
        M = v if isinstance(v, sp.MatrixBase) else None
        entries = list(M) if M is not None else [v]
        if len(entries) > MAX_ENTRIES:
            return {"type": "invalid", "message": f"a matrix of {len(entries)} entries is too "
                    "large"}
        texts = [sp.sstr(e) for e in entries]
        if any(len(t) > MAX_ENTRY_TEXT for t in texts) or sum(map(len, texts)) > MAX_ANSWER_TEXT:
            return {"type": "invalid", "message": "the answer's expressions are too long"}
        return {"type": "sympy", "shape": list(M.shape) if M is not None else [],
                "entries": texts}
    if kind == "function":
        if inputs is None:
            return {"type": "invalid", "message": "a function, but no inputs to evaluate it at"}
        try:
            vals = _evaluator("function", v, problem, None)(inputs)
        except Exception as exc:                    # noqa: BLE001 -- student code
            return {"type": "invalid", "message": f"calling the function failed: "
                    f"{type(exc).__name__}: {str(exc)[:200]}"}
        if not np.all(np.isfinite(vals)):
            return {"type": "invalid", "message": "the function returned values that are "
                    "not finite (NaN or infinity) at the test inputs: it cannot be right."}
        return {"type": "samples", "shape": list(vals.shape), **_num_list(vals)}
    return {"type": "invalid", "message": f"cannot encode {type(value).__name__}"}


def _numbers(d, shape):
    real = np.asarray(d["real"], dtype=float)
    imag = np.asarray(d.get("imag", np.zeros_like(real)), dtype=float)
    if real.shape != imag.shape or real.size != int(np.prod(shape)):
        raise _value_checks.error("decode: data", f"numbers that match the shape {list(shape)}",
                            f"{real.size} real and {imag.size} imaginary parts",
                            "they do not match the shape")
    return (real + 1j * imag).reshape(shape)


def decode(data, problem=None, inputs=None):
    """The answer back from :func:`encode`'s JSON: sympy entries are read by
    :func:`parse_expression` (never by sympify). Raises ValueError for malformed data.

    >>> decode({'type': 'sympy', 'shape': [], 'entries': ['2*x']})
    2*x
    >>> decode({'type': 'numeric'})
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: decode: data: expected an answer record with the field 'shape', got a record without it
    """
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise _value_checks.error("decode: data", "a dict with a 'type'", data)
    _problem_arg(problem, "decode: problem")
    if inputs is not None:                      # checked; kept as given (the samples' points)
        if isinstance(_checked_points(inputs, "decode: inputs", problem), dict):
            raise _value_checks.error("decode: inputs", "a list of argument tuples", "a dict",
                                exc=TypeError)
    try:
        return _decode(data, problem, inputs)
    except KeyError as exc:                     # a malformed record: a ValueError, never a KeyError
        raise _value_checks.error("decode: data", f"an answer record with the field {exc.args[0]!r}",
                            "a record without it") from exc
    except (TypeError, ValueError, IndexError, OverflowError) as exc:
        if str(exc).startswith("decode: "):       # already named
            raise
        raise _value_checks.error("decode: data", "a well-formed answer record",
                            f"{type(exc).__name__}: {str(exc)[:120]}") from exc


MAX_RECORD_ENTRIES = 10**6
"""Most numbers in one answer record :func:`decode` reads (a function's outputs at its
inputs included)."""


def _record_shape(shape):
    """The shape of an answer record: at most 6 sizes >= 0, at most MAX_RECORD_ENTRIES
    entries."""
    if not isinstance(shape, list) or len(shape) > 6 or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_RECORD_ENTRIES
            for n in shape) or math.prod(shape) > MAX_RECORD_ENTRIES:
        raise _value_checks.error("decode: data", f"a shape of at most 6 sizes and "
                            f"{MAX_RECORD_ENTRIES} entries", repr(shape)[:80])
    return tuple(shape)


def _decode(data, problem, inputs):
    t = data["type"]
    names = None if problem is None else list(problem.variables)
    if t == "none":
        return None
    if t == "text":
        if not isinstance(data["text"], str):
            raise _value_checks.error("decode: data", "a text record holding a str", data["text"],
                                exc=TypeError)
        return data["text"]
    if t == "numeric":
        shape = _record_shape(data["shape"])
        a = _numbers(data, shape)
        return a.real if np.all(a.imag == 0) else a
    if t == "sympy":
        shape = _record_shape(data["shape"])
        entries = data["entries"]
        if not isinstance(entries, list) or len(entries) > MAX_ENTRIES or \
                len(entries) != int(np.prod(shape)) or len(shape) > 2:
            raise _value_checks.error("decode: data", "sympy entries that match the shape "
                                f"{list(shape)}", _value_checks.describe(entries),
                                "they do not match the shape")
        if sum(len(str(e)) for e in entries) > MAX_ANSWER_TEXT:
            raise _value_checks.error("decode: data", f"expressions of at most {MAX_ANSWER_TEXT} "
                                "characters in all", f"longer than {MAX_ANSWER_TEXT} "
                                "characters")
        vals = [_parsed(e, names) for e in entries]
        if any(isinstance(v, sp.MatrixBase) for v in vals):
            raise _value_checks.error("decode: data", "sympy entries", "a matrix inside a matrix entry")
        if shape == ():
            return vals[0]
        return sp.Matrix(shape[0], shape[1] if len(shape) == 2 else 1, vals)
    if t == "samples":
        shape = _record_shape(data["shape"])
        if inputs is None or not shape or shape[0] != len(inputs):
            raise _value_checks.error("decode: inputs", "the inputs of the samples (one argument "
                                "tuple per sample)", "samples without their inputs"
                                if inputs is None else f"{len(inputs)} inputs for the "
                                f"{shape[0] if shape else 0} samples")
        return _Samples(inputs, _numbers(data, shape))
    if t == "invalid":
        raise _value_checks.error("decode: data", "a readable answer", "an invalid one: " +
                            str(data.get("message", "invalid answer"))[:300])
    raise _value_checks.error("decode: data", "a record of a known type (none, text, numeric, "
                        "sympy, samples, invalid)", f"unknown type {t[:80]!r}")


def _parsed(text, names):
    """An entry of a sympy record read by the safe parser (its refusal names decode: data)."""
    if not isinstance(text, str):
        raise _value_checks.error("decode: data", "sympy entries as text", text, exc=TypeError)
    try:
        return parse_expression(text, names)
    except UnsafeExpressionError as exc:
        raise UnsafeExpressionError(f"decode: data: expected entries the safe parser reads, "
                                    f"got one it refuses ({exc})") from exc


KEY_POINTS = 6
"""Points per problem in a student notebook's answer key."""
KEY_VERSION = 2
"""Format of a key entry (2: one digest of the whole answer, no per-value data)."""


class _HashKey:
    """A one-way answer key (:mod:`robodyn.answers._problems._key_hash`): where to evaluate an answer (the
    points), its shape, the grid, and ONE salted digest of the whole reference rounded on the
    grid -- nothing per entry. Problems whose answer is a constant get a key of form only
    (``digest`` None): a fixed number could be found by trying values against any key.
    """

    def __init__(self, points, shape, grid=None, tol=None, salt="", digest=None):
        self.points, self.shape = points, tuple(shape)
        self.grid, self.tol, self.salt, self.digest = grid, tol, salt, digest

    @property
    def form_only(self):
        return self.digest is None

    def matches(self, V):
        """True when the values V (N, *shape) are the reference's (raises _key_hash.Undecided
        when too many lie near the grid's boundaries)."""
        return _key_hash.matches(V, self.grid, self.tol, self.salt, self.digest)


def fingerprint(reference, problem, seed=0):
    """The answer-key entry of a reference, one-way: its shape, the points (or inputs) at
    which an answer is evaluated, the grid step and tolerance, and ONE salted PBKDF2 digest
    of its values there, all rounded on the grid (:mod:`robodyn.answers._problems._key_hash`: the tolerance
    scheme); for a constant answer its shape only (a constant could be found by trying
    values). No value of the reference, and nothing about one entry alone, is in it: the key
    can be searched only by guessing the whole answer. Returns a JSON-safe dict.

    >>> import sympy as sp
    >>> p = Problem('p1', 'x', variables={'t': (-1, 1)})
    >>> fp = fingerprint(sp.cos(sp.Symbol('t')), p)
    >>> sorted(fp), len(fp['points']['t'])
    (['grid', 'hash', 'points', 'salt', 'shape', 'tol', 'version'], 6)
    >>> fingerprint(sp.Integer(3), Problem('p2', 'y'))        # a constant: its form only
    {'points': {}, 'shape': []}
    """
    if not isinstance(problem, Problem):
        raise _value_checks.error("fingerprint: problem", "a Problem", problem, exc=TypeError)
    seed = _value_checks.size(seed, "fingerprint: seed", low=0, high=2**63 - 1)
    kind, val = _value_arg(reference, problem, "fingerprint: reference", reference=True)
    if kind == "function" and not problem.is_function:
        raise _no_inputs("fingerprint: problem", problem)
    import hashlib
    rng = np.random.default_rng(seed)
    if kind in ("symbolic", "numeric"):
        shape = _shape_of(kind, val)
        pts = problem.sample_points(KEY_POINTS if kind == "symbolic" else 1, rng)
        R = _reference_values(kind, val, problem, shape, pts, "fingerprint: reference")
    elif kind == "function":
        pts = problem.sample_points(KEY_POINTS, rng)
        R = _reference_values(kind, val, problem, None, pts, "fingerprint: reference")
        shape = R.shape[1:]
    elif kind == "samples":                     # a function's outputs at known inputs
        pts, R = val.points[:KEY_POINTS], val.values[:KEY_POINTS]
        shape = R.shape[1:]
    else:
        raise _value_checks.refusal(
            TypeError, f"fingerprint: reference: cannot fingerprint a {kind} reference")
    if not np.all(np.isfinite(R)):
        raise _value_checks.refusal(ValueError, "fingerprint: reference: not finite at the key's points")
    _resolved(R, problem, "fingerprint: reference", val if kind == "symbolic" else None)
    if isinstance(pts, dict):
        jp = {k: [float(f"{x:.15g}") for x in v] for k, v in pts.items()}
        pts = {k: np.asarray(v, dtype=float) for k, v in jp.items()}
        if kind == "symbolic":                   # the values at the points as stored
            R = _reference_values(kind, val, problem, shape, pts, "fingerprint: reference")
    else:
        jp = [[np.asarray(a).tolist() for a in args] for args in pts]
    constant = R.shape[0] < 2 or bool(np.all(np.abs(R - R[:1]) <= 1e-12 * (1 + np.abs(R))))
    if constant:
        return {"points": jp, "shape": list(shape)}
    salt = hashlib.sha256(json.dumps([problem.key if problem else "", jp, list(shape)],
                                     sort_keys=True).encode()).hexdigest()[:32]
    grid, tol = _key_hash.grid_step(R, problem.rtol if problem else 1e-6,
                                    problem.atol if problem else 1e-9)
    return {"version": KEY_VERSION, "points": jp, "shape": list(shape), "grid": grid,
            "tol": tol, "salt": salt, "hash": _key_hash.digest(R, grid, salt)}


def _key_from_dict(d, problem):
    if not isinstance(d, dict) or not isinstance(d.get("shape"), list) or "points" not in d:
        raise _value_checks.refusal(
            ValueError, "load_key: expected a key entry with 'points' and 'shape'")
    shape = tuple(int(n) for n in d["shape"])
    if isinstance(d["points"], dict):
        pts = {k: np.asarray(v, dtype=float) for k, v in d["points"].items()}
        sizes = {v.shape for v in pts.values()}
        if set(pts) != set(problem.variables) or len(sizes) > 1 or (
                pts and (not all(len(s) == 1 for s in sizes) or 0 in sizes.pop())):
            raise _value_checks.refusal(
                ValueError, f"points: expected one non-empty sample of each variable "
                            f"{sorted(problem.variables)}, got {sorted(pts)}")
    else:
        pts = [tuple(np.asarray(a, dtype=float) for a in args) for args in d["points"]]
        if problem.is_function and not pts:
            raise _value_checks.refusal(
                ValueError, "points: expected the inputs of the key, got none (an empty key "
                            "would mark every answer correct)")
    if any(not np.isfinite(a).all() for a in (pts.values() if isinstance(pts, dict)
                                               else [x for t in pts for x in t])):
        raise _value_checks.refusal(ValueError, "points: expected finite numbers")
    if d.get("hash") is None:
        return _HashKey(pts, shape)
    if d.get("version") != KEY_VERSION:
        raise _value_checks.refusal(
            ValueError, f"load_key: a key of format {d.get('version')!r}, expected "
                        f"{KEY_VERSION}: regenerate the notebook (make assignments)")
    grid, tol = float(d["grid"]), float(d["tol"])
    if not (math.isfinite(grid) and math.isfinite(tol) and 0 < 2 * tol < grid):
        raise _value_checks.refusal(ValueError, "load_key: the key's grid and tolerance are not usable")
    return _HashKey(pts, shape, grid, tol, str(d["salt"]), str(d["hash"]))


def _key_mistakes(S, ev, pts, shape, problem):
    """The whole-answer transforms the self-check tries: ``[(thunk -> values that equal the
    reference when the mistake was made, mistake, text)]``; each undoes one common mistake
    of the WHOLE answer (the grader's list, plus the order of rotations)."""
    out = [(lambda: -S, "sign", "it equals the answer with the sign flipped: check a sign "
            "(an orientation, a cross product, a minus in a derivative)."),
           (lambda: S / 2, "half", "it is twice the answer: a factor ½ is missing (e.g. in "
            "T = ½ q̇ᵀM q̇ or in a Christoffel symbol)."),
           (lambda: S * 2, "double", "it is half the answer: an extra factor ½.")]
    square = len(shape) == 2 and shape[0] == shape[1]
    if square:
        out.append((lambda: np.swapaxes(S, 1, 2), "transpose", "it is the transpose of the "
                    "answer (a transposed Jacobian or rotation? rows are output components, "
                    "columns are joints)."))
    if _swap_halves(S) is not None:
        out.append((lambda: _swap_halves(S), "twist-order", "it has the angular and linear "
                    "parts in the wrong order: the book writes twists as (ω, v) and wrenches "
                    "as (m, f)."))
    out += [(lambda: S * np.pi / 180, "degrees", "it is the answer in degrees where radians "
             "are expected (× 57.3)."),
            (lambda: S * 180 / np.pi, "degrees", "it is the answer in radians where degrees "
             "are expected.")]
    if problem is not None and (problem.angles or problem.is_function) and pts:
        out.append((lambda: _to_grid(ev(_scaled(pts, problem, 180 / np.pi)), shape),
                    "degrees", "it treats the angles as degrees: sympy and numpy "
                    "trigonometric functions take radians."))
    if square and problem is not None and len(problem.angles) >= 2 and isinstance(pts, dict):
        # A(θ)B(α) in the reverse order B(α)A(θ) = (A(-θ)B(-α))ᵀ: the answer at the negated
        # angles, transposed, is the reference when only the order of the factors is wrong
        out.append((lambda: np.swapaxes(_to_grid(ev(_negated(pts, problem)), shape), 1, 2),
                    "rotation-order", _key_hash.ROTATION_ORDER))
    return out


def _key_compare(answer, key, problem):
    """Feedback on an answer against a one-way key: the shape, finiteness, and whether its
    values at the key's points are the reference's -- as they are, or after one of the
    common mistakes of the whole answer is undone (then that mistake is named)."""
    read = _read_answer(answer, problem)
    if isinstance(read, Feedback):
        return read
    kind, val = read
    pts = key.points if (isinstance(key.points, list) or key.points) else {}
    evaluated = _evaluate_answer(kind, val, problem, pts)
    if isinstance(evaluated, Feedback):
        return evaluated
    ev, S = evaluated
    shape = key.shape
    grid = _to_grid(S, shape)
    if grid is None:
        if len(shape) == 2 and S.shape[1:] == shape[::-1]:
            T = np.swapaxes(S, 1, 2)
            if key.form_only or _safe_match(key, lambda: T):
                return _fb("incorrect", f"it is the transpose of the answer "
                           f"({_shape_str(S.shape[1:])} instead of {_shape_str(shape)}).",
                           "transpose")
        return _fb("incorrect", f"wrong shape: expected {_shape_str(shape)}, got "
                   f"{_shape_str(S.shape[1:])}.", "shape")
    if not np.all(np.isfinite(grid)):
        return _fb("incorrect", "the answer is not finite (NaN or infinity).", "type")
    if np.any(np.abs(grid.imag) > (problem.atol if problem else 1e-9) + 1e-9 * np.abs(grid)):
        return _fb("incorrect", "the answer is not real (it has imaginary parts): the "
                   "answers of robot dynamics are real quantities.", "type")
    if key.form_only:
        return _fb("form", _key_hash.FORM_ONLY)
    try:
        if key.matches(grid):
            n = _npoints(pts)
            return _fb("correct", f"correct (it matches the answer key at {n} test points)."
                       if n > 1 else "correct.")
    except _key_hash.Undecided as exc:
        return _fb("form", f"its form is right, but the self-check cannot decide its value: "
                   f"{exc}; the grader will check it.")
    for values, mistake, text in _key_mistakes(grid, ev, pts, shape, problem):
        if _safe_match(key, values):
            return _fb("incorrect", text, mistake)
    return _fb("incorrect", _key_hash.NO_MATCH)


def _safe_match(key, values):
    """Does the transformed answer ``values()`` match the key? (No, when computing it fails or
    the key cannot decide: a guess at a mistake, nothing more.)"""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            V = values()
        return V is not None and key.matches(V)
    except Exception:                               # noqa: BLE001 -- student code may raise
        return False


# --------------------------------------------------------------------------
# a problem set
# --------------------------------------------------------------------------

class ProblemSet:
    """The problems of one set, and (in a student notebook) its answer key.

    >>> ps = ProblemSet("demo", [Problem("p1", "x", "a number")])
    >>> print(ps.check("p1", None))
    … p1 (a number): not answered yet.
    """

    def __init__(self, name, problems):
        if not isinstance(name, str):
            raise _value_checks.error("ProblemSet: name", "a str", name, exc=TypeError)
        self.name = name
        self.problems = {}
        if not isinstance(problems, (list, tuple)):
            raise _value_checks.error("ProblemSet: problems", "Problem objects (a list)", problems,
                                exc=TypeError)
        for p in problems:
            if not isinstance(p, Problem):
                raise _value_checks.error("ProblemSet: problems", "Problem objects (a list)",
                                    f"a list holding {_value_checks.describe(p)}", exc=TypeError)
            if p.key in self.problems:
                raise _value_checks.error("ProblemSet: problems", "distinct problem keys",
                                    f"the duplicate problem key {p.key!r}")
            self.problems[p.key] = p
        self._key = None

    def __iter__(self):
        return iter(self.problems.values())

    def __len__(self):
        return len(self.problems)

    def __getitem__(self, key):
        if not isinstance(key, str):
            raise _value_checks.error(f"ProblemSet {self.name!r}: key", "a problem key (str)", key,
                                exc=TypeError)
        if key not in self.problems:
            raise UnknownProblemError(f"ProblemSet {self.name!r}: key: no problem {key!r}; the problems are "
                           f"{list(self.problems)}")
        return self.problems[key]

    def load_key(self, text):
        """Load the answer key (JSON written by ``python -m robodyn.grading generate``);
        None means no key (the instructor's copy before generation)."""
        if text is None:
            self._key = None
            return
        name = "ProblemSet.load_key: text"
        if not isinstance(text, (str, bytes)):
            raise _value_checks.error(name, "JSON text or None", text, exc=TypeError)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise _value_checks.error(name, "JSON text", f"unreadable JSON ({str(exc)[:80]})") \
                from exc
        if not isinstance(data, dict):
            raise _value_checks.error(name, "a JSON object {problem key: entry}", data)
        unknown = sorted(str(k) for k in data if k not in self.problems)
        if unknown:
            raise _value_checks.error(name, f"entries of the problems {sorted(self.problems)}",
                                f"unknown keys {unknown[:5]}")
        key = {}
        for k, v in data.items():
            try:
                key[k] = _key_from_dict(v, self.problems[k])
            except KeyError as exc:
                raise _value_checks.error(name, f"an answer-key entry for {k!r} with the field "
                                    f"{exc.args[0]!r}", "an entry without it") from exc
            except (TypeError, ValueError, IndexError) as exc:
                raise _value_checks.error(name, f"a well-formed answer-key entry for {k!r}",
                                    str(exc)[:160]) from exc
        self._key = key

    def in_key(self, key):
        """True when the loaded answer key holds problem ``key`` (False without a key).

        >>> ps = ProblemSet("demo", [Problem("p1", "x")])
        >>> ps.in_key("p1")
        False
        >>> ps.load_key('{"p1": {"points": {}, "shape": []}}')
        >>> ps.in_key("p1")
        True
        """
        self[key]                                   # KeyError for an unknown problem
        return self._key is not None and key in self._key

    def check(self, key, answer):
        """Feedback on one answer against the answer key; never raises for a wrong answer
        (text it cannot read, too: the student's text gets feedback). A value that is not an
        answer -- a dict, a boolean, a list holding text the safe parser refuses -- raises a
        ValueError/TypeError naming ``ProblemSet.check: answer``."""
        p = self[key]
        read = None if answer is None else _read_answer(
            answer, p, None if isinstance(answer, str) else "ProblemSet.check: answer")
        if answer is None:
            fb = _fb("unanswered", "not answered yet.")
        elif isinstance(read, Feedback):          # what cannot be an answer, key or no key
            fb = read
        elif self._key is None or key not in self._key:
            fb = _fb("unanswered", "no answer key in this copy of the notebook: the hidden "
                     "tests check the answer.", "no-key")
        else:
            try:
                fb = _key_compare(answer, self._key[key], p)
            except Exception as exc:                 # noqa: BLE001 -- feedback, not a crash
                fb = _fb("error", f"could not check the answer: {type(exc).__name__}: {exc}")
        return Feedback(fb.status, fb.message, fb.mistake, key=f"{key} ({p.title})"
                        if p.title else key, fraction=fb.fraction)

    def test(self, key, answer):
        """The check cell of a problem: print :meth:`check`'s verdict, and raise
        AssertionError when the answer is wrong or not answered yet -- so that nbgrader's
        *Validate* reports every answer the self-check knows to be wrong. An answer whose value
        only the grader can check (verdict ``form``) passes; so does every answer in a copy
        without a key (the instructor's, before generation). What is not an answer of the
        right form -- text the safe parser refuses, a dict, symbols that are not the problem's
        variables, NaN, complex values, the wrong shape -- raises a ValueError/TypeError
        naming ``ProblemSet.test: answer`` instead of a verdict.

        >>> ps = ProblemSet("demo", [Problem("p1", "x")])
        >>> ps.load_key('{"p1": {"points": {}, "shape": []}}')
        >>> ps.test("p1", 2.5)                      # doctest: +ELLIPSIS
        ○ p1: its form is right (numbers of the right shape), but its value can only be ...
        >>> ps.test("p1", None)
        Traceback (most recent call last):
        ...
        AssertionError: the self-check says
        … p1: not answered yet.
        >>> ps.test("p1", [1.0, 2.0])                # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        robodyn.errors.ArgumentError: ProblemSet.test: answer: expected an answer of the right form ...
        """
        if not isinstance(key, str):
            raise _value_checks.refusal(
                TypeError, f"ProblemSet.test: key: expected a problem key (str), got "
                           f"{type(key).__name__}")
        if key not in self.problems:
            raise _value_checks.refusal(
                ValueError, f"ProblemSet.test: key: expected one of {list(self.problems)}, "
                            f"got {key[:40]!r}")
        if answer is not None:              # what is not an answer is an error, not a verdict
            read = _read_answer(answer, self.problems[key], "ProblemSet.test: answer")
            if isinstance(read, Feedback):
                raise _value_checks.refusal(
                    ValueError, f"ProblemSet.test: answer: expected an answer in the "
                                f"problem's variables, got one that is not: {read.message}")
        fb = self.check(key, answer)
        if fb.mistake in ("type", "shape"):
            raise _value_checks.refusal(
                ValueError, f"ProblemSet.test: answer: expected an answer of the right form "
                            f"(finite real values of the answer's shape), got one the "
                            f"self-check refuses: {fb.message}")
        if fb.status not in ("correct", "form") and fb.mistake != "no-key":
            # the student's notebook shows the verdict, not the library's frames (IPython
            # leaves out frames marked so; nbgrader's Validate still sees the failure)
            __tracebackhide__ = True                # noqa: F841
            import textwrap                         # short lines: Validate cuts long ones
            raise AssertionError("the self-check says\n" + textwrap.fill(str(fb), 76))
        print(fb)

    def spec(self):
        """The problems as JSON-safe dicts (what the grader reads)."""
        return [p.to_dict() for p in self]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"raw": "all"}})  # answers: text and NaN are judged, not refused
