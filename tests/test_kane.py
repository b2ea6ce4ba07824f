"""Tests of robodyn.kane and robodyn.kane: Kane's equations against our Lagrange equations,
sympy.physics.mechanics.KanesMethod (built by hand), the numeric ABA, a Lagrange-multiplier
solution of the constrained arm; linearization against finite differences and the double
pendulum's closed-form frequencies; the flexible link against Euler-Bernoulli beam theory."""
import numpy as np
import pytest
import sympy as sp
from sympy.physics import mechanics as me

import robodyn as rd
from robodyn import dynamics, kane, lagrange, models
from robodyn.lagrange import _derivation

G = (0, -9.81, 0)
L1, L2, M1, M2 = sp.symbols("l1 l2 m1 m2")
VALUES = {"l1": 0.9, "l2": 0.7, "m1": 1.3, "m2": 0.8}


def _rot(a):
    return sp.Matrix([[sp.cos(a), -sp.sin(a), 0], [sp.sin(a), sp.cos(a), 0], [0, 0, 1]])


# --------------------------------------------------------------------------
# references
# --------------------------------------------------------------------------

def mechanics_form(kind):
    """KanesMethod for the RR or RP arm of robodyn.models (rods, gravity -y), converted to a
    MassMatrixForm in plain symbols (joint torques / force as inputs)."""
    q = me.dynamicsymbols("q1:3")
    u = me.dynamicsymbols("u1:3")
    T = sp.symbols("T1:3")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    A = N.orientnew("A", "Axis", [q[0], N.z])
    A.set_ang_vel(N, u[0] * N.z)
    CA = O.locatenew("CA", L1 / 2 * A.x)
    CA.v2pt_theory(O, N, A)
    if kind == "RR":
        B = A.orientnew("B", "Axis", [q[1], A.z])
        B.set_ang_vel(N, (u[0] + u[1]) * N.z)
        J = O.locatenew("J", L1 * A.x)
        J.v2pt_theory(O, N, A)
        CB = J.locatenew("CB", L2 / 2 * B.x)
        CB.v2pt_theory(J, N, B)
        loads = [(A, (T[0] - T[1]) * N.z), (B, T[1] * N.z)]
    else:                                       # the sliding rod's centre at (q2 + l2/2) A.x
        B = A.orientnew("B", "Axis", [0, A.z])
        B.set_ang_vel(N, u[0] * N.z)
        CB = O.locatenew("CB", (q[1] + L2 / 2) * A.x)
        CB.set_vel(N, CB.pos_from(O).dt(N).subs(sp.Derivative(q[0]), u[0]).subs(
            sp.Derivative(q[1]), u[1]))
        loads = [(A, T[0] * N.z), (CB, T[1] * A.x), (CA, -T[1] * A.x)]
    bodies = [me.RigidBody("RA", CA, A, M1, (me.inertia(A, 0, M1 * L1**2 / 12, M1 * L1**2 / 12),
                                             CA)),
              me.RigidBody("RB", CB, B, M2, (me.inertia(B, 0, M2 * L2**2 / 12, M2 * L2**2 / 12),
                                             CB))]
    loads += [(CA, -M1 * sp.Float(9.81) * N.y), (CB, -M2 * sp.Float(9.81) * N.y)]
    km = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[q[i].diff() - u[i] for i in range(2)])
    km.kanes_equations(bodies, loads)
    qs, us = sp.symbols("q1:3"), sp.symbols("u1:3")
    sub = dict(zip(q, qs)) | dict(zip(u, us))
    Mk = km.mass_matrix.xreplace(sub)
    fk = km.forcing.xreplace(sub)
    Bk = fk.jacobian(T)
    return rd.mass_matrix_form(qs, us, Mk, fk.xreplace({t: 0 for t in T}), input_matrix=Bk)


