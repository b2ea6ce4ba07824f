r"""The one-way digest behind a problem set's answer key: a whole answer, rounded, hashed.

An answer key must let a student check an answer without letting anyone read the answer, or
find it piece by piece. So the key holds, for one problem, a single salted PBKDF2 digest of
the **whole** answer -- its values at the key's points, every value rounded on one grid of
step ``g`` -- and nothing that depends on one entry alone. A wrong guess of any part of the
answer gives the same "no" as a wrong guess of all of it: the key can be searched only as fast
as the whole answer can be guessed.

Rounding and its boundaries (the tolerance scheme)
    A value ``v`` is rounded to the cell ``k = rint(v/g)``. ``g = KEY_GRID * tol``, where
    ``tol = atol + rtol * 2**ceil(log2 max|R|)`` is (at least) the grader's tolerance at the
    reference's scale (only the octave of the scale is used, and it is the one thing of the
    answer the key's ``grid`` tells). An answer value within ``tol`` of a cell boundary is
    tried in both cells it may belong to; with ``A`` such values, ``2**A`` digests are tried.
    Hence:

    * any answer within ``tol`` of the reference at every value is accepted, whatever the
      rounding of its floating-point error (the reference's cell is always among those tried);
    * any answer off by more than ``g + tol`` at some value is refused (up to SHA-256
      collisions); in between (``tol`` to ``g + tol``, with ``KEY_GRID = 1024``: up to about
      1e-3 of the answer's size at the default ``rtol = 1e-6``) the key may accept it and
      only the grader decides;
    * a value lies within ``tol`` of a boundary with probability ``2/KEY_GRID``, so ``A`` is
      usually 0 or 1; more than ``MAX_AMBIGUOUS`` such values and the key says it cannot
      decide (the grader will).

>>> import numpy as np
>>> R = np.array([[0.25, -1.5], [3.0, 0.0]])
>>> d = digest(R, 1e-3, "00" * 16)
>>> matches(R + 1e-12, 1e-3, 1e-6, "00" * 16, d), matches(R + 0.01, 1e-3, 1e-6, "00" * 16, d)
(True, False)
"""
from __future__ import annotations

import hashlib
import hmac
import itertools
import math

import numpy as np

KEY_GRID = 1024.0
"""The key's grid step in units of the problem's tolerance."""
KEY_ITERATIONS = 2000
"""PBKDF2 iterations per digest (each check costs that much; so does each guess)."""
MAX_AMBIGUOUS = 8
"""Most values within the tolerance of a cell boundary that a check tries both ways
(2**8 = 256 digests, about 0.2 s)."""
_MAX_CELL = 2.0 ** 52
"""Largest cell index (beyond it a float has no integer resolution: such a value is never a
match)."""


FORM_ONLY = ("its form is right (numbers of the right shape), but its value can only be "
             "checked when the notebook is graded: the answer is fixed numbers (no variables "
             "to evaluate it at), and any key of fixed numbers could be searched by trying "
             "values, so the key holds its shape only.")
"""What the self-check says of an answer whose key holds its shape only."""
NO_MATCH = ("it does not match the answer key at its test points, and it is none of the "
            "common mistakes the self-check knows. The self-check compares the whole answer at "
            "once, so it cannot say which entries are wrong (by design: the key cannot be "
            "searched entry by entry); the grader's feedback names them.")
"""What the self-check says of a wrong answer (never which entries)."""
ROTATION_ORDER = ("it looks like the rotations are multiplied in the reverse order: a turn "
                  "about a body-fixed (new) axis multiplies on the right, a turn about a "
                  "space-fixed axis on the left.")


class Undecided(Exception):
    """Too many values of an answer lie near the key's cell boundaries to try them all."""


def grid_step(R, rtol, atol):
    """``(g, tol)``: the key's grid step and the tolerance, from the reference values R (only
    the octave of their largest magnitude is used).

    >>> grid_step(np.array([3.0]), 1e-6, 0.0)
    (0.004096, 4e-06)
    """
    R = np.asarray(R)
    scale = float(np.max(np.abs(R))) if R.size else 1.0
    scale = 2.0 ** math.ceil(math.log2(scale)) if scale > 0 else 1.0
    tol = float(atol) + float(rtol) * scale
    if not tol > 0:
        tol = 1e-12 * scale
    return KEY_GRID * tol, tol


def _flat(V):
    V = np.asarray(V)
    if np.iscomplexobj(V):
        return np.concatenate([V.real.ravel(), V.imag.ravel()]).astype(float)
    return np.concatenate([V.ravel(), np.zeros(V.size)]).astype(float)


def _hash(cells, salt):
    text = ",".join(str(int(k)) for k in cells)
    return hashlib.pbkdf2_hmac("sha256", text.encode(), bytes.fromhex(salt),
                               KEY_ITERATIONS).hex()


def digest(R, grid, salt):
    """The digest of values R (any shape; real and imaginary parts) rounded on the grid."""
    x = _flat(R) / grid
    if not np.all(np.isfinite(x)) or np.any(np.abs(x) > _MAX_CELL):
        raise ValueError("digest: the values are not finite or too large for the grid")
    return _hash(np.rint(x), salt)


def matches(V, grid, tol, salt, target):
    """True when values V round, on the grid, to the cells whose digest is ``target`` --
    each value within ``tol`` of a cell boundary tried in both cells. Raises Undecided when
    more than MAX_AMBIGUOUS values are that near a boundary."""
    x = _flat(V)
    if not np.all(np.isfinite(x)) or np.any(np.abs(x / grid) > _MAX_CELL):
        return False
    lo, hi = np.rint((x - tol) / grid), np.rint((x + tol) / grid)
    near = np.flatnonzero(lo != hi)
    if near.size > MAX_AMBIGUOUS:
        raise Undecided(f"{near.size} values lie within the tolerance of the key's rounding "
                        f"boundaries")
    for choice in itertools.product((0, 1), repeat=int(near.size)):
        cells = lo.copy()
        cells[near] = np.where(np.array(choice, dtype=bool), hi[near], lo[near])
        if hmac.compare_digest(_hash(cells, salt), target):
            return True
    return False
