r"""Generated C of one robot's recursive dynamics: the articulated-body algorithm (forward
dynamics) and the recursive Newton--Euler algorithm (inverse dynamics), written out for that
robot.

The closed-form :math:`M(q)`, :math:`C(q,\dot q)`, :math:`G(q)` of a 7-joint arm are long
(thousands of operations per entry once multiplied out), and solving
:math:`M\ddot q = \tau - C\dot q - G` from them costs a dense factorization on top. The
recursions of Featherstone (2008, §5.3 and §7.3) cost :math:`O(n)` instead: the same equations
of motion (5.14), evaluated without ever forming :math:`M`. This module *specialises* them to
one robot, as a compiler would: it runs the recursion once in Python over symbolic stand-ins
(polynomials in the C variable names with numeric coefficients) and writes every spatial
quantity it meets as a line of C. The robot's joint axes, placements and inertias become
numeric constants, every product with a zero entry of a constant transform or inertia is
dropped, products with :math:`\pm 1` become signs, each joint's :math:`\cos q_i, \sin q_i` is
computed once, and loops are unrolled (one block of lines per joint, with a comment naming it).

Body :math:`i` hangs from body :math:`\lambda(i)` with :math:`X_i(q_i) = P_i\,e^{[\mathcal
A_i]q_i}` as in :mod:`robodyn.trees` (twists :math:`(\omega, v)`, wrenches :math:`(m, f)`,
:math:`\mathrm{Ad}_i = \mathrm{Ad}_{X_i^{-1}}`); the articulated-body algorithm (Featherstone
2008, eq. 7.38--7.41) is

.. math::
   U_i = \mathcal I^A_i\mathcal A_i,\quad D_i = \mathcal A_i^TU_i,\quad
   u_i = \tau_i - \mathcal A_i^Tp^A_i,

   \mathcal I^A_{\lambda(i)} \mathrel{+}= \mathrm{Ad}_i^T\bigl(\mathcal I^A_i
   - U_iU_i^T/D_i\bigr)\mathrm{Ad}_i,

   \ddot q_i = \bigl(u_i - U_i^T(\mathrm{Ad}_i\dot V_{\lambda(i)} + c_i)\bigr)/D_i .

The robot is a :class:`~robodyn.urdf.RobotModel` with a fixed base (a tree: branches are
summed over the children) or a numeric :class:`~robodyn.rigid_motion.SerialChain` (revolute and
prismatic joints; each link's frame is moved onto its joint's axis so that the joint turns
about an axis through the frame's origin, which keeps the transforms sparse).
:meth:`EquationsOfMotion.numeric <robodyn.lagrange.EquationsOfMotion.numeric>` compiles its
``forward_dynamics`` and ``tau`` from here when the equations came from a numeric chain.

The compiled module's ``forward_dynamics(q, qd, tau)`` and ``tau(q, qd, qdd)`` take 1-D arrays
of length n, or a batch (all (B, n)), with the argument checks, the cache and the error
messages of :func:`robodyn.codegen.compile_equations`; an articulated inertia :math:`D_i` that
is not positive, or at most 1e-14 of the largest (M singular or not positive definite at the
state), raises :class:`robodyn.equations.SingularMassMatrix` (also a
``numpy.linalg.LinAlgError``).
"""
from __future__ import annotations

import numpy as np

from . import _value_checks
from .codegen import _MODULE_INIT, _PRELUDE, compiled_module
from .rigid_motion import SerialChain
from .urdf import RobotModel, _move_inertia

__all__ = ["recursive_source", "compile_recursive", "DEFAULT_GRAVITY"]

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)

_SNAP = 1e-14
"""Relative size below which a constant of the robot is a rounding residue of zero (or of
one, in a rotation matrix): cos(pi/2) = 6e-17 in a URDF's rpy would cost multiplications."""


# --------------------------------------------------------------------------
# the robot as constants: parents, joint types, axes, placements, inertias
# --------------------------------------------------------------------------

