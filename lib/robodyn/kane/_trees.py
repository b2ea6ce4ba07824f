r"""Kane's method on a kinematic tree (a :class:`~robodyn.urdf.RobotModel`: a parent array,
fixed or floating base): :func:`robodyn.kane.equations_of_motion` given a robot model.

The speeds are :math:`u = \dot q` (a floating base: :math:`u = (V_b, \dot q)`, the base's
twist in its own frame first, the order of :func:`robodyn.trees.aba`). Body i's twist in its
own frame is :math:`\mathcal V_i = J_i(q)u`, :math:`J_i` the tree's body Jacobian (columns
only on the path from the base; :func:`robodyn.trees._sym_bodies`), so the **partial twists**
of body i are the columns of :math:`J_i` (eq. (kane-tree-partial)). Its acceleration is the
time derivative of that velocity,

.. math:: \dot{\mathcal V}_i = J_i\dot u + \sum_k\frac{\partial(J_iu)}{\partial q_k}\dot q_k,

and with the body wrench of inertia :math:`-(\mathcal I_i\dot{\mathcal V}_i -
\mathrm{ad}^T_{\mathcal V_i}\mathcal I_i\mathcal V_i)` and of gravity :math:`\mathcal
I_i(0, R_i^Tg)` (the weight at the mass centre, :math:`R_i` body i's orientation in the
base frame), the generalized inertia and active forces are (eq. (kane-tree-fr))

.. math:: F_r^* = -\sum_i J_{i,r}^T\big(\mathcal I_i\dot{\mathcal V}_i
   - \mathrm{ad}^T_{\mathcal V_i}\mathcal I_i\mathcal V_i\big),\qquad
   F_r = \sum_i J_{i,r}^T\,\mathcal I_i\begin{pmatrix}0\\ R_i^Tg\end{pmatrix},

and Kane's equations :math:`F_r + F_r^* + \tau_r = 0` are :math:`M\dot u = f + \tau` with
:math:`M = \sum_iJ_i^T\mathcal I_iJ_i` (the coefficients of :math:`\dot u`) and :math:`f = F_r
+ F_r^*|_{\dot u=0}`. A floating base is a body like the others, its Jacobian :math:`[\,1_6\;
0\,]`; its pose never enters (the twists are body twists), except through gravity, given in the
base frame, :math:`g_b = R_b^Tg`. The same equations by Lagrange's method:
:func:`robodyn.trees.equations`.
"""
from __future__ import annotations

import sympy as sp


def _accelerations(J, u, q, qd):
    """The body's twist rate at udot = 0: sum_k d(J u)/dq_k qd_k (the velocity differentiated)."""
    V = J * u
    a = sp.zeros(6, 1)
    for qk, rk in zip(q, qd):
        if V.has(qk):
            a += V.diff(qk) * rk
    return V, a


def _tree_terms(model, g, q, u):
    """M, F_r and f of a tree by Kane's method (module docstring, eq. (kane-tree-fr)), and
    the bodies' Jacobians (a floating base's first)."""
    from ..trees import _sym_ad, _sym_bodies
    nv = model.nv
    qd = u[6:, 0] if model.floating else u
    M, Fr, bias = sp.zeros(nv, nv), sp.zeros(nv, 1), sp.zeros(nv, 1)
    bodies = _sym_bodies(model, q)
    for J, R, _, I in bodies:
        V, a = _accelerations(J, u, q, qd)
        JT = J.T
        M += JT * I * J
        bias += JT * (I * a - _sym_ad(V).T * (I * V))
        Fr += JT * (I * sp.Matrix.vstack(sp.zeros(3, 1), R.T * g))
    for r in range(nv):                  # exactly symmetric (float products in either order)
        for c in range(r + 1, nv):
            M[c, r] = M[r, c]
    return M, Fr, Fr - bias, tuple(J for J, _, _, _ in bodies)


def _tree_equations(model, gravity, q, u, fname):
    """The parts of :func:`robodyn.kane.equations_of_motion` of a RobotModel (arguments
    checked here, terms cached on the model): ``(q, u, udot, M, f, F_r, qd, gravity,
    jacobians)``, which ``_method`` wraps in a :class:`~robodyn.kane.TreeEquations`."""
    from ..trees import _sym_gravity, _sym_speeds
    g = _sym_gravity(gravity, fname)
    q, u = _sym_speeds(model, q, u, fname, "u")
    key = ("kane", tuple(q), tuple(u), tuple(str(x) for x in g))
    if key not in model._cache:
        model._cache[key] = _tree_terms(model, g, q, u)
    M, Fr, f, Js = model._cache[key]
    udot = sp.Matrix([sp.Symbol(f"{s.name}_dot") for s in u])
    qd = u[6:, 0] if model.floating else u
    gt = tuple(float(x) if x.is_Number else x for x in g)
    return q, u, udot, M, f, Fr, qd, gt, Js
