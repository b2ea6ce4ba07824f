"""The argument checks of the port-Hamiltonian forms (Part VI), in one place.

Every public method of the forms of :mod:`robodyn.port_hamiltonian` is declared with
:func:`checked`, which names the *kind* of each of its arguments (a state of the form, joint
values, a base twist, a time, inputs, ...). The declaration is complete by construction:
:func:`checked` refuses, when the class is defined, a method with an argument that has no kind.
At a call every argument is checked and converted (finite real float64 arrays in native byte
order; sympy numbers, ``Fraction`` and numpy scalars read as numbers; text, symbols, complex
and boolean values refused) *before* the method's body runs, with the message
``Form(model).method: argument: expected ..., got ...``; and a numeric result holding NaN or
infinity (an overflow of float64: the arguments were finite) is refused as
``Form(model).method: result: ...``. The bodies then use private helpers, or public functions
on arguments checked here, so no inner function can name itself in a refusal.
"""
from __future__ import annotations

import functools
import inspect
import math

import numpy as np
import sympy as sp

from .. import _value_checks
from ._rigid_body import _check_pose  # unsealed: errors carry the caller's name
from ._vehicle import RHS_POSE_TOL, _pose_of

POSE_TOL = 1e-6
"""How far from a rigid motion the pose of a state may be where the result depends on it
(energy with gravity, momentum in the space frame), as in :mod:`robodyn.port_hamiltonian`."""


def vec(x, n, name):
    """A finite real vector of length n as float64 (sympy numbers converted; symbols, text,
    complex, boolean values refused).

    >>> vec([1, 2], 2, "f: q").tolist()
    [1.0, 2.0]
    >>> vec([sp.Symbol('a'), 1], 2, "f: q")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentTypeError: f: q: expected numbers, got sympy expressions (this is a numeric function: substitute numbers first)
    """
    if type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (n,) \
            and x.flags.c_contiguous and math.isfinite(x.sum()):
        return x                          # the hot path of the integrators: already clean
    if _value_checks.is_symbolic(x):
        x = _value_checks.real_array(x, name, allow_nonfinite=True)
    return _value_checks.vector(x, n, name)


def finite(out, fname):
    """The postcondition of every method: no NaN or infinity in the result (dict values too)."""
    _value_checks.finite_result(list(out.values()) if isinstance(out, dict) else out, fname)
    return out


def is_callable(f):
    """A user's function (a sympy object is callable too, but it is no function of (t, x))."""
    return callable(f) and not isinstance(f, (sp.Basic, sp.MatrixBase, type))


# --------------------------------------------------------------------------
# the kinds: kind(form, value, name) -> the checked value
# --------------------------------------------------------------------------

def time(form, t, name):
    if type(t) in (float, np.float64) and math.isfinite(t):
        return float(t)
    return _value_checks.real_number(t, name, hint="a time in s")


def joints(form, q, name):
    return vec(q, form.n, f"{name} ({form.n} joint values)")


def joint_rates(form, qd, name):
    return vec(qd, form.n, f"{name} ({form.n} joint rates)")


def torques(form, tau, name):
    """Joint torques, None meaning zeros."""
    return np.zeros(form.n) if tau is None else vec(tau, form.n, f"{name} ({form.n} joint torques)")


def optional_torques(form, tau, name):
    """Joint torques or None (kept: the method says what None means)."""
    return None if tau is None else vec(tau, form.n, f"{name} ({form.n} joint torques)")


def base_twist(form, v, name):
    return vec(v, form.nb, f"{name} ({form.nb} base velocity numbers, (omega, v) body twist)")


def base_wrench(form, w, name):
    """A base wrench, None meaning zeros."""
    return np.zeros(form.nb) if w is None else vec(w, form.nb, f"{name} ({form.nb} base wrench "
                                                                 "numbers, (moment, force))")


def optional_base_momentum(form, p, name):
    return None if p is None else vec(p, form.nb, f"{name} ({form.nb} base momentum numbers)")


def end_effector_wrench(form, W, name):
    """A body wrench on the end effector (moment, force), or None."""
    return None if W is None else vec(W, 6, f"{name} (6 numbers: moment, force)")


def velocities(form, nu, name):
    return vec(nu, form.nb + form.n, f"{name} ({form.nb} + {form.n} numbers: v then qd)")


def base_pose(form, H, name):
    """The base pose of a state being built: a rigid motion in the form's subgroup."""
    H = _check_pose(H, name)
    if not form.group.contains(H, POSE_TOL):
        raise _value_checks.error(name, f"a pose in the {form.group.name} base's subgroup",
                            "a rigid motion outside it", "for a planar base: a rotation about "
                            "z and a translation in the x-y plane")
    return H


def optional_pose(form, H, name):
    return None if H is None else _check_pose(H, name)


def state(form, x, name):
    """A state of the form; its pose (if it has one) within RHS_POSE_TOL of a rigid motion, so
    an integrator's trial stages pass and a scaled, zeroed or reflected rotation does not."""
    return form._state_arg(x, name, RHS_POSE_TOL)


def rigid_state(form, x, name):
    """A state whose pose is a rigid motion to POSE_TOL (momentum in the space frame, energy
    with gravity)."""
    return form._state_arg(x, name, POSE_TOL)


def optional_state(form, x, name):
    """A state that the (constant) result does not depend on: None or a valid state."""
    return None if x is None else form._state_arg(x, name, RHS_POSE_TOL)