def rr_bodies(speeds=None, constraints=(), with_inputs=True):
    q1, q2, u1, u2, g, T1, T2 = sp.symbols("q1 q2 u1 u2 g T1 T2")
    A = kane.RigidBody("A", M1, [L1 / 2 * sp.cos(q1), L1 / 2 * sp.sin(q1), 0], _rot(q1),
                       sp.diag(0, M1 * L1**2 / 12, M1 * L1**2 / 12))
    B = kane.RigidBody("B", M2, [L1 * sp.cos(q1) + L2 / 2 * sp.cos(q1 + q2),
                                 L1 * sp.sin(q1) + L2 / 2 * sp.sin(q1 + q2), 0], _rot(q1 + q2),
                       sp.diag(0, M2 * L2**2 / 12, M2 * L2**2 / 12))
    loads = [kane.Force(A.position, [0, -M1 * g, 0]), kane.Force(B.position, [0, -M2 * g, 0]),
             kane.Torque("A", [0, 0, T1 - T2]), kane.Torque("B", [0, 0, T2])]
    return kane.kanes_equations([q1, q2], [u1, u2], [A, B], loads, speeds=speeds,
                                constraints=constraints, inputs=[T1, T2])


# --------------------------------------------------------------------------
# Kane = Lagrange = KanesMethod
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["RR", "RP"])
def test_chain_equals_lagrange_symbolically(kind):
    chain = (models.planar_rr if kind == "RR" else models.planar_rp)(L1, L2, M1, M2)
    k = kane.equations_of_motion(chain, gravity=G, u=sp.symbols("qd1:3"))
    lg = lagrange.equations_of_motion(chain, gravity=G)
    assert sp.expand(k.M - lg.M) == sp.zeros(2, 2)
    assert sp.expand(k.f - lg.forcing) == sp.zeros(2, 1)


@pytest.mark.parametrize("kind", ["RR", "RP"])
def test_chain_equals_kanes_method(kind):
    chain = (models.planar_rr if kind == "RR" else models.planar_rp)(L1, L2, M1, M2)
    ours = kane.equations_of_motion(chain, gravity=G)
    ref = mechanics_form(kind)
    assert rd.max_difference(ours, ref, values=VALUES) < 1e-12
    if kind == "RR":        # same speeds (u = qd): the mass matrices agree symbolically
        assert sp.simplify(ours.M - ref.mass_matrix) == sp.zeros(2, 2)


def test_general_method_rr_equals_chain_and_kanes_method():
    k = rr_bodies()
    vals = dict(VALUES, g=9.81)
    chain = kane.equations_of_motion(models.planar_rr(L1, L2, M1, M2), gravity=G)
    assert rd.max_difference(k, chain, values=vals) < 1e-12
    assert rd.max_difference(k, mechanics_form("RR"), values=vals) < 1e-12
    # intermediate quantities of §6.3
    q1, q2, u1, u2 = sp.symbols("q1 q2 u1 u2")
    assert sp.simplify(k.angular_velocities["B"] - sp.Matrix([0, 0, u1 + u2])) == sp.zeros(3, 1)
    assert k.partial_angular_velocities["B"] == sp.Matrix([[0, 0], [0, 0], [1, 1]])
    vB = k.velocities["B"]
    assert sp.expand(vB - k.partial_velocities["B"] * sp.Matrix([u1, u2])) == sp.zeros(3, 1)
    assert sp.simplify(k.M - chain.M) == sp.zeros(2, 2)
    assert len(k.equations()) == 2


def test_general_method_other_speeds():
    """u2 = q1d + q2d (absolute angular velocity of B): same motion, simpler M."""
    k = rr_bodies(speeds=[[1, 0], [1, 1]])
    assert k.M[0, 1] == k.M[1, 0] and not k.M[0, 0].has(L2)
    vals = dict(VALUES, g=9.81)
    assert rd.max_difference(k, rr_bodies(), values=vals) < 1e-12
    chain = kane.equations_of_motion(models.planar_rr(L1, L2, M1, M2), gravity=G,
                                     speeds=[[1, 0], [1, 1]])
    assert rd.max_difference(chain, k, values=vals) < 1e-12


@pytest.mark.parametrize("n, seed", [(1, 11), (2, 12), (3, 13), (4, 14), (5, 15), (6, 18)])
def test_random_chains_equal_aba(n, seed):
    """Kane's equations of random spatial chains (revolute and prismatic joints, 6 axis
    directions at n = 6: f has thousands of terms) give the accelerations of the ABA."""
    chain = models.random_chain(n, np.random.default_rng(seed), prismatic=0.3)
    k = kane.equations_of_motion(chain, gravity=(0, 0, -9.81))
    num = k.numeric()
    rng = np.random.default_rng(n)
    for _ in range(3):
        q, qd, tau = rng.uniform(-1, 1, (3, n))
        ref = dynamics.forward_dynamics(chain, q, qd, tau, gravity=(0, 0, -9.81))
        assert np.allclose(num.accelerations(q, qd, 0.0, tau), ref, atol=1e-9)
    if n >= 3:                                    # and Lagrange's equations (Part II)
        lg = lagrange.equations_of_motion(chain, gravity=(0, 0, -9.81))
        assert rd.max_difference(num, lg.numeric(), n_states=3) < 1e-9