def _snap(x, scale=1.0):
    """``x`` with entries within _SNAP * scale of 0, 1 or -1 made exactly that."""
    x = np.array(x, dtype=float)
    for target in (0.0, 1.0, -1.0):
        x[np.abs(x - target) <= _SNAP * scale] = target
    return x


def _from_model(model, fname):
    if model.floating:
        raise _value_checks.refusal(ValueError, f"{fname}: robot: expected a fixed base, got {model!r} "
                                          f"(a floating base is not generated here: use "
                                          f"robodyn.trees.aba)")
    placements = [(_snap(P[:3, :3]), _snap(P[:3, 3])) for P in model.placements]
    inertias = [_snap(G, np.abs(G).max()) for G in model.inertias]
    return (model.name, tuple(model.parents), tuple(model.joint_names),
            tuple(model.joint_types), [_snap(a) for a in model.axes], placements, inertias)


def _from_chain(chain, fname):
    """A chain's joints in frames on their axes: body i's frame has the axes of link i's
    centre-of-mass frame and its origin on joint i's axis (the point nearest the centre of
    mass; the centre of mass itself for a prismatic joint)."""
    if chain.link_homes is None or chain.link_inertias is None or chain.symbolic:
        raise _value_checks.error(f"{fname}: robot", "a numeric SerialChain with link_homes and "
                            "link_inertias", repr(chain), "substitute numbers for its symbols")
    bad = [t for t in chain.joint_types if t not in ("revolute", "prismatic")]
    if bad:
        raise _value_checks.error(f"{fname}: robot", "revolute and prismatic joints", f"{bad[0]} "
                            f"joints in {chain!r}")
    S = np.asarray(chain.screws, dtype=float)
    F_prev = np.eye(4)
    axes, placements, inertias = [], [], []
    for i, kind in enumerate(chain.joint_types):
        L = np.asarray(chain.link_homes[i], dtype=float)
        w, v = S[:3, i], S[3:, i]
        R, com = L[:3, :3], L[:3, 3]
        if kind == "revolute":
            r0 = np.cross(w, v)                     # the point of the axis nearest the origin
            origin = r0 + w * (w @ (com - r0))
            axes.append(_snap(R.T @ w))
        else:
            origin = com
            axes.append(_snap(R.T @ v))
        F = np.eye(4)
        F[:3, :3], F[:3, 3] = R, origin
        P = np.linalg.solve(F_prev, F)
        placements.append((_snap(P[:3, :3]), _snap(P[:3, 3])))
        H = np.eye(4)
        H[:3, 3] = R.T @ (com - origin)             # the CoM frame in body i's frame
        G = _move_inertia(np.asarray(chain.link_inertias[i], dtype=float), H)
        inertias.append(_snap(G, np.abs(G).max()))
        F_prev = F
    n = chain.n
    return (chain.name, tuple(range(-1, n - 1)), tuple(f"joint {i + 1}" for i in range(n)),
            tuple(chain.joint_types), axes, placements, inertias)


def _chain_data(chain):
    """The constants of a chain as :func:`_compile` takes them, or ``None`` for a chain this
    module does not generate (symbolic parameters, helical joints, no inertias)."""
    try:
        return _from_chain(chain, "_chain_data")
    except (ValueError, TypeError):
        return None


def _robot(robot, fname):
    if isinstance(robot, RobotModel):
        return _from_model(robot, fname)
    if isinstance(robot, SerialChain):
        return _from_chain(robot, fname)
    raise _value_checks.error(f"{fname}: robot", "a RobotModel (robodyn.urdf.load_urdf) or a "
                        "numeric SerialChain", robot, exc=TypeError)


def _gravity(gravity, fname):
    g = _value_checks.vector(gravity, 3, f"{fname}: gravity", hint="m/s^2 in the base frame")
    return np.asarray(g, dtype=float)


# --------------------------------------------------------------------------
# polynomials in C variables: {(name, ...): coefficient}, products of names
# --------------------------------------------------------------------------

def _const(x):
    return {(): float(x)} if x != 0 else {}


