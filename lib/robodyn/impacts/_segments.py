"""The machinery of :func:`robodyn.impacts.simulate_hybrid` (private): the surfaces' rows,
the free-flight right-hand side, one integration segment with its event location, the contact
modes (constrained motion, eq. iv-contact-modes) and the choice of the active contact set.
A room of :mod:`robodyn.impacts`: one smooth piece of a hybrid motion, shared by the
impact map's simulation and Moreau--Jean time stepping."""
from __future__ import annotations

import numpy as np
from scipy.integrate import BDF, DOP853, LSODA, RK23, RK45, Radau
from scipy.optimize import brentq

from .. import _value_checks
from ._contact import solve_modes


def _jac(surface, q, n):
    Jr = np.asarray(surface.jacobian(q), dtype=float).reshape(-1)
    if Jr.shape != (n,):
        raise _value_checks.refusal(ValueError, f"simulate_hybrid: surface {surface.name!r}: jacobian(q) must return "
                         f"{n} numbers, returned shape {Jr.shape}")
    if not Jr.any():
        raise _value_checks.refusal(ValueError, f"simulate_hybrid: surface {surface.name!r}: jacobian: expected a "
                         f"nonzero normal row dphi/dq, got the zero row at q = "
                         f"{np.asarray(q).tolist()} (a contact without a normal direction lets "
                         f"the body pass through)")
    return Jr


def _tangent_row(surface, q, n):
    if surface.tangent is None:
        return np.zeros(n)
    Jt = np.asarray(surface.tangent(q), dtype=float).reshape(-1)
    if Jt.shape != (n,):
        raise _value_checks.refusal(
            ValueError, f"simulate_hybrid: surface {surface.name!r}: tangent(q) must return "
                        f"{n} numbers, returned shape {Jt.shape}")
    return Jt


def _row_rate(fn, q, qd, n):
    """:math:`\\dot J\\dot q` of a row function J(q) by a central difference along qd."""
    s = float(np.linalg.norm(qd))
    if s == 0.0:
        return 0.0
    h = 1e-6 / s * max(1.0, float(np.linalg.norm(q)))
    a = np.asarray(fn(q + h * qd), dtype=float).reshape(-1)
    b = np.asarray(fn(q - h * qd), dtype=float).reshape(-1)
    return float((a - b) @ qd / (2 * h))


def _free_rhs(form, n):
    """The right-hand side (qd, M^-1 f) of free flight. For one or two coordinates of a
    lambdified form, in plain floats (the form's flat functions, M solved by Cramer's rule):
    no array per call but the result. Any arithmetic trouble (a domain error, a singular M)
    falls back to the general path, which raises the form's own error."""
    M_of, f_of, solve = form.mass_matrix, form.forcing, np.linalg.solve

    def general(tt, y):
        q_, v_ = y[:n], y[n:]
        return np.concatenate([v_, solve(M_of(q_, tt), f_of(q_, v_, tt))])
    flat = getattr(form, "flat", None)
    if flat is None or n > 2:
        return general
    fM, ff = flat
    if n == 1:
        def rhs(tt, y):
            q0, v0 = y.tolist()
            try:
                return np.array((v0, ff(q0, v0, tt)[0] / fM(q0, tt)[0]))
            except (ArithmeticError, ValueError, TypeError):
                return general(tt, y)
        return rhs

    def rhs(tt, y):
        a, b, c, d = y.tolist()
        try:
            m00, m01, m10, m11 = fM(a, b, tt)
            f0, f1 = ff(a, b, c, d, tt)
            det = m00 * m11 - m01 * m10
            out = np.array((c, d, (m11 * f0 - m01 * f1) / det, (m00 * f1 - m10 * f0) / det))
        except (ArithmeticError, ValueError, TypeError):
            return general(tt, y)
        return out if det > 0 else general(tt, y)   # M is positive definite: det > 0
    return rhs


_SOLVERS = {"RK23": RK23, "RK45": RK45, "DOP853": DOP853, "Radau": Radau, "BDF": BDF,
            "LSODA": LSODA}