@pytest.mark.parametrize("n, seed, helical", [(3, 11, 0.4), (3, 2, 0.0)])
def test_random_chains_equal_kanes_method(n, seed, helical):
    """Ours against sympy.physics.mechanics.KanesMethod on random spatial chains with revolute,
    prismatic and helical joints: M and f at random states (simplifying the difference of
    expressions this long would take far longer than evaluating it). KanesMethod needs 30 s
    and more from 4 random joints on, so longer chains are checked against Lagrange and the
    ABA above."""
    from test_derivation import kane_equations as kanes_method
    chain = models.random_chain(n, np.random.default_rng(seed), prismatic=0.3, helical=helical)
    g = (0.3, 0.0, -9.81)
    ours = kane.equations_of_motion(chain, gravity=g)
    Mk, fk = kanes_method(chain, g)
    qs = sp.symbols(f"q1:{n + 1}")
    fk = fk.xreplace(dict(zip(sp.symbols(f"qd1:{n + 1}"), ours.u)))
    rng = np.random.default_rng(n)
    for _ in range(2):
        env = dict(zip(ours.q, rng.uniform(-1, 1, n))) | dict(zip(ours.u, rng.uniform(-1, 1, n)))
        envk = env | dict(zip(qs, [env[x] for x in ours.q]))
        dM = np.array((ours.M.xreplace(env) - Mk.xreplace(envk)), float)
        df = np.array((ours.f.xreplace(env) - fk.xreplace(envk)), float)
        assert np.abs(dM).max() < 1e-11 and np.abs(df).max() < 1e-10


@pytest.mark.parametrize("n", [2])
def test_random_chain_equals_lagrange(n):
    chain = models.random_chain(n, np.random.default_rng(n), prismatic=0.3, helical=0.3)
    k = kane.equations_of_motion(chain, gravity=(0, 0, -9.81))
    lg = lagrange.equations_of_motion(chain, gravity=(0, 0, -9.81))
    assert rd.max_difference(k, lg, n_states=4) < 1e-9


def test_planar_chain_symbolic_is_exact():
    chain = models.planar_chain(4, sp.Symbol("l"), sp.Symbol("m"))
    k = kane.equations_of_motion(chain, gravity=G)
    lg = lagrange.equations_of_motion(chain, gravity=G)
    assert sp.expand(k.M - lg.M) == sp.zeros(4, 4)
    qd = sp.symbols("u1:5")
    assert sp.expand(k.f - lg.forcing.xreplace(dict(zip(lg.qd, qd)))) == sp.zeros(4, 1)


def test_partial_velocities_of_chain_are_body_jacobian_columns():
    chain = models.planar_rr(L1, L2, M1, M2)
    k = kane.equations_of_motion(chain, gravity=G)
    J = k.partial_velocities(1)
    assert J.shape == (6, 2)
    assert sp.simplify(J[2, :] - sp.Matrix([[1, 1]])) == sp.zeros(1, 2)   # omega_r of link 2


def test_change_speeds_on_lagrange_form():
    lg = lagrange.equations_of_motion(models.planar_rr(), gravity=G)
    q1 = lg.q[0]
    W = sp.Matrix([[1, 0], [1, 1]])
    new = kane.change_speeds(lg, W)
    assert rd.max_difference(lg, new) < 1e-12
    assert new.input_matrix == W.inv().T
    assert sp.simplify(new.kinematics - W.inv() * new.u) == sp.zeros(2, 1)
    with pytest.raises(ValueError, match="not invertible"):
        kane.change_speeds(lg, [[1, 1], [1, 1]])
    with pytest.raises(ValueError, match="expected an 2 x 2"):
        kane.change_speeds(lg, [[1, 0]])
    with pytest.raises(TypeError, match="MassMatrixForm"):
        kane.change_speeds("eom", W)
    assert new.q[0] == q1


# --------------------------------------------------------------------------
# constraints: the RR tip in a horizontal slot (tip velocity along y is zero)
# --------------------------------------------------------------------------

