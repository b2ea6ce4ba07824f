r"""robodyn's pure-sympy part: rigid motions and Lagrange's operators as sympy formulas.

This module imports sympy and nothing else of robodyn's world (no numpy, no scipy), so it also
runs in the book's pages, where the chapters' sympy cells run in the browser ("Run here",
issue 40; the page's ``robodyn`` is this module alone). In the full library it is the symbolic
pure-sympy edition of the textbook operators: :mod:`robodyn.lagrange` derives Christoffel
symbols and Coriolis matrices with this module's functions, and the chapters' results of the
rigid-motion operators are the same here as in :mod:`robodyn.rigid_motion` (one code path there
for numbers and symbols; ``tests/test_symbolic.py`` compares the two on the book's cells).

* rotations and rigid motions: :func:`hat`, :func:`vee`, :func:`rotation`, :func:`exp_so3`,
  :func:`homogeneous`, :func:`inverse_homogeneous`, :func:`adjoint`, :func:`ad`,
  :func:`revolute_screw`, :func:`exp_se3`
* Lagrange: :func:`christoffel_symbols` (5.13), (5.16), :func:`coriolis_matrix` (5.14)

Arguments are sympy matrices or lists of sympy expressions or numbers; a wrong kind or shape
is refused with ``function: argument: expected ..., got ...``.
"""
from __future__ import annotations

import sympy as sp

from .errors import ArgumentError, ArgumentTypeError

__all__ = ["hat", "vee", "rotation", "exp_so3", "homogeneous", "inverse_homogeneous",
           "adjoint", "ad", "revolute_screw", "exp_se3", "christoffel_symbols",
           "coriolis_matrix"]


# --------------------------------------------------------------------------
# argument checks (sympy only)
# --------------------------------------------------------------------------

def _describe(x):
    shape = getattr(x, "shape", None)
    return f"{type(x).__name__} of shape {shape}" if shape is not None else repr(x)[:60]


def _expr(x, where):
    """One finite sympy expression (numbers welcome; text, NaN and infinities refused)."""
    if isinstance(x, (str, bytes)):
        raise ArgumentTypeError(f"{where}: expected a sympy expression or a number, got text "
                        f"{x[:40]!r}; hint: make symbols with sympy.symbols('q1 q2')")
    try:
        e = sp.sympify(x, strict=True)
    except (sp.SympifyError, TypeError) as exc:
        raise ArgumentTypeError(f"{where}: expected a sympy expression or a number, got "
                        f"{_describe(x)}") from exc
    if not isinstance(e, sp.Expr) or e.has(sp.nan, sp.oo, -sp.oo, sp.zoo):
        raise ArgumentError(f"{where}: expected a finite expression, got {e}")
    return e


def _no_text(x, where, depth=0):
    """Refuse text anywhere in nested lists: sympy would parse it as code."""
    if isinstance(x, (str, bytes)):
        raise ArgumentTypeError(f"{where}: expected sympy expressions or numbers, got the text "
                        f"{x[:40]!r}; hint: make symbols with sympy.symbols('q1 q2')")
    if depth < 3 and isinstance(x, (list, tuple)):
        for e in x:
            _no_text(e, where, depth + 1)


def _matrix(x, shape, where):
    """A sympy Matrix of the given shape, from a Matrix or (nested) lists; a vector may come
    as a row, a column or a flat list."""
    if isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
        raise ArgumentTypeError(f"{where}: expected a {shape[0]}x{shape[1]} sympy Matrix or list, got "
                        f"{_describe(x)}")
    _no_text(x, where)
    try:
        M = sp.Matrix(x)
    except (TypeError, ValueError, sp.SympifyError, NotImplementedError) as err:
        raise ArgumentTypeError(f"{where}: expected a {shape[0]}x{shape[1]} sympy Matrix or list, got "
                        f"{_describe(x)} ({err})") from err
    if shape[1] == 1 and 1 in M.shape:
        M = M.reshape(M.rows * M.cols, 1)
    if M.shape != tuple(shape):
        raise ArgumentError(f"{where}: expected shape {shape[0]}x{shape[1]}, got "
                         f"{M.shape[0]}x{M.shape[1]}")
    return M.applyfunc(lambda e: _expr(e, where))


def _zero(e):
    """True when ``e`` simplifies to 0, False when it simplifies to a nonzero number, else None
    (undecided: symbols whose values decide it)."""
    e = sp.simplify(e)
    if e == 0:
        return True
    return False if e.is_number else None