def _segment(rhs, t, y, t_end, watch, cls, opts, first_step, grid, budget, value):
    """Integrate y' = rhs from (t, y) to t_end, or to the first crossing of a watcher.

    ``watch(t, y) -> (g, r)``: watched values g (event when one reaches 0 from above) and their
    rates r (NaN where unknown). A crossing inside a step is found even when g > 0 at both ends:
    where the rate changes sign inside the step, its root (the extremum of g) is located on the
    dense output and g is tested there. Returns (ts, ys, k, steps, nfev): ``k`` the watcher
    fired (or None), the last sample is the event or t_end."""
    solver = cls(rhs, t, y, t_end, first_step=first_step, **opts)
    g_old, r_old = watch(t, y)
    ts, ys = [t], [y]
    steps = 0
    while solver.status == "running":
        if steps >= budget:
            return ts, ys, "max_steps", steps, solver.nfev
        msg = solver.step()
        steps += 1
        if solver.status == "failed" or not np.isfinite(solver.y).all():
            raise _value_checks.refusal(_value_checks.ResultError,
                f"simulate_hybrid: result: expected the integrator to advance with finite "
                f"numbers, got {'a failure' if solver.status == 'failed' else 'NaN or inf'} at "
                f"t = {solver.t:.6g} ({msg or 'the state overflowed'}): the state or the forces "
                f"are too large for float64 arithmetic, or the motion is too stiff for the "
                f"method")
        t0, t1, y1 = solver.t_old, solver.t, solver.y
        g_new, r_new = watch(t1, y1)
        dense = None
        best = None
        for k in range(len(g_new)):
            ga, gb = g_old[k], g_new[k]
            ra, rb = r_old[k], r_new[k]
            if gb > 0 and (ga <= 0 or not (ra < 0 < rb)):
                continue                      # no crossing, no dip between the ends
            if ga <= 0 and not (ra > 0 > rb):
                continue                      # started on/below: watched once it is above
            if dense is None:
                dense = solver.dense_output()

            def g(s, k=k):
                return value(k, s, dense(s))
            pts = [(t0, ga)]
            if ra * rb < 0:                   # an extremum of g inside the step

                def rate(s, k=k):
                    return watch(s, dense(s))[1][k]
                tx = brentq(rate, t0, t1, xtol=1e-15, rtol=1e-15, maxiter=400,
                            full_output=True, disp=False)[0]
                pts.append((tx, g(tx)))
            pts.append((t1, gb))
            for (s1, g1), (s2, g2) in zip(pts[:-1], pts[1:]):
                if g1 > 0 >= g2:
                    te = s2 if g2 == 0 else brentq(g, s1, s2, xtol=1e-15, rtol=1e-15,
                                                   maxiter=400, full_output=True,
                                                   disp=False)[0]
                    if best is None or te < best[0]:
                        best = (te, k)
                    break
        if grid is not None:
            inside = grid[(grid > t0) & (grid < (t1 if best is None else best[0]))]
            if inside.size:
                if dense is None:
                    dense = solver.dense_output()
                for s in inside:
                    ts.append(float(s))
                    ys.append(dense(s))
        if best is not None:
            te, k = best
            ts.append(te)
            ys.append(dense(te))
            return ts, ys, k, steps, solver.nfev
        ts.append(t1)
        ys.append(y1.copy())
        g_old, r_old = g_new, r_new
    return ts, ys, None, steps, solver.nfev