def _slot():
    q1, q2, u1, u2 = sp.symbols("q1 q2 u1 u2")
    tip_y = L1 * sp.sin(q1) + L2 * sp.sin(q1 + q2)
    vy = tip_y.diff(q1) * u1 + tip_y.diff(q2) * u2
    return rr_bodies(constraints=[vy]), tip_y


def _admissible(rng, vals):
    q = rng.uniform(-0.8, 0.8, 2)
    l1, l2 = vals["l1"], vals["l2"]
    u1 = rng.uniform(-1, 1)
    u2 = -u1 * (l1 * np.cos(q[0]) + l2 * np.cos(q[0] + q[1])) / (l2 * np.cos(q[0] + q[1]))
    return q, np.array([u1, u2])


def test_constrained_slot_equals_lagrange_multipliers():
    kc, tip_y = _slot()
    assert kc.u.shape == (1, 1) and kc.q.shape == (2, 1)
    assert set(kc.dependent_speeds) == {sp.Symbol("u2")}
    vals = dict(VALUES, g=9.81)
    num = kc.numeric(vals)
    lg = lagrange.equations_of_motion(models.planar_rr(L1, L2, M1, M2), gravity=G)
    ln = lg.numeric({k: v for k, v in VALUES.items()}, backend="lambdify")
    q1, q2 = sp.symbols("q1 q2")
    sub = {sp.Symbol(k): v for k, v in VALUES.items()}
    a_row = sp.lambdify([q1, q2], sp.Matrix([[tip_y.diff(q1), tip_y.diff(q2)]]).xreplace(sub))
    H = sp.hessian(tip_y.xreplace(sub), [q1, q2])
    Hf = sp.lambdify([q1, q2], H)
    rng = np.random.default_rng(3)
    for _ in range(4):
        q, qd = _admissible(rng, VALUES)
        tau = rng.uniform(-1, 1, 2)
        a = np.array(a_row(*q), dtype=float).reshape(1, 2)
        Mq = ln.M(q)
        rhs = tau - ln.C(q, qd) @ qd - ln.G(q)
        kkt = np.block([[Mq, -a.T], [a, np.zeros((1, 1))]])
        sol = np.linalg.solve(kkt, np.concatenate([rhs, [-qd @ np.array(Hf(*q)) @ qd]]))
        qdd_ref, lam = sol[:2], sol[2]
        qdd = num.coordinate_accelerations(q, qd, 0.0, tau)
        assert np.allclose(qdd, qdd_ref, atol=1e-10)
        # the auxiliary speed recovers the slot force (= the multiplier)
        R = kc.constraint_force(q, num.speeds(q, qd), vals, tau)
        assert np.allclose(R, [lam], atol=1e-9)


def test_constrained_slot_equals_kanes_method():
    kc, _ = _slot()
    q = me.dynamicsymbols("q1:3")
    u = me.dynamicsymbols("u1:3")
    g = sp.Symbol("g")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    A = N.orientnew("A", "Axis", [q[0], N.z])
    A.set_ang_vel(N, u[0] * N.z)
    B = A.orientnew("B", "Axis", [q[1], A.z])
    B.set_ang_vel(N, (u[0] + u[1]) * N.z)
    CA = O.locatenew("CA", L1 / 2 * A.x)
    CA.v2pt_theory(O, N, A)
    J = O.locatenew("J", L1 * A.x)
    J.v2pt_theory(O, N, A)
    CB = J.locatenew("CB", L2 / 2 * B.x)
    CB.v2pt_theory(J, N, B)
    P = J.locatenew("P", L2 * B.x)
    P.v2pt_theory(J, N, B)
    bodies = [me.RigidBody("RA", CA, A, M1, (me.inertia(A, 0, M1 * L1**2 / 12, M1 * L1**2 / 12),
                                             CA)),
              me.RigidBody("RB", CB, B, M2, (me.inertia(B, 0, M2 * L2**2 / 12, M2 * L2**2 / 12),
                                             CB))]
    loads = [(CA, -M1 * g * N.y), (CB, -M2 * g * N.y)]
    km = me.KanesMethod(N, q_ind=q, u_ind=[u[0]], u_dependent=[u[1]],
                        kd_eqs=[q[i].diff() - u[i] for i in range(2)],
                        velocity_constraints=[P.vel(N).dot(N.y)])
    km.kanes_equations(bodies, loads)
    qs, us = sp.symbols("q1:3"), sp.symbols("u1:3")
    sub = dict(zip(q, qs)) | dict(zip(u, us))
    vals = {**{sp.Symbol(k): v for k, v in VALUES.items()}, g: 9.81}
    # KanesMethod's reduced equations: mass_matrix ud1 = forcing, with u2 = u2(u1)
    Mk = sp.lambdify(qs + us, km.mass_matrix.xreplace(sub).xreplace(vals))
    fk = sp.lambdify(qs + us, km.forcing.xreplace(sub).xreplace(vals))
    num = kc.numeric({**VALUES, "g": 9.81})
    rng = np.random.default_rng(5)
    for _ in range(4):
        q0, u0 = _admissible(rng, VALUES)
        ud_ref = np.linalg.solve(np.array(Mk(*q0, *u0), float), np.array(fk(*q0, *u0), float))
        ud = num.accelerations(q0, u0[:1], 0.0, np.zeros(2))
        assert np.allclose(ud, ud_ref.ravel()[:1], atol=1e-10)   # KanesMethod: (u1d, u2d)