def _rotation(R, where):
    """A proper rotation matrix, decided in pure sympy (``robodyn.kinds.Rotation``'s meaning for
    the book's pages, which have no numpy): refused when R^T R - I or det R - 1 simplifies to a
    nonzero number (a scaling, a shear, a reflection)."""
    R = _matrix(R, (3, 3), where)
    gram = [_zero(e) for e in (R.T * R - sp.eye(3))]
    det = _zero(R.det() - 1)
    if False in gram or det is False:
        raise ArgumentError(f"{where}: expected a rotation matrix (R^T R = I, det R = +1), got "
                            + ("det R = " + str(sp.simplify(R.det())) if det is False
                               else "R^T R != I") + " (a reflection or a scaling is no rotation)")
    return R


def _pose(H, where):
    """A homogeneous transform [R p; 0 1] with R a proper rotation (pure sympy)."""
    H = _matrix(H, (4, 4), where)
    if any(_zero(H[3, k] - v) is False for k, v in enumerate((0, 0, 0, 1))):
        raise ArgumentError(f"{where}: expected a homogeneous transform, last row [0, 0, 0, 1], "
                            f"got {list(H[3, :])}")
    _rotation(H[:3, :3], f"{where} (rotation block)")
    return H


def _direction(v, where):
    """A nonzero 3-vector (pure sympy): refused when its squared length simplifies to 0."""
    v = _matrix(v, (3, 1), where)
    if _zero(v.dot(v)) is True:
        raise ArgumentError(f"{where}: expected a nonzero direction, got the zero vector")
    return v


def _symbols(xs, n, where):
    """A list of n sympy Symbols (or n of any length when n is None)."""
    if isinstance(xs, (str, bytes)) or not hasattr(xs, "__iter__"):
        raise ArgumentTypeError(f"{where}: expected a list of sympy Symbols, got {_describe(xs)}")
    xs = list(xs)
    bad = [s for s in xs if not isinstance(s, sp.Symbol)]
    if bad or not xs:
        raise ArgumentTypeError(f"{where}: expected a list of sympy Symbols, got "
                        f"{bad[0] if bad else 'an empty list'!r}")
    if n is not None and len(xs) != n:
        raise ArgumentError(f"{where}: expected {n} symbols, got {len(xs)}")
    return xs


# --------------------------------------------------------------------------
# rotations and rigid motions
# --------------------------------------------------------------------------

