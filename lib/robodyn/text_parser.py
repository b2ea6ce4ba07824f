"""Text read as a sympy expression without ever running it: the restricted parser behind
:mod:`robodyn.answers` (students' answers given as text) and the grader.

:func:`parse_expression` reads text with Python's :mod:`ast` parser and turns the syntax tree
into sympy through a whitelist (numbers, names of variables, ``+ - * / **``, a few functions
such as ``sin`` and ``sqrt``, lists for matrices). Attribute access, subscripts,
``__import__`` and every name that starts with an underscore are refused, and sizes are
bounded (:data:`MAX_TEXT`, :data:`MAX_NODES`, :data:`MAX_POWER`, :data:`MAX_DEPTH`).
"""
from __future__ import annotations

import ast
import math
import re

import sympy as sp

from . import _value_checks
from .errors import RobodynError

__all__ = ["parse_expression", "UnsafeExpressionError", "MAX_TEXT", "MAX_NODES", "MAX_POWER",
           "MAX_DEPTH"]


MAX_TEXT = 20_000
"""Longest text :func:`parse_expression` reads (characters)."""
MAX_NODES = 4_000
"""Most syntax-tree nodes in one text."""
MAX_POWER = 12
"""Largest ``|exponent|`` of a power; nested powers may multiply to at most ``MAX_POWER``."""
MAX_DEPTH = 60
"""Deepest nesting of a text's syntax tree (deeper trees are refused before any work)."""
_FUNCTIONS = {
    "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "cot": sp.cot, "sec": sp.sec, "csc": sp.csc,
    "asin": sp.asin, "acos": sp.acos, "atan": sp.atan, "atan2": sp.atan2,
    "sinh": sp.sinh, "cosh": sp.cosh, "tanh": sp.tanh, "exp": sp.exp, "log": sp.log,
    "sqrt": sp.sqrt, "Abs": sp.Abs, "abs": sp.Abs, "sign": sp.sign,
    "Rational": sp.Rational, "Matrix": None,
}
_ARITY = {"atan2": (2,), "Rational": (2,), "log": (1, 2), "Matrix": (1,)}
_CONSTANTS = {"pi": sp.pi, "E": sp.E, "I": sp.I}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
           ast.Pow: None}


class UnsafeExpressionError(RobodynError, ValueError):
    """A text answer that :func:`parse_expression` refuses (unsafe or unsupported syntax)."""


def _refuse(msg):
    raise UnsafeExpressionError(f"parse_expression: {msg}")