def _var(name):
    return {(name,): 1.0}


def _add(*ps):
    out = {}
    for p in ps:
        for m, c in p.items():
            out[m] = out.get(m, 0.0) + c
    return {m: c for m, c in out.items() if c != 0.0}


def _mul(p, q):
    out = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = tuple(sorted(m1 + m2))
            out[m] = out.get(m, 0.0) + c1 * c2
    return {m: c for m, c in out.items() if c != 0.0}


def _dot(u, v):
    return _add(*(_mul(a, b) for a, b in zip(u, v)))


def _matvec(A, x):
    return [_dot(row, x) for row in A]


def _transpose(A):
    return [list(col) for col in zip(*A)]


def _cross(a, b):
    return [_add(_mul(a[1], b[2]), _mul(_const(-1), _mul(a[2], b[1]))),
            _add(_mul(a[2], b[0]), _mul(_const(-1), _mul(a[0], b[2]))),
            _add(_mul(a[0], b[1]), _mul(_const(-1), _mul(a[1], b[0])))]


def _constant_matrix(A):
    return [[_const(x) for x in row] for row in np.asarray(A)]


def _term(m, c):
    if not m:
        return repr(c)
    body = "*".join(m)
    return body if c == 1.0 else "-" + body if c == -1.0 else f"{c!r}*{body}"


def _text(p):
    """C text of a polynomial (``0.0`` for the zero one)."""
    if not p:
        return "0.0"
    terms = [_term(m, p[m]) for m in sorted(p, key=lambda m: (len(m), m))]
    out = terms[0]
    for t in terms[1:]:
        out += f" - {t[1:]}" if t.startswith("-") else f" + {t}"
    return out


class _Emitter:
    """Lines of C, one per quantity: ``let`` names a polynomial (a constant or a single
    variable is passed through without a line)."""

    def __init__(self):
        self.lines = []

    def say(self, line):
        self.lines.append(line)

    def let(self, name, p):
        if all(not m for m in p) or (len(p) == 1 and next(iter(p.values())) == 1.0
                                     and len(next(iter(p))) == 1):
            return p
        self.lines.append(f"    const double {name} = {_text(p)};")
        return _var(name)

    def vec(self, name, ps):
        return [self.let(f"{name}_{k}", p) for k, p in enumerate(ps)]

    def sym(self, name, X):
        """A symmetric 6x6 matrix, its upper triangle named (``name_jk``, j <= k)."""
        out = [[None] * 6 for _ in range(6)]
        for j in range(6):
            for k in range(j, 6):
                out[j][k] = out[k][j] = self.let(f"{name}_{j}{k}", X[j][k])
        return out

    def mat(self, name, X):
        return [[self.let(f"{name}_{j}{k}", X[j][k]) for k in range(6)] for j in range(6)]


# --------------------------------------------------------------------------
# spatial algebra on polynomial vectors
# --------------------------------------------------------------------------

def _joint_parts(i, kind, axis, placement):
    r"""(J, K, S): :math:`\mathrm{Ad}_i = JK`, K the constant :math:`\mathrm{Ad}_{P_i^{-1}}`,
    J the joint's own motion (rotation :math:`R(a, q_i)^T` in both blocks, or the shift of a
    slide), S the joint's screw, as polynomial 6x6, 6x6 and 6 entries."""
    R, p = placement
    K = np.zeros((6, 6))
    K[:3, :3] = K[3:, 3:] = R.T
    K[3:, :3] = -R.T @ np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
    a = axis
    A = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    J = [[{} for _ in range(6)] for _ in range(6)]
    if kind == "revolute":
        c, s = _var(f"c{i}"), _var(f"s{i}")
        aa = np.outer(a, a)
        RqT = [[_add(_const(aa[r, k]), _mul(c, _const(np.eye(3)[r, k] - aa[r, k])),
                     _mul(s, _const(-A[r, k]))) for k in range(3)] for r in range(3)]
        for r in range(3):
            for k in range(3):
                J[r][k] = J[r + 3][k + 3] = RqT[r][k]
        S = [_const(x) for x in np.r_[a, 0, 0, 0]]
    else:
        qi = _var(f"q[{i}]")
        for r in range(6):
            J[r][r] = _const(1.0)
        for r in range(3):
            for k in range(3):
                J[r + 3][k] = _mul(qi, _const(-A[r, k]))
        S = [_const(x) for x in np.r_[0, 0, 0, a]]
    return J, _constant_matrix(K), S