def hat(x):
    r"""The matrix of a 3-vector in so(3) (:math:`\hat w p = w\times p`), or of a twist
    :math:`V = (\omega, v)` in se(3), :math:`[\hat\omega\ v;\ 0\ 0]`.

    >>> a, b, c = sp.symbols('a b c')
    >>> hat([a, b, c])
    Matrix([
    [ 0, -c,  b],
    [ c,  0, -a],
    [-b,  a,  0]])
    """
    n = len(x) if hasattr(x, "__len__") and not isinstance(x, (str, bytes)) else None
    if n not in (3, 6):
        raise ArgumentError(f"hat: x: expected a 3-vector or a 6-vector (omega, v), got "
                         f"{_describe(x)}")
    if n == 3:
        w = _matrix(x, (3, 1), "hat: x")
        return sp.Matrix([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    V = _matrix(x, (6, 1), "hat: x")
    X = sp.zeros(4, 4)
    X[:3, :3] = hat(V[:3, 0])
    X[:3, 3] = V[3:, 0]
    return X


def vee(X):
    r"""Inverse of :func:`hat`: a skew 3x3 matrix to its 3-vector, an se(3) 4x4 matrix to
    :math:`(\omega, v)` (the matrix is taken as skew; :func:`robodyn.rigid_motion.vee` checks).

    >>> vee(hat([1, 2, 3])).T
    Matrix([[1, 2, 3]])
    """
    if not isinstance(X, sp.MatrixBase) and not hasattr(X, "__len__"):
        raise ArgumentTypeError(f"vee: X: expected a 3x3 or 4x4 sympy Matrix, got {_describe(X)}")
    M = sp.Matrix(X) if not isinstance(X, (str, bytes)) else None
    if M is None or M.shape not in ((3, 3), (4, 4)):
        raise ArgumentError(f"vee: X: expected a 3x3 so(3) or a 4x4 se(3) matrix, got "
                         f"{_describe(X)}")
    M = _matrix(M, M.shape, "vee: X")
    w = sp.Matrix([M[2, 1], M[0, 2], M[1, 0]])
    return w if M.shape == (3, 3) else sp.Matrix.vstack(w, M[:3, 3])


def exp_so3(w, theta):
    r"""Rodrigues' formula for a unit axis :math:`\omega` and an angle :math:`\theta`:
    :math:`R = I + \sin\theta\,\hat\omega + (1-\cos\theta)\hat\omega^2`.

    >>> t = sp.Symbol('t')
    >>> exp_so3([0, 0, 1], t)
    Matrix([
    [cos(t), -sin(t), 0],
    [sin(t),  cos(t), 0],
    [     0,       0, 1]])
    """
    W = hat(_matrix(w, (3, 1), "exp_so3: w"))
    theta = _expr(theta, "exp_so3: theta")
    return sp.eye(3) + sp.sin(theta) * W + (1 - sp.cos(theta)) * (W @ W)


def rotation(axis, angle):
    r"""Rotation by ``angle`` about ``'x'``, ``'y'``, ``'z'`` or a unit 3-vector
    (:func:`exp_so3`).

    >>> rotation('x', sp.Symbol('phi'))
    Matrix([
    [1,        0,         0],
    [0, cos(phi), -sin(phi)],
    [0, sin(phi),  cos(phi)]])
    """
    if isinstance(axis, str):
        if axis not in ("x", "y", "z"):
            raise ArgumentError(f"rotation: axis: expected 'x', 'y', 'z' or a 3-vector, got "
                             f"{axis[:40]!r}")
        axis = sp.eye(3)[:, "xyz".index(axis)]
    return exp_so3(_direction(axis, "rotation: axis"), _expr(angle, "rotation: angle"))


def homogeneous(R, p):
    r"""The 4x4 homogeneous matrix :math:`H = [R\ p;\ 0\ 1]`.

    >>> homogeneous(sp.eye(3), [1, 2, 3])[:3, 3].T
    Matrix([[1, 2, 3]])
    """
    H = sp.eye(4)
    H[:3, :3] = _rotation(R, "homogeneous: R")
    H[:3, 3] = _matrix(p, (3, 1), "homogeneous: p")
    return H


def inverse_homogeneous(H):
    r""":math:`H^{-1} = [R^T\ -R^Tp;\ 0\ 1]`, without a general matrix inverse.

    >>> inverse_homogeneous(homogeneous(sp.eye(3), [1, 2, 3]))[:3, 3].T
    Matrix([[-1, -2, -3]])
    """
    H = _pose(H, "inverse_homogeneous: H")
    R, p = H[:3, :3], H[:3, 3]
    Hi = sp.eye(4)
    Hi[:3, :3] = R.T
    Hi[:3, 3] = -(R.T @ p)
    return Hi


def adjoint(H):
    r"""The 6x6 adjoint :math:`\mathrm{Ad}_H = [R\ 0;\ [p]R\ R]` of a rigid motion (twists
    ordered :math:`(\omega, v)`).

    >>> adjoint(homogeneous(sp.eye(3), [0, 0, 1]))[3:, :3]
    Matrix([
    [0, -1, 0],
    [1,  0, 0],
    [0,  0, 0]])
    """
    H = _pose(H, "adjoint: H")
    R, p = H[:3, :3], H[:3, 3]
    A = sp.zeros(6, 6)
    A[:3, :3] = R
    A[3:, 3:] = R
    A[3:, :3] = hat(p) @ R
    return A


def ad(V):
    r"""The 6x6 matrix :math:`\mathrm{ad}_V = [[\omega]\ 0;\ [v]\ [\omega]]` of a twist, its
    Lie bracket: :math:`\mathrm{ad}_{V_1}V_2 = [V_1, V_2]`.

    >>> ad([0, 0, 1, 0, 0, 0])[:3, :3] == hat([0, 0, 1])
    True
    """
    V = _matrix(V, (6, 1), "ad: V")
    A = sp.zeros(6, 6)
    Wh = hat(V[:3, 0])
    A[:3, :3] = Wh
    A[3:, 3:] = Wh
    A[3:, :3] = hat(V[3:, 0])
    return A


def revolute_screw(axis, point, pitch=0):
    r"""Screw axis :math:`\mathcal S = (\omega,\ -\omega\times p + h\omega)` of a revolute
    (``pitch`` 0) or helical joint about the unit ``axis`` through ``point``.

    >>> a = sp.Symbol('a')
    >>> revolute_screw([0, 0, 1], [a, 0, 0]).T
    Matrix([[0, 0, 1, 0, -a, 0]])
    """
    w = _direction(axis, "revolute_screw: axis")
    p = _matrix(point, (3, 1), "revolute_screw: point")
    v = -(hat(w) @ p) + _expr(pitch, "revolute_screw: pitch") * w
    return sp.Matrix.vstack(w, v)


def exp_se3(S, theta):
    r"""The screw motion :math:`e^{[\mathcal S]\theta}` of a screw axis
    :math:`\mathcal S = (\omega, v)` (unit :math:`\omega`, or :math:`\omega = 0` and unit v):

    .. math:: e^{[\mathcal S]\theta} = \begin{bmatrix} e^{[\omega]\theta} &
              (I\theta + (1-\cos\theta)[\omega] + (\theta-\sin\theta)[\omega]^2)\,v\\
              0 & 1\end{bmatrix}

    >>> t = sp.Symbol('t')
    >>> exp_se3([0, 0, 0, 1, 0, 0], t)[:3, 3].T          # a prismatic joint slides by t
    Matrix([[t, 0, 0]])
    """
    S = _matrix(S, (6, 1), "exp_se3: S")
    theta = _expr(theta, "exp_se3: theta")
    W, v = hat(S[:3, 0]), S[3:, 0]
    omc = 1 - sp.cos(theta)
    H = sp.eye(4)
    H[:3, :3] = sp.eye(3) + sp.sin(theta) * W + omc * (W @ W)
    G = sp.eye(3) * theta + omc * W + (theta - sp.sin(theta)) * (W @ W)
    H[:3, 3] = G @ v
    return H


# --------------------------------------------------------------------------
# Lagrange's operators
# --------------------------------------------------------------------------

def _square(M, q, fname):
    q = _symbols(q, None, f"{fname}: q")
    n = len(q)
    return _matrix(M, (n, n), f"{fname}: M (one row and column per coordinate in q)"), q, n


def _dM(M, q):
    """The derivatives of M: ``dM[k][i, j]`` = dM_ij / dq_k."""
    return [M.diff(qk) for qk in q]


def _first_kind(dM, n):
    """Christoffel symbols of the first kind (5.13) from the derivatives of M."""
    return [[[(dM[k][i, j] + dM[j][i, k] - dM[i][j, k]) / 2 for k in range(n)]
             for j in range(n)] for i in range(n)]


def _coriolis_from_dM(dM, qd, n):
    """C_ij = sum_k Gamma_ijk qd_k (5.14), expanded."""
    C = sp.zeros(n, n)
    for i in range(n):
        for j in range(n):
            C[i, j] = sp.expand(sum((dM[k][i, j] + dM[j][i, k] - dM[i][j, k]) * qd[k]
                                    for k in range(n)) / 2)
    return C


def christoffel_symbols(M, q, kind=1):
    r"""Christoffel symbols of a mass matrix M(q), indexed ``[i, j, k]``: ``kind=1``, eq.
    (5.13), :math:`\Gamma_{ijk} = \tfrac12(\partial M_{ij}/\partial q_k + \partial M_{ik}/\partial q_j
    - \partial M_{jk}/\partial q_i)`; ``kind=2``, eq. (5.16),
    :math:`\Gamma^i_{jk} = \sum_l (M^{-1})_{il}\Gamma_{ljk}`.

    >>> q1, q2, h = sp.symbols('q1 q2 h')
    >>> M = sp.Matrix([[3 + 2 * h * sp.cos(q2), 1 + h * sp.cos(q2)], [1 + h * sp.cos(q2), 1]])
    >>> christoffel_symbols(M, [q1, q2])[0, 1, 1]
    -h*sin(q2)
    """
    if kind not in (1, 2) or isinstance(kind, bool):
        raise ArgumentError(f"christoffel_symbols: kind: expected 1 (first kind, eq. 5.13) or 2 "
                         f"(second kind, eq. 5.16), got {kind!r}")
    M, q, n = _square(M, q, "christoffel_symbols")
    G = _first_kind(_dM(M, q), n)
    if kind == 2:
        try:
            Minv = M.inv()
        except ValueError as err:                 # sympy: NonInvertibleMatrixError
            raise ArgumentError(f"christoffel_symbols: M: expected an invertible mass matrix for "
                             f"the second kind (eq. 5.16), got one whose inverse sympy cannot "
                             f"form ({err})") from err
        G = [[[sum(Minv[i, l] * G[l][j][k] for l in range(n)) for k in range(n)]
              for j in range(n)] for i in range(n)]
    return sp.ImmutableDenseNDimArray(G, (n, n, n))


def coriolis_matrix(M, q, qd):
    r"""The Coriolis matrix :math:`C_{ij} = \sum_k\Gamma_{ijk}\dot q_k` of eq. (5.14), from the
    Christoffel symbols of the first kind (5.13).

    >>> q1, q2, u1, u2, h = sp.symbols('q1 q2 u1 u2 h')
    >>> M = sp.Matrix([[3 + 2 * h * sp.cos(q2), 1 + h * sp.cos(q2)], [1 + h * sp.cos(q2), 1]])
    >>> coriolis_matrix(M, [q1, q2], [u1, u2])
    Matrix([
    [-h*u2*sin(q2), -h*u1*sin(q2) - h*u2*sin(q2)],
    [ h*u1*sin(q2),                            0]])
    """
    M, q, n = _square(M, q, "coriolis_matrix")
    qd = _matrix(qd, (n, 1), "coriolis_matrix: qd (one velocity per coordinate in q)")
    return _coriolis_from_dM(_dM(M, q), qd, n)


try:            # the library's boundary (issue 28); the book's pages have no numpy: unsealed
    from ._boundary import seal as _seal
except ImportError:                                             # pragma: no cover
    pass
else:
    _seal(globals())