def parse_expression(text, names=None):
    """Read a text answer as a sympy expression (or a ``sympy.Matrix`` for ``[[...], ...]``),
    without ``eval``, ``exec`` or ``sympify``.

    The text is parsed by :func:`ast.parse` in ``eval`` mode and the tree is rebuilt node by node
    from a whitelist: numbers, variable names, ``+ - * / **`` (``^`` means power too), unary
    ``+``/``-``, calls of ``sin cos tan cot sec csc asin acos atan atan2 sinh cosh tanh exp log
    sqrt Abs abs sign Rational Matrix``, the constants ``pi E I``, and (nested) lists or tuples
    for matrices. Everything else is refused: attribute access (``x.y``), subscripts, keywords,
    lambdas, comprehensions, strings, and every name that starts with an underscore
    (``__import__``, ``__class__``).

    Parameters
    ----------
    text : str, at most ``MAX_TEXT`` characters
    names : list, tuple or set of str, optional
        The variable names allowed (e.g. ``('q1', 'q2', 'l1')``); others are refused. Default:
        any name. Variables become real sympy Symbols.

    Returns
    -------
    sympy.Expr, or sympy.Matrix for a (nested) list

    Raises
    ------
    TypeError if ``text`` is not a str; UnsafeExpressionError (a ValueError) for refused or
    invalid syntax, unknown names, too long or too large input.

    Examples
    --------
    >>> parse_expression("l1*cos(q1) + l2*cos(q1 + q2)")
    l1*cos(q1) + l2*cos(q1 + q2)
    >>> parse_expression("[[cos(t), -sin(t)], [sin(t), cos(t)]]").shape
    (2, 2)
    >>> parse_expression("__import__('os')")
    Traceback (most recent call last):
    ...
    robodyn.text_parser.UnsafeExpressionError: parse_expression: the name '__import__' is refused (names may not start with an underscore)
    """
    if not isinstance(text, str):
        raise _value_checks.refusal(
            TypeError, f"parse_expression: text: expected a str, got {type(text).__name__}")
    if len(text) > MAX_TEXT:
        _refuse(f"the text has {len(text)} characters, more than the {MAX_TEXT} allowed")
    allowed = None if names is None else _names(names)
    src = text.replace("^", "**").strip()
    if not src:
        _refuse("the text is empty")
    try:
        tree = ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        _refuse(f"not a valid expression ({type(exc).__name__}: {getattr(exc, 'msg', exc)})")
    count = sum(1 for _ in ast.walk(tree))
    if count > MAX_NODES:
        _refuse(f"the expression has {count} syntax nodes, more than the {MAX_NODES} allowed")
    depth = _depth(tree.body)
    if depth > MAX_DEPTH:
        _refuse(f"the expression is nested {depth} levels deep, more than the {MAX_DEPTH} "
                f"allowed")
    try:
        value = _Builder(allowed).build(tree.body, 1)
    except RecursionError:                       # a safety net: _depth bounds the recursion
        _refuse("the expression is nested too deeply")
    if any(v.has(sp.zoo, sp.nan, sp.oo, -sp.oo) for v in
           (value if isinstance(value, sp.MatrixBase) else [value])):
        _refuse("the expression is not finite (a division by zero, e.g. 1/0 or 0**-1)")
    return value


def _names(names):
    """The allowed variable names: a list, tuple or set of plain names (never one str, whose
    letters would become names)."""
    if isinstance(names, dict):
        names = list(names)
    if not isinstance(names, (list, tuple, set, frozenset)) or len(names) > MAX_NODES:
        raise _value_checks.refusal(
            TypeError, f"parse_expression: names: expected variable names (a list of str), "
                       f"got {type(names).__name__}")
    bad = [n for n in names if not (isinstance(n, str) and _NAME.match(n) and len(n) <= 40)]
    if bad:
        raise _value_checks.refusal(
            ValueError, f"parse_expression: names: expected plain variable names (letters, "
                        f"digits, _), got {str(bad[0])[:60]!r}")
    return set(names)