def _ad_cross(V, m):
    r""":math:`\mathrm{ad}_Vm`: :math:`(\omega\times m_\omega, \omega\times m_v + v\times
    m_\omega)`."""
    w, v = V[:3], V[3:]
    return _cross(w, m[:3]) + [_add(x, y) for x, y in zip(_cross(w, m[3:]), _cross(v, m[:3]))]


def _bias_force(V, h):
    r""":math:`-\mathrm{ad}_V^Th` for :math:`h = \mathcal IV`: :math:`(\omega\times h_1 +
    v\times h_2, \omega\times h_2)`."""
    w, v = V[:3], V[3:]
    return [_add(x, y) for x, y in zip(_cross(w, h[:3]), _cross(v, h[3:]))] + _cross(w, h[3:])


def _congruence(e, name, A, X):
    r""":math:`A^TXA` for a symmetric X, named (``name``): first :math:`XA`, then its rows."""
    T = e.mat(f"{name}t", [[_dot(X[r], [A[k][c] for k in range(6)]) for c in range(6)]
                          for r in range(6)])
    return [[_dot([A[k][r] for k in range(6)], [T[k][c] for k in range(6)])
             for c in range(6)] for r in range(6)]


# --------------------------------------------------------------------------
# the recursions, written out
# --------------------------------------------------------------------------

class _Recursion:
    """The robot's constants and the first (outward) pass shared by both kernels."""

    def __init__(self, robot, gravity):
        self.name, self.parents, self.names, self.types, axes, placements, inertias = robot
        self.n = len(self.parents)
        self.parts = [_joint_parts(i, *x) for i, x in
                      enumerate(zip(self.types, axes, placements))]
        self.inertias = [_constant_matrix(G) for G in inertias]
        self.base_acc = [_const(0)] * 3 + [_const(-x) for x in gravity]
        self.axes = axes

    def header(self, e, i):
        kind, a = self.types[i], self.axes[i]
        e.say(f"    /* body {i}: joint {_plain(self.names[i])} ({kind}, axis ({a[0]:g}, {a[1]:g}, "
              f"{a[2]:g})), parent {'the base' if self.parents[i] < 0 else self.parents[i]} */")
        if kind == "revolute":
            e.say(f"    const double c{i} = cos(q[{i}]), s{i} = sin(q[{i}]);")

    def ad(self, i, x):
        J, K, _ = self.parts[i]
        return _matvec(J, _matvec(K, x))

    def ad_t(self, i, f):
        J, K, _ = self.parts[i]
        return _matvec(_transpose(K), _matvec(_transpose(J), f))

    def velocities(self, e, i, V):
        """V_i, its bias acceleration c_i = ad_{V_i} A_i qd_i and bias force -ad^T I V."""
        p, (_, _, S) = self.parents[i], self.parts[i]
        Sq = [_mul(x, _var(f"qd[{i}]")) for x in S]
        if p < 0:
            V[i] = e.vec(f"V{i}", Sq)
            c = [{}] * 6
        else:
            V[i] = e.vec(f"V{i}", [_add(x, y) for x, y in zip(self.ad(i, V[p]), Sq)])
            c = e.vec(f"ba{i}", _ad_cross(V[i], Sq))
        h = e.vec(f"h{i}", _matvec(self.inertias[i], V[i]))
        return c, _bias_force(V[i], h)


def _plain(name):
    """A name as it may stand in a C comment."""
    return "".join(ch if ch.isalnum() or ch in "_-. " else "?" for ch in str(name))