class _Contacts:
    """The active contact set of a constrained mode: surface indices, each with its friction
    status: 0 stick (or frictionless), +1/-1 sliding with that sign of the sliding velocity."""

    def __init__(self, system, status, baumgarte):
        self.system, self.status, self.w = system, dict(status), baumgarte
        self.idx = sorted(self.status)

    def solve(self, t, q, qd):
        """(qdd, lam_n, lam_t) of the mode (eq. iv-contact-modes)."""
        sysm, n = self.system, self.system.n
        M = sysm.form.mass_matrix(q, t)
        f = sysm.form.forcing(q, qd, t)
        if not self.idx:
            return np.linalg.solve(M, f), np.zeros(0), np.zeros(0)
        cols, rows, rhs, stick = [], [], [], []
        for i in self.idx:
            s = sysm.surfaces[i]
            Jn, Jt = _jac(s, q, n), _tangent_row(s, q, n)
            sg = self.status[i]
            cols.append(Jn - s.friction * sg * Jt)
            rows.append(Jn)
            ph, dph = float(s.phi(q)), float(Jn @ qd)
            rhs.append(-_row_rate(s.jacobian, q, qd, n) - 2 * self.w * dph - self.w ** 2 * ph)
            if sg == 0 and s.friction > 0 and s.tangent is not None:
                stick.append((i, Jt))
        for i, Jt in stick:
            cols.append(Jt)
            rows.append(Jt)
            s = sysm.surfaces[i]
            rhs.append(-_row_rate(s.tangent, q, qd, n) - self.w * float(Jt @ qd))
        D, R = np.array(cols), np.array(rows)
        k = len(rows)
        K = np.zeros((n + k, n + k))
        K[:n, :n], K[:n, n:], K[n:, :n] = M, -D.T, R
        b = np.concatenate([f, rhs])
        try:
            sol = np.linalg.solve(K, b)
        except np.linalg.LinAlgError:                 # dependent contacts: minimum norm
            sol = np.linalg.lstsq(K, b, rcond=1e-13)[0]
        lam = sol[n:]
        p = len(self.idx)
        lam_n, lam_t = lam[:p].copy(), np.zeros(p)
        for j, i in enumerate(self.idx):
            lam_t[j] = -self.system.surfaces[i].friction * self.status[i] * lam_n[j]
        for j, (i, _) in enumerate(stick):
            lam_t[self.idx.index(i)] = lam[p + j]
        return sol[:n], lam_n, lam_t


def _choose_mode(system, t, q, qd, candidates, slide_speed, tol=1e-9):
    """The contacts that stay closed, with their friction status, from the acceleration-level
    complementarity problem (eq. iv-contact-lcp at the acceleration level)."""
    n = system.n
    if not candidates:
        return {}
    cand = sorted(candidates)
    M = system.form.mass_matrix(q, t)
    f = system.form.forcing(q, qd, t)
    Minv = np.linalg.inv(M)
    Jn = np.array([_jac(system.surfaces[i], q, n) for i in cand])
    Jt = np.array([_tangent_row(system.surfaces[i], q, n) for i in cand])
    mu = np.array([system.surfaces[i].friction for i in cand])
    vt = Jt @ qd
    fixed = np.where(np.abs(vt) > slide_speed, np.sign(vt), 0.0)
    fixed[mu == 0] = 0.0
    cn = np.array([_row_rate(system.surfaces[i].jacobian, q, qd, n) for i in cand])
    ct = np.array([_row_rate(system.surfaces[i].tangent, q, qd, n)
                   if system.surfaces[i].tangent is not None else 0.0 for i in cand])
    out = solve_modes(Minv, Jn, Jt, mu, Minv @ f, cn, ct, fixed, tol, "simulate_hybrid",
                      open_first=True)
    if out is None:
        names = [system.surfaces[i].name for i in cand]
        raise RuntimeError(f"simulate_hybrid: contacts {names} at t = {t:.6g} s: no admissible "
                           f"contact mode (the contact problem is infeasible: Painleve-like "
                           f"friction or inconsistent constraints)")
    status = {}
    for i, m in zip(cand, out[3]):
        if m == "open":
            continue
        status[i] = 1 if m == "slide+" else -1 if m == "slide-" else 0
    return status


def _watchers(modes, free_s, closed, surfaces, n):
    """(watch, value) of one segment: ``watch(t, y) -> (g, r)`` the watched values (gaps of the
    free surfaces, normal forces of the closed ones, a sliding contact's velocity, a sticking
    contact's distance to the friction cone) and their rates (NaN where unknown);
    ``value(k, t, y)`` the k-th watched value alone."""
    def watch(tt, y):
        qq, vv = y[:n], y[n:]
        g = [s.phi(qq) for s in free_s]
        r = [s.jacobian(qq) @ vv for s in free_s]
        if closed:
            _, ln, lt = modes.solve(tt, qq, vv)
            for j, i in enumerate(closed):
                s = surfaces[i]
                g.append(ln[j])
                r.append(np.nan)
                if s.friction > 0 and s.tangent is not None:
                    sg = modes.status[i]
                    vt = float(_tangent_row(s, qq, n) @ vv)
                    g.append(sg * vt if sg else s.friction * ln[j] - abs(lt[j]))
                    r.append(np.nan)
        return np.array(g, dtype=float), np.array(r, dtype=float)

    def value(k, tt, y):
        if k < len(free_s):
            return free_s[k].phi(y[:n])
        return watch(tt, y)[0][k]
    return watch, value