def _depth(node):
    """The depth of a syntax tree, without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        if d <= MAX_DEPTH:
            stack.extend((c, d + 1) for c in ast.iter_child_nodes(n))
    return deepest


class _Builder:
    def __init__(self, allowed):
        self.allowed = allowed
        self.symbols = {}

    def build(self, node, power):
        kind = type(node).__name__
        if isinstance(node, ast.Constant):
            return self.constant(node.value)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.build(node.operand, power)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            if isinstance(node.op, ast.Pow):
                return self.power(node, power)
            a, b = self.build(node.left, power), self.build(node.right, power)
            if isinstance(node.op, ast.Div) and b == 0:
                _refuse("division by zero")
            return _BINOPS[type(node.op)](a, b)
        if isinstance(node, ast.Call):
            return self.call(node, power)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self.matrix(node, power)
        if isinstance(node, ast.Attribute):
            _refuse(f"attribute access ('.{node.attr}') is refused")
        if isinstance(node, ast.Subscript):
            _refuse("subscripts ('x[...]') are refused")
        _refuse(f"{kind} syntax is refused")

    def constant(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
            _refuse(f"only numbers may appear as constants, got {type(value).__name__}")
        if isinstance(value, complex):
            _refuse("write complex numbers with I (e.g. 2*I)")
        if not math.isfinite(value) or abs(value) > 1e15:
            _refuse(f"the number {value!r} is too large")
        if isinstance(value, int):
            return sp.Integer(value)
        return sp.Rational(repr(value)) if len(repr(value)) <= 20 else sp.Float(value)

    def name(self, ident):
        if ident.startswith("_"):
            _refuse(f"the name {ident!r} is refused (names may not start with an underscore)")
        if ident in _CONSTANTS and not (self.allowed is not None and ident in self.allowed):
            return _CONSTANTS[ident]          # a variable named E, I or pi stays a variable
        if ident in _FUNCTIONS:
            _refuse(f"{ident} is a function: call it, e.g. {ident}(x)")
        if not _NAME.match(ident) or len(ident) > 40:
            _refuse(f"the name {ident!r} is not a plain variable name")
        if self.allowed is not None and ident not in self.allowed:
            _refuse(f"unknown name {ident!r}; expected one of {sorted(self.allowed)}")
        if ident not in self.symbols:
            self.symbols[ident] = sp.Symbol(ident, real=True)
        return self.symbols[ident]

    def power(self, node, power):
        exponent = self.build(node.right, power)
        if not exponent.is_number or not exponent.is_real:
            _refuse("exponents must be numbers")
        if abs(float(exponent)) > MAX_POWER:
            _refuse(f"the exponent {exponent} is larger than {MAX_POWER}")
        power *= max(1, abs(int(math.ceil(abs(float(exponent))))))
        if power > MAX_POWER:
            _refuse(f"nested powers are too large (their exponents multiply to more than "
                    f"{MAX_POWER})")
        base = self.build(node.left, power)
        if isinstance(base, sp.MatrixBase):
            _refuse("powers of matrices are refused")
        if base == 0 and exponent.is_negative:
            _refuse("division by zero (0 to a negative power)")
        return base**exponent

    def call(self, node, power):
        if not isinstance(node.func, ast.Name):
            if isinstance(node.func, ast.Attribute):
                _refuse(f"attribute access ('.{node.func.attr}') is refused")
            _refuse("only calls of named functions are allowed")
        fname = node.func.id
        if fname.startswith("_"):
            _refuse(f"the name {fname!r} is refused (names may not start with an underscore)")
        if fname not in _FUNCTIONS:
            _refuse(f"unknown function {fname!r}; allowed: {', '.join(sorted(_FUNCTIONS))}")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            _refuse(f"{fname}(): keyword and starred arguments are refused")
        nargs = _ARITY.get(fname, (1,))
        if len(node.args) not in nargs:
            _refuse(f"{fname}() takes {' or '.join(map(str, nargs))} argument(s), "
                    f"got {len(node.args)}")
        args = [self.build(a, power) for a in node.args]
        if fname == "Matrix":
            if not isinstance(args[0], sp.MatrixBase):
                _refuse("Matrix() takes a list of rows")
            return args[0]
        if any(isinstance(a, sp.MatrixBase) for a in args):
            _refuse(f"{fname}() of a matrix is refused")
        if fname == "Rational" and not all(a.is_Integer for a in args):
            _refuse("Rational() takes two integers")
        if fname == "Rational" and args[1] == 0:
            _refuse("division by zero (Rational(p, 0))")
        if fname == "log" and len(args) == 2 and args[1].is_number and (
                args[1].is_positive is not True or args[1] == 1):
            _refuse(f"log(x, b) needs a base b > 0 and b != 1, got b = {args[1]}")
        if fname in ("log", "sqrt") and args[0].is_number and args[0].is_negative:
            _refuse(f"{fname}() of the negative number {args[0]} is not real")
        if fname == "log" and args[0] == 0:
            _refuse("log(0) is not a number")
        return _FUNCTIONS[fname](*args)

    def matrix(self, node, power):
        items = [self.build(e, power) for e in node.elts]
        if not items:
            _refuse("empty lists are refused")
        if all(isinstance(i, sp.MatrixBase) for i in items):       # rows
            rows = [list(i) for i in items]
            if len({len(r) for r in rows}) != 1:
                _refuse("the rows of the matrix have different lengths")
            return sp.Matrix(rows)
        if any(isinstance(i, sp.MatrixBase) for i in items):
            _refuse("a matrix mixes rows and numbers")
        return sp.Matrix([[i] for i in items]).T                   # one row

from ._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}})  # the safe parser reads text by design