_PIVOT_TOL = 1e-14
"""A pivot D_i at most this share of the largest is rounding: M is singular at the state (the
test of :func:`robodyn.trees.aba` and :func:`robodyn.dynamics.forward_dynamics`)."""


def _inverse_pivot(e, i, D, pivots):
    """1/D_i as a polynomial, after the C test that D_i > 0 (a constant D_i, a leaf's, is
    tested here: a non-positive one makes k_fd report body i at once); D_i's C text is
    appended to ``pivots`` for :func:`_pivot_test`."""
    if all(not m for m in D):
        d = D.get((), 0.0)
        pivots.append((i, repr(d)))
        if d > 0:
            return _const(1.0 / d)
        e.say(f"    *pivot = {d!r}; return {i};")
        return _const(0.0)
    e.say(f"    const double D{i} = {_text(D)};")
    e.say(f"    if (!(D{i} > 0.0)) {{ *pivot = D{i}; return {i}; }}")
    e.say(f"    const double iD{i} = 1.0 / D{i};")
    pivots.append((i, f"D{i}"))
    return _var(f"iD{i}")


def _pivot_test(e, pivots):
    """C that reports the first pivot at most :data:`_PIVOT_TOL` of the largest (n
    comparisons, before any acceleration is written)."""
    e.say(f"    double Dmax = {pivots[0][1]};")
    for _, d in pivots[1:]:
        e.say(f"    Dmax = {d} > Dmax ? {d} : Dmax;")
    for i, d in pivots:
        e.say(f"    if (!({d} > {_PIVOT_TOL!r} * Dmax)) {{ *pivot = {d}; return {i}; }}")


def _aba_kernel(rec):
    r"""C of :math:`\ddot q` (Featherstone 2008, §7.3), returning -1, or the body whose
    :math:`D_i` is not positive or at most :data:`_PIVOT_TOL` of the largest (its value in
    ``*pivot``)."""
    e, n, par = _Emitter(), rec.n, rec.parents
    V, c, pA, IA = [None] * n, [None] * n, [None] * n, [None] * n
    e.say("    /* outward: velocities V, bias accelerations ba, bias forces (h = I V) */")
    for i in range(n):
        rec.header(e, i)
        c[i], bias = rec.velocities(e, i, V)
        pA[i], IA[i] = [bias], [rec.inertias[i]]
    U, u, iD, pivots = [None] * n, [None] * n, [None] * n, []
    e.say("    /* inward: articulated inertias IA and bias forces pA */")
    for i in range(n - 1, -1, -1):
        e.say(f"    /* body {i} */")
        Ia = e.sym(f"IA{i}", [[_add(*(X[r][k] for X in IA[i])) for k in range(6)]
                             for r in range(6)])
        p_i = e.vec(f"pA{i}", [_add(*(f[k] for f in pA[i])) for k in range(6)])
        S = rec.parts[i][2]
        U[i] = e.vec(f"U{i}", _matvec(Ia, S))
        iD[i] = _inverse_pivot(e, i, _dot(S, U[i]), pivots)
        u[i] = e.let(f"u{i}", _add(_var(f"tau[{i}]"), _mul(_const(-1), _dot(S, p_i))))
        if par[i] < 0:
            continue
        Ua = [_mul(x, iD[i]) for x in U[i]]
        Ua = e.vec(f"Ud{i}", Ua)
        Ib = e.sym(f"Ia{i}", [[_add(Ia[r][k], _mul(_const(-1), _mul(Ua[r], U[i][k])))
                               for k in range(6)] for r in range(6)])
        ui = e.let(f"ud{i}", _mul(u[i], iD[i]))
        pa = e.vec(f"pa{i}", [_add(p_i[r], _dot(Ib[r], c[i]), _mul(U[i][r], ui))
                              for r in range(6)])
        J, K, _ = rec.parts[i]
        Y = e.sym(f"Y{i}", _congruence(e, f"Y{i}", J, Ib))
        IA[par[i]].append(_congruence(e, f"Z{i}", K, Y))
        pA[par[i]].append(rec.ad_t(i, pa))
    e.say("    /* a singular M: a pivot that is rounding of the largest */")
    _pivot_test(e, pivots)
    e.say("    /* outward: accelerations */")
    a = [None] * n
    for i in range(n):
        ap = rec.base_acc if par[i] < 0 else a[par[i]]
        ai = e.vec(f"a{i}", [_add(x, y) for x, y in zip(rec.ad(i, ap), c[i])])
        qdd = e.let(f"qdd{i}", _mul(_add(u[i], _mul(_const(-1), _dot(U[i], ai))), iD[i]))
        e.say(f"    qdd[{i}] = {_text(qdd)};")
        a[i] = [_add(x, _mul(y, qdd)) for x, y in zip(ai, rec.parts[i][2])]
    e.say("    return -1;")
    return ("static int k_fd(const double *q, const double *qd, const double *tau, "
            "double *qdd, double *pivot)\n{\n" + "\n".join(e.lines) + "\n}")


