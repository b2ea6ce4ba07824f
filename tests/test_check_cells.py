"""The check cells of the book's chapters can fail: each test runs a chapter's cells, breaks the
chapter's claim once on purpose (one value changed in the notebook's namespace) and shows that
the chapter's own check cell then raises AssertionError. Passing runs of the unchanged check
cells are the notebook runs of CI (nbval)."""
import numpy as np
import pytest

from _notebook_cells import run_cells, run_check


def test_part3_02_spiral_wire_with_the_seeds_mass_matrix_fails():
    nb = "part3/02_coordinates.ipynb"
    ns = run_cells(nb, skip=("c04", "c12", "c16"))
    run_check(nb, ns)
    with pytest.raises(AssertionError):        # the seed's motion claimed to be the true one
        run_check(nb, ns, qdd_metric=ns["qdd_seed"])


@pytest.mark.slow
def test_part3_07_printed_37_taken_for_the_pin_force_fails():
    nb = "part3/07_comparing_methods.ipynb"
    ns = run_cells(nb, skip=("c11",))
    run_check(nb, ns)
    four = ns["four_methods"]

    def printed_everywhere(theta, omega):     # every method "agrees" with the printed (37)
        res = four(theta, omega)
        return {k: res["printed (37)"] for k in res}
    with pytest.raises(AssertionError):
        run_check(nb, ns, four_methods=printed_everywhere)


@pytest.mark.slow
def test_part3_06_a_route_that_slides_fails():
    nb = "part3/06_nonholonomic.ipynb"
    ns = run_cells(nb, skip=("c04", "c10", "c14"))
    run_check(nb, ns)
    S_num = ns["S_num"]
    # the wheels swapped in S: the route turns and moves as before, but the wheels slip
    ns["S_num"] = lambda q: np.asarray(S_num(q), float)[[0, 1, 2, 4, 3]]
    try:
        sliding = ns["park"](ns["STEP"], ns["CYCLES"])
    finally:
        ns["S_num"] = S_num
    with pytest.raises(AssertionError):
        run_check(nb, ns, route=sliding)


@pytest.mark.slow
def test_part3_04_a_projector_without_the_metric_fails():
    import types
    from robodyn import constraints
    nb = "part3/04_constraint_connection.ipynb"
    ns = run_cells(nb, skip=("c04", "c10", "c12"))
    run_check(nb, ns)

    def euclidean(M, A):                         # the projector of the identity metric
        return constraints.constraint_projector(np.eye(len(M)), A)
    broken = types.SimpleNamespace(**{**vars(constraints), "constraint_projector": euclidean})
    with pytest.raises(AssertionError):
        run_check(nb, ns, constraints=broken)


@pytest.mark.slow
def test_part3_05_the_identity_with_a_wrong_factor_fails():
    import types
    nb = "part3/05_udwadia_kalaba.ipynb"
    ns = run_cells(nb, skip=("c04", "c15"))
    run_check(nb, ns)
    # the upper factor L^T (M = L^T L, not L L^T): with M = 0.1 I nobody would notice
    linalg = types.SimpleNamespace(**{**vars(np.linalg),
                                      "cholesky": lambda M: np.linalg.cholesky(M).T})
    wrong_np = types.SimpleNamespace(**{**vars(np), "linalg": linalg})
    with pytest.raises(AssertionError):
        run_check(nb, ns, np=wrong_np)


@pytest.mark.slow
def test_part6_07_a_scheme_that_leaks_energy_fails():
    import dataclasses
    nb = "part6/07_energy_preserving.ipynb"
    ns = run_cells(nb, skip=("5181", "7db5", "1fc0", "1df6", "27bc"))
    run_check(nb, ns)
    em = ns["em"]
    leaky = em.x.copy()                       # joint momenta lose 0.01 % a step, unaccounted
    leaky[:, 21:24] *= (1 - 1e-4) ** np.arange(len(em.t))[:, None]
    with pytest.raises(AssertionError):
        run_check(nb, ns, em=dataclasses.replace(em, x=leaky))


@pytest.mark.slow
def test_part6_05_the_fixed_base_inertia_for_the_free_base_fails():
    nb = "part6/05_decoupled_form.ipynb"
    ns = run_cells(nb, skip=("98b1",))
    run_check(nb, ns)
    wrong = {**ns["P"], "M_hat": ns["Mm"]}    # the arm on a free base as heavy as on a fixed one
    with pytest.raises(AssertionError):
        run_check(nb, ns, P=wrong)


@pytest.mark.slow
def test_part2_06_the_panda_under_standard_gravity_fails():
    """The Panda's equations derived with standard gravity, 9.80665 m/s², where the check
    compares them with Pinocchio's 9.81: G differs by 0.03 %, and the check cell says so."""
    from robodyn import lagrange
    nb = "part2/06_real_robot.ipynb"
    ns = run_cells(nb, skip=("real-robot-08", "real-robot-21", "real-robot-23"))
    run_check(nb, ns)
    standard = lagrange.equations_of_motion(ns["chain"], gravity=(0, 0, -9.80665)).numeric()
    with pytest.raises(AssertionError):
        run_check(nb, ns, num=standard)