def sign(form, s, name):
    v = _value_checks.real_number(s, name)
    if v not in (-1.0, 1.0):
        raise _value_checks.error(name, "-1 (the correct (87)) or +1 (the sign of [28])", repr(s))
    return int(v)


def vms_state(x, nb, n, name, tol):
    """A VMS state (pose 12, nb, n, n numbers) with its pose within tol of a rigid motion."""
    x = vec(x, 12 + nb + 2 * n, f"{name} (pose 12, then {nb} + {2 * n} numbers)")
    return pose_part(x, name, tol)


def pose_part(x, name, tol):
    """Refuse a state (a checked vector) whose first 12 numbers (R row by row, then p) are
    farther than tol from a rigid motion, with :func:`~robodyn.port_hamiltonian.check_pose`'s message;
    the test itself in plain float arithmetic (it runs at every step of an integrator)."""
    a, b, c, d, e, f, g, h, i = x[:9].tolist()
    err = max(abs(a * a + d * d + g * g - 1), abs(b * b + e * e + h * h - 1),
              abs(c * c + f * f + i * i - 1), abs(a * b + d * e + g * h),
              abs(a * c + d * f + g * i), abs(b * c + e * f + h * i),
              abs(a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) - 1))
    if not err <= tol:
        _check_pose(_pose_of(x), f"{name}[:12] (the base pose)", tol=tol)
    return x


def pair(form, inputs, name, parts):
    """``inputs`` as None, a callable, or a checked pair; ``parts`` = ((label, kind), (label,
    kind)) say what the pair holds."""
    if inputs is None or is_callable(inputs):
        return inputs
    want = f"None, a pair ({parts[0][0]}, {parts[1][0]}) or a callable inputs(t, x) -> that pair"
    if not isinstance(inputs, (list, tuple, np.ndarray)) or \
            isinstance(inputs, np.ndarray) and inputs.ndim == 0 or len(inputs) != 2:
        _value_checks.no_text(inputs, name)
        raise _value_checks.error(name, want, inputs, exc=TypeError)
    return tuple(k(form, v, f"{name}: {lb}") for (lb, k), v in zip(parts, inputs))


def vms_inputs(form, inputs, name):
    """None, a callable inputs(t, x) -> (w, tau), or a pair (w, tau), checked."""
    return pair(form, inputs, name, (("w", base_wrench), ("tau", torques)))


def call_inputs(form, inputs, t, x, fname, kind=vms_inputs):
    """The inputs at (t, x): zeros for None, the checked result of a callable, or the pair."""
    if inputs is None:
        return kind(form, (None, None), f"{fname}: inputs")
    if not is_callable(inputs):
        return inputs
    out = inputs(t, x)
    if not isinstance(out, (list, tuple)) or len(out) != 2:
        raise _value_checks.error(f"{fname}: inputs", "a callable returning a pair",
                            f"a callable returning {_value_checks.describe(out)}", exc=TypeError)
    return kind(form, out, f"{fname}: inputs(t, x)")


# --------------------------------------------------------------------------
# the declaration
# --------------------------------------------------------------------------

def checked(fast=None, **kinds):
    """Declare a public method of a form: each argument's kind (the keywords), checked at the
    top of every call; the result checked finite. ``fast``: the name of a method taking the
    same arguments that returns the result for plain float64 arrays without the checks, or
    None to take the checked route (a hot path of an integrator)."""
    def declare(f):
        params = list(inspect.signature(f).parameters.values())[1:]
        names = [p.name for p in params]
        if sorted(names) != sorted(kinds):
            raise TypeError(f"checked: {f.__qualname__}: expected a kind for each argument "
                            f"{names}, got kinds for {sorted(kinds)}")
        defaults = [p.default for p in params]
        index = {nm: i for i, nm in enumerate(names)}
        required = [i for i, d in enumerate(defaults) if d is inspect.Parameter.empty]
        ks = [kinds[nm] for nm in names]

        @functools.wraps(f)
        def method(self, *args, **kwargs):
            if fast is not None and len(args) <= len(names) and all(
                    index.get(k, -1) >= len(args) for k in kwargs) and all(
                    i < len(args) or names[i] in kwargs for i in required):  # binds: try it
                out = getattr(self, fast)(*args, **kwargs)
                if out is not None:
                    return out
            fname = f"{self.name}.{f.__name__}"
            vals = _bind(fname, names, defaults, index, args, kwargs)
            return finite(f(self, *[k(self, v, f"{fname}: {nm}")
                                    for k, nm, v in zip(ks, names, vals)]), fname)

        method.argument_kinds = dict(kinds)
        return method
    return declare


def _bind(fname, names, defaults, index, args, kwargs):
    if len(args) > len(names):
        raise TypeError(f"{fname}: expected at most {len(names)} arguments "
                        f"({', '.join(names)}), got {len(args)}")
    vals = list(defaults)
    vals[:len(args)] = args
    for k, v in kwargs.items():
        i = index.get(k)
        if i is None:
            raise TypeError(f"{fname}: {k}: not an argument (expected one of {', '.join(names)})")
        if i < len(args):
            raise TypeError(f"{fname}: {k}: given twice (by position and by name)")
        vals[i] = v
    for nm, v in zip(names, vals):
        if v is inspect.Parameter.empty:
            raise TypeError(f"{fname}: {nm}: missing (expected arguments {', '.join(names)})")
    return vals