def _rnea_kernel(rec):
    r"""C of :math:`\tau = M\ddot q + C\dot q + G` (Featherstone 2008, §5.3)."""
    e, n, par = _Emitter(), rec.n, rec.parents
    V, F = [None] * n, [None] * n
    e.say("    /* outward: velocities, accelerations, body wrenches */")
    for i in range(n):
        rec.header(e, i)
        c, bias = rec.velocities(e, i, V)
        ap = rec.base_acc if par[i] < 0 else F[par[i]][0]
        Sqdd = [_mul(x, _var(f"qdd[{i}]")) for x in rec.parts[i][2]]
        a = e.vec(f"a{i}", [_add(x, y, z) for x, y, z in zip(rec.ad(i, ap), c, Sqdd)])
        F[i] = (a, [[_add(x, y) for x, y in zip(_matvec(rec.inertias[i], a), bias)]])
    e.say("    /* inward: joint torques */")
    for i in range(n - 1, -1, -1):
        f = e.vec(f"f{i}", [_add(*(g[k] for g in F[i][1])) for k in range(6)])
        e.say(f"    tau[{i}] = {_text(_dot(rec.parts[i][2], f))};")
        if par[i] >= 0:
            F[par[i]][1].append(rec.ad_t(i, f))
    return ("static void k_id(const double *q, const double *qd, const double *qdd, "
            "double *tau)\n{\n" + "\n".join(e.lines) + "\n}")


def recursive_source(robot, gravity=DEFAULT_GRAVITY):
    r"""The C99 text of a robot's forward dynamics (the articulated-body algorithm) and
    inverse dynamics (recursive Newton--Euler) for :math:`M\ddot q + C\dot q + G = \tau`
    (eq. 5.14), specialised to the robot: two functions needing only ``<math.h>``,

    ``int k_fd(const double *q, const double *qd, const double *tau, double *qdd, double
    *pivot)`` (returns -1, or the body whose articulated inertia :math:`D_i` is not positive,
    or at most 1e-14 of the largest)
    and ``void k_id(const double *q, const double *qd, const double *qdd, double *tau)``.

    Parameters
    ----------
    robot : RobotModel with a fixed base, or a numeric SerialChain (revolute and prismatic
        joints)
    gravity : 3-vector in the base frame, m/s^2

    >>> from robodyn.urdf import load_urdf
    >>> text = recursive_source(load_urdf("ur5"))
    >>> text.count("cos(q["), "qdd[5] =" in text
    (12, True)
    """
    fname = "recursive_source"
    rec = _Recursion(_robot(robot, fname), _gravity(gravity, fname))
    return (f"/* {rec.name}: {rec.n} joints, generated by robodyn.recursive_codegen */\n\n"
            + _aba_kernel(rec) + "\n\n" + _rnea_kernel(rec))