def test_constraint_errors():
    q1, q2, u1, u2 = sp.symbols("q1 q2 u1 u2")
    with pytest.raises(ValueError, match="remove all freedom"):
        rr_bodies(constraints=[u1, u2])
    with pytest.raises(ValueError, match="linear in the speeds"):
        rr_bodies(constraints=[u2**2 - u1])
    with pytest.raises(ValueError, match="not invertible"):
        rr_bodies(constraints=[u1])           # the last speed u2 does not appear
    with pytest.raises(ValueError, match="not invertible in the rates"):
        rr_bodies(speeds=[[1, 1], [2, 2]])


def test_kanes_equations_input_errors():
    q, u = sp.symbols("q u")
    P = kane.Particle("P", 1, [sp.cos(q), sp.sin(q), 0])
    with pytest.raises(TypeError, match="plain sympy Symbols"):
        kane.kanes_equations([sp.Function("q")(sp.Symbol("t"))], [u], [P])
    with pytest.raises(TypeError, match="Particle or RigidBody"):
        kane.kanes_equations([q], [u], ["P"])
    with pytest.raises(ValueError, match="bodies with distinct names"):
        kane.kanes_equations([q], [u], [P, P])
    with pytest.raises(ValueError, match="Torque on 'X'"):
        kane.kanes_equations([q], [u], [P], [kane.Torque("X", [0, 0, 1])])
    with pytest.raises(ValueError, match="speeds: needed"):
        kane.kanes_equations([q, sp.Symbol("p")], [u], [P])
    with pytest.raises(ValueError, match="expected a 3-vector"):
        kane.Particle("P", 1, [1, 2])
    with pytest.raises(ValueError, match="symmetric"):
        kane.RigidBody("B", 1, [0, 0, 0], sp.eye(3), [[1, 2, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(TypeError, match="SerialChain"):
        kane.equations_of_motion("RR")
    with pytest.raises(ValueError, match="expected 2 symbols"):
        kane.equations_of_motion(models.planar_rr(), q=sp.symbols("a b c"))


# --------------------------------------------------------------------------
# linearization
# --------------------------------------------------------------------------

def _fd_jacobian(num, x0, tau0, h=1e-6):
    n = len(x0)
    f0 = num.rhs(0.0, x0, tau0)
    A = np.zeros((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        A[:, j] = (num.rhs(0.0, x0 + e, tau0) - num.rhs(0.0, x0 - e, tau0)) / (2 * h)
    return A, f0


@pytest.mark.parametrize("method", ["kane", "lagrange"])
def test_linearize_equals_finite_differences(method):
    chain = models.planar_rr(L1, L2, M1, M2)
    eom = (kane.equations_of_motion(chain, gravity=G) if method == "kane"
           else lagrange.equations_of_motion(chain, gravity=G))
    for q0 in ([-np.pi / 2, 0.0], [np.pi / 2, 0.0], [-np.pi / 2, np.pi]):
        lin = kane.linearize(eom, q0, values=VALUES)
        A, B = lin.numeric()
        Afd, _ = _fd_jacobian(eom.numeric(VALUES), np.array(q0 + [0, 0]), np.zeros(2))
        assert np.allclose(A, Afd, atol=1e-6)
        assert B.shape == (4, 2)
    # a moving state, with equilibrium=False
    x0 = np.array([0.3, -0.4, 0.5, 0.2])
    lin = kane.linearize(eom, x0[:2], x0[2:], tau0=[0.1, -0.2], values=VALUES, equilibrium=False)
    Afd, _ = _fd_jacobian(eom.numeric(VALUES), x0, np.array([0.1, -0.2]))
    assert np.allclose(lin.numeric()[0], Afd, atol=1e-6)


def test_linearize_symbolic_and_the_torque_that_holds_a_pose():
    eom = kane.equations_of_motion(models.planar_rr(L1, L2, M1, M2), gravity=G)
    lin = kane.linearize(eom, [-sp.pi / 2, 0])
    assert lin.A.free_symbols == {L1, L2, M1, M2}
    # holding q = (0, 0) needs the gravity torque
    tau0 = -eom.f.xreplace({s: 0 for s in list(eom.q) + list(eom.u)})
    lin = kane.linearize(eom, [0, 0], tau0=list(tau0))
    assert lin.B.shape == (4, 2)
    with pytest.raises(ValueError, match="not an equilibrium"):
        kane.linearize(eom, [0, 0])
    with pytest.raises(ValueError, match="not an equilibrium"):
        kane.linearize(eom, [-sp.pi / 2, 0], u0=[1, 0], values=VALUES)
    with pytest.raises(TypeError, match="MassMatrixForm"):
        kane.linearize(models.planar_rr(), [0, 0])
    with pytest.raises(ValueError, match="q0"):
        kane.linearize(eom, [0, 0, 0])
    with pytest.raises(ValueError, match="have no value"):
        lin.numeric()


def test_double_pendulum_frequencies_closed_form():
    """Point masses m1, m2 on massless rods l1, l2 (Kane's method, two particles):
    omega^2 = g (m1+m2)(l1+l2)/(2 m1 l1 l2) * (1 -+ sqrt(1 - 4 m1 l1 l2/((m1+m2)(l1+l2)^2)))."""
    q1, q2, u1, u2, g = sp.symbols("q1 q2 u1 u2 g")
    P1 = kane.Particle("P1", M1, [L1 * sp.sin(q1), -L1 * sp.cos(q1), 0])
    P2 = kane.Particle("P2", M2, [L1 * sp.sin(q1) + L2 * sp.sin(q2),
                                  -L1 * sp.cos(q1) - L2 * sp.cos(q2), 0])
    k = kane.kanes_equations([q1, q2], [u1, u2], [P1, P2],
                             [kane.Force(P1.position, [0, -M1 * g, 0]),
                              kane.Force(P2.position, [0, -M2 * g, 0])])
    for vals in ({"l1": 1.0, "l2": 1.0, "m1": 1.0, "m2": 1.0, "g": 9.81},
                 {"l1": 0.7, "l2": 1.3, "m1": 2.0, "m2": 0.5, "g": 9.81}):
        ev = kane.linearize(k, [0, 0], values=vals).eigenvalues()
        w = np.sort(np.abs(ev.imag))[::2]
        m1, m2, l1, l2, gg = (vals[s] for s in ("m1", "m2", "l1", "l2", "g"))
        s = (m1 + m2) * (l1 + l2) ** 2
        root = np.sqrt(1 - 4 * m1 * l1 * l2 / s)
        ref = np.sqrt(gg * (m1 + m2) * (l1 + l2) / (2 * m1 * l1 * l2) * np.array([1 - root,
                                                                                  1 + root]))
        assert np.allclose(w, ref, rtol=1e-10)
        assert np.allclose(ev.real, 0, atol=1e-9)


# --------------------------------------------------------------------------
# the flexible link
# --------------------------------------------------------------------------

def test_beam_roots_satisfy_their_equations():
    b = kane.clamped_free_roots(6)
    assert np.allclose(np.cos(b) * np.cosh(b) + 1, 0, atol=1e-6 * np.cosh(b))
    assert np.allclose(b[:3], [1.8751, 4.6941, 7.8548], atol=5e-5)
    p = kane.pinned_free_roots(6)
    assert np.allclose(np.tan(p), np.tanh(p), atol=1e-9)
    assert np.allclose(p[:3], [3.9266, 7.0686, 10.2102], atol=5e-5)


def test_mode_integrals_by_beam_theory():
    link = kane.flexible_link(6)
    Mphi = link.integrals["rho phi phi"]
    assert np.allclose(Mphi, np.eye(6), atol=1e-9)             # orthonormal modes, rho L = 1
    K = link.integrals["EI phi'' phi''"]
    assert np.allclose(K, np.diag(link.betas ** 4), rtol=1e-8, atol=1e-6)
    assert np.allclose(np.abs(link.integrals["phi(L)"]), 2.0, atol=1e-9)
    # boundary conditions: phi(0) = phi'(0) = 0, phi''(L) = 0
    for b in link.betas:
        assert abs(kane.mode_shape(b, 1.0, 0.0)) < 1e-9
        assert abs(kane.mode_shape(b, 1.0, 0.0, 1)) < 1e-8
        assert abs(kane.mode_shape(b, 1.0, 1.0, 2)) < 1e-6 * b ** 2


@pytest.mark.parametrize("N", [1, 2, 3, 4, 5, 6])
def test_flexible_link_frequencies_converge(N):
    L, EI, rho = 1.2, 3.0, 0.8
    scale = np.sqrt(EI / (rho * L ** 4))
    clamped = np.sqrt(kane.natural_frequencies(
        kane.flexible_link(N, 1e9, L, EI, rho)) / scale)
    assert np.allclose(clamped, kane.clamped_free_roots(N), rtol=1e-6)
    free = np.sqrt(kane.natural_frequencies(kane.flexible_link(N, 0.0, L, EI, rho))
                   / scale)
    pinned = kane.pinned_free_roots(N)
    assert np.all(free >= pinned - 1e-6)                         # Rayleigh-Ritz: from above
    if N >= 3:
        assert abs(free[0] - pinned[0]) < 1e-3
    if N >= 5:
        assert np.allclose(free[:3], pinned[:3], rtol=2e-3)


def test_flexible_link_is_kane_with_the_hub_torque():
    link = kane.flexible_link(2, hub_inertia=0.5, tip_mass=0.1)
    assert link.B == sp.Matrix([1, 0, 0])
    zero = {s: 0 for s in list(link.q) + list(link.u)}
    M0 = np.array(link.M.xreplace(zero).evalf(), float)
    assert np.all(np.linalg.eigvalsh(M0) > 0)
    # M_00 = J_h + rho L^3/3 + m_tip L^2 at rest
    assert np.isclose(M0[0, 0], 0.5 + 1 / 3 + 0.1)
    num = link.numeric()
    x = np.array([0.1, 0.01, -0.002, 0.5, 0.1, 0.0])
    assert np.all(np.isfinite(num.rhs(0.0, x, [1.0])))
    assert np.allclose(link.deflection([0.01, 0.0], [1.0]), [0.01 * link.integrals["phi(L)"][0]])


def test_flexible_errors():
    with pytest.raises(ValueError, match="n_modes"):
        kane.flexible_link(0)
    with pytest.raises(ValueError, match="n_modes"):
        kane.flexible_link(13)
    with pytest.raises(ValueError, match="length"):
        kane.flexible_link(2, length=-1)
    with pytest.raises(ValueError, match="hub_inertia"):
        kane.flexible_link(2, hub_inertia=-1)
    with pytest.raises(TypeError, match="FlexibleLink"):
        kane.natural_frequencies(models.planar_rr())
    with pytest.raises(ValueError, match="derivative"):
        kane.mode_shape(1.8751, 1.0, 0.5, 3)


def test_six_joint_spatial_arm_equals_aba():
    chain = models.ur5_like()
    num = kane.equations_of_motion(chain).numeric()
    rng = np.random.default_rng(6)
    for _ in range(3):
        q, qd, tau = rng.uniform(-1, 1, (3, 6))
        assert np.allclose(num.accelerations(q, qd, 0.0, tau),
                           dynamics.forward_dynamics(chain, q, qd, tau), atol=1e-9)


def test_momentum_shortcut_gives_the_same_equations(monkeypatch):
    """The sweep forms v x (I_vw w) instead of v x h_v (v x m v = 0); the general product
    gives the same equations."""
    chain = models.random_chain(3, np.random.default_rng(21), prismatic=0.3)
    fast = kane.equations_of_motion(chain, gravity=(0, 0, -9.81))
    monkeypatch.setattr(kane._method, "_mass_block", lambda ring, G: False)
    chain = models.random_chain(3, np.random.default_rng(21), prismatic=0.3)
    slow = kane.equations_of_motion(chain, gravity=(0, 0, -9.81))
    assert rd.max_difference(fast, slow, n_states=4) < 1e-12


# --------------------------------------------------------------------------
# the nested form (long spatial chains): named intermediates, same equations
# --------------------------------------------------------------------------

def spatial_rods(n):
    """n rods along x with symbolic lengths and masses, joint axes z, y, y, x, y, x, z, ...:
    three axis directions, so the derivation is nested from 8 joints on (as Lagrange's)."""
    ls, ms = sp.symbols(f"l1:{n + 1}"), sp.symbols(f"m1:{n + 1}")
    axes = [[0, 0, 1], [0, 1, 0], [0, 1, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0]]
    S, homes, x = [], [], sp.Integer(0)
    for i in range(n):
        S.append(sp.Matrix(rd.revolute_screw([sp.Integer(a) for a in axes[i % 6]], [x, 0, 0])))
        homes.append(rd.homogeneous(sp.eye(3), [x + ls[i] / 2, 0, 0]))
        x = x + ls[i]
    return rd.SerialChain.from_screws(np.array(sp.Matrix.hstack(*S).tolist(), dtype=object),
                                      rd.homogeneous(sp.eye(3), [x, 0, 0]), homes,
                                      [models.rod_inertia(m, l) for m, l in zip(ms, ls)])


@pytest.mark.parametrize("make", [lambda: models.planar_rr(L1, L2, M1, M2),
                                  lambda: models.planar_rp(L1, L2, M1, M2)])
def test_nested_form_equals_expanded_symbolically(make):
    g = (0.5, -9.81, 0.25)
    nested = kane.equations_of_motion(make(), gravity=g, form="nested")
    expanded = kane.equations_of_motion(make(), gravity=g, form="expanded")
    assert nested.intermediates and not expanded.intermediates
    full = nested.explicit()
    for X, Y in ((full.M, expanded.M), (full.f, expanded.f),
                 (full.active_forces, expanded.active_forces)):
        diff = list(X - Y)
        assert _derivation.canonical(diff, nested.q) == [0] * len(diff)


def test_nested_form_equals_kanes_method():
    from test_derivation import kane_equations as kanes_method
    chain = models.random_chain(3, np.random.default_rng(11), prismatic=0.3, helical=0.4)
    g = (0.3, 0.0, -9.81)
    ours = kane.equations_of_motion(chain, gravity=g, form="nested").explicit()
    Mk, fk = kanes_method(chain, g)
    fk = fk.xreplace(dict(zip(sp.symbols("qd1:4"), ours.u)))
    rng = np.random.default_rng(3)
    for _ in range(2):
        env = dict(zip(ours.q, rng.uniform(-1, 1, 3))) | dict(zip(ours.u, rng.uniform(-1, 1, 3)))
        assert np.abs(np.array((ours.M - Mk).xreplace(env), float)).max() < 1e-12
        assert np.abs(np.array((ours.f - fk).xreplace(env), float)).max() < 1e-12


def test_spatial_eight_joints_nested_equals_lagrange():
    """The 8-joint chain with symbolic parameters: Kane's nested form (what "auto" picks, as
    Lagrange does) gives Lagrange's M and forcing at random states and parameters to 1e-12
    (relative), and its speeds can be changed."""
    k = kane.equations_of_motion(spatial_rods(8), gravity=(0, 0, -9.81))
    lg = lagrange.equations_of_motion(spatial_rods(8), gravity=(0, 0, -9.81))
    assert k.intermediates and lg.intermediates
    rng = np.random.default_rng(8)
    values = {str(s): v for s, v in zip(k.parameters(), rng.uniform(0.5, 1.5, 16))}
    nk, nl = k.numeric(values), lg.numeric(values, backend="lambdify")
    for _ in range(3):
        q, u = rng.uniform(-np.pi, np.pi, (2, 8))
        Ml, fl = nl.mass_matrix(q), nl.forcing(q, u)
        assert np.abs(nk.mass_matrix(q) - Ml).max() <= 1e-12 * np.abs(Ml).max()
        assert np.abs(nk.forcing(q, u) - fl).max() <= 1e-12 * np.abs(fl).max()
    W = sp.eye(8) + sp.Matrix(8, 8, lambda i, j: 1 if j == i - 1 else 0)
    assert rd.max_difference(kane.change_speeds(k, W), nk, values=values, n_states=2) < 1e-9


def test_form_errors():
    with pytest.raises(ValueError, match="form: expected 'auto', 'expanded' or 'nested'"):
        kane.equations_of_motion(models.planar_rr(), form="tape")
