"""What a rigid body's inertia is (a room of :mod:`robodyn.rigid_motion`): the checks of a
rotational inertia (symmetric, positive semidefinite, the triangle inequality) and of a spatial
inertia, for numbers and symbols alike, used by ``spatial_inertia`` and the chain builders."""
from __future__ import annotations

import numpy as np
import sympy as sp

from .. import _value_checks
from .. import _meaning_checks
from .._value_checks import is_symbolic


def _numbers(x):
    """A float array of ``x`` when it holds only numbers (numeric input, or sympy entries
    without free symbols), else None: so that the symbolic path makes the numeric path's checks
    wherever they can be made."""
    if not is_symbolic(x):
        return np.asarray(x, dtype=float)
    m = x if isinstance(x, sp.MatrixBase) else _value_checks.to_sympy(x) \
        if not isinstance(x, sp.Basic) else sp.Matrix([[x]])
    if m.free_symbols:
        return None
    return np.array(m.evalf(30).tolist(), dtype=float).reshape(m.shape)


def _check_rotational_inertia(m, I, name="spatial_inertia", args=None, tol=1e-12):
    """m: a float, or None when it is symbolic (then only I is checked). ``args``: the
    argument names (mass, inertia) for the messages, when they are two arguments."""
    mname, iname = (f"{name}: {args[0]}", f"{name}: {args[1]}") if args else (name, name)
    if m is not None and not m > 0:
        raise _value_checks.refusal(ValueError, f"{mname}: expected a positive mass, got {m!r}")
    name = iname
    if not np.allclose(I, I.T, atol=1e-12, rtol=1e-9):
        raise _value_checks.refusal(
            ValueError, f"{name}: expected a symmetric rotational inertia, got asymmetry "
                        f"{np.abs(I - I.T).max():.3g}")
    ev = np.linalg.eigvalsh(I)
    scale = max(ev.max(), 1.0) * 1e-9
    if ev.min() < -scale:
        raise _value_checks.refusal(
            ValueError, f"{name}: expected a positive semi-definite rotational inertia, got "
                        f"principal moments {np.round(ev, 6).tolist()}")
    if ev[0] + ev[1] < ev[2] - scale:
        raise _value_checks.refusal(
            ValueError, f"{name}: principal moments {np.round(ev, 6).tolist()} break the "
                        f"triangle inequality I1 + I2 >= I3; no rigid body has them")


def _check_spatial_inertia(G, name):
    """A 6x6 spatial inertia in any frame: symmetric PSD with positive mass."""
    G = _value_checks.matrix(G, (6, 6), name)
    if is_symbolic(G):
        Gn = _numbers(G)            # sympy numbers are checked like floats
        if Gn is None:
            m = _numbers(G[3, 3])
            if m is not None and not float(m.reshape(-1)[0]) > 0:
                raise _value_checks.refusal(ValueError, f"{name}: expected a positive mass, got {G[3, 3]}")
            return _meaning_checks.spatial_inertia_matrix(G, name)      # decided under assumptions
        _check_spatial_inertia(Gn, name)
        return G
    m = G[3, 3]
    if not np.allclose(G[3:, 3:], m * np.eye(3), atol=1e-9 * max(1, abs(m))):
        raise _value_checks.refusal(
            ValueError, f"{name}: expected the lower-right block m*1_3 of a spatial inertia "
                        f"ordered (omega, v), got {np.round(G[3:, 3:], 6).tolist()}")
    if not np.allclose(G, G.T, atol=1e-12, rtol=1e-9):
        raise _value_checks.refusal(
            ValueError, f"{name}: expected a symmetric spatial inertia, got asymmetry "
                        f"{np.abs(G - G.T).max():.3g}")
    if not m > 0:
        raise _value_checks.refusal(ValueError, f"{name}: expected a positive mass, got {m!r}")
    # rotational inertia about the centre of mass: I_o = I_c - m [c]^2, G[3:, :3] = m [c]^T
    C = G[:3, 3:] / m          # = [c]
    if not np.allclose(C, -C.T, atol=1e-9 * max(1.0, np.abs(C).max())):
        raise _value_checks.refusal(
            ValueError, f"{name}: expected the upper-right block m[c] of a spatial inertia to "
                        f"be skew-symmetric (c = centre of mass), got "
                        f"{np.round(G[:3, 3:], 6).tolist()}")
    I_c = G[:3, :3] + m * (C @ C)
    _check_rotational_inertia(m, I_c, name)
    return G