_METHODS = r"""
static PyObject *linalg_error;

static PyObject *py_forward_dynamics(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{{
    PyArrayObject *a[3];
    npy_intp b = parse(args, nargs, 3, "forward_dynamics", N_QQDTAU, a);
    if (b < -1) return NULL;
    PyObject *out = result(b, 1, N, 0);
    if (out) {{
        double *x = (double *)PyArray_DATA((PyArrayObject *)out);
        for (npy_intp r = 0; r < ROWS(b); r++) {{
            double d;
            int j = k_fd(D(a[0]) + r * N, D(a[1]) + r * N, D(a[2]) + r * N, x + r * N, &d);
            if (j >= 0) {{
                char msg[320];
                snprintf(msg, sizeof msg, "forward_dynamics: M(q)%s: expected a positive "
                         "definite mass matrix, got one that is singular or not positive "
                         "definite at this state (the articulated inertia D of body %d about "
                         "its joint is %g, at most 1e-14 of the largest)",
                         b < 0 ? "" : " of a state of the batch", j, d);
                PyErr_SetString(linalg_error, msg);
                Py_DECREF(out);
                out = NULL;
                break;
            }}
        }}
    }}
    Py_DECREF(a[0]); Py_DECREF(a[1]); Py_DECREF(a[2]);
    return finite_out(out, "forward_dynamics");
}}

static PyObject *py_tau(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{{
    PyArrayObject *a[3];
    npy_intp b = parse(args, nargs, 3, "tau", N_QQDQDD, a);
    if (b < -1) return NULL;
    PyObject *out = result(b, 1, N, 0);
    if (out) {{
        double *t = (double *)PyArray_DATA((PyArrayObject *)out);
        for (npy_intp r = 0; r < ROWS(b); r++)
            k_id(D(a[0]) + r * N, D(a[1]) + r * N, D(a[2]) + r * N, t + r * N);
    }}
    Py_DECREF(a[0]); Py_DECREF(a[1]); Py_DECREF(a[2]);
    return finite_out(out, "tau");
}}

static PyMethodDef methods[] = {{
    {{"forward_dynamics", (PyCFunction)(void (*)(void))py_forward_dynamics, METH_FASTCALL,
     "forward_dynamics(q, qd, tau): the articulated-body algorithm"}},
    {{"tau", (PyCFunction)(void (*)(void))py_tau, METH_FASTCALL,
     "tau(q, qd, qdd): the recursive Newton-Euler algorithm"}},
    {{NULL, NULL, 0, NULL}}
}};

"""


def compile_recursive(robot, gravity=DEFAULT_GRAVITY):
    r"""A compiled module with ``forward_dynamics(q, qd, tau)`` :math:`= M^{-1}(\tau - C\dot q
    - G)` and ``tau(q, qd, qdd)`` :math:`= M\ddot q + C\dot q + G` (eq. 5.14) of a robot,
    from the C of :func:`recursive_source` (built once, cached on disk like
    :func:`robodyn.codegen.compile_equations`). Arguments: 1-D arrays of length n, or all of
    shape (B, n) for a batch of B states in one call.

    Raises :class:`~robodyn.codegen.CompileError` where no C compiler works.

    >>> from robodyn import trees
    >>> from robodyn.urdf import load_urdf
    >>> ur5 = load_urdf("ur5")
    >>> fd = compile_recursive(ur5).forward_dynamics
    >>> q, qd, tau = [0.1] * 6, [0.2] * 6, [1.0] * 6
    >>> bool(np.allclose(fd(q, qd, tau), trees.aba(ur5, q, qd, tau), rtol=1e-12, atol=1e-12))
    True
    """
    fname = "compile_recursive"
    return _compile(_robot(robot, fname), _gravity(gravity, fname))


def _compile(robot, gravity):
    """compile_recursive of checked data (``_robot``'s tuple, a float 3-vector)."""
    rec = _Recursion(robot, gravity)
    kernels = _aba_kernel(rec) + "\n\n" + _rnea_kernel(rec)
    source = (_PRELUDE + _METHODS + _MODULE_INIT).format(n=rec.n, kernels=kernels,
                                                         modname="MODNAME")
    return compiled_module(source, "robodyn_recursive")


from ._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
