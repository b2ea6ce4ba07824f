"""What an argument *is*: the library's own kinds, declared in the signatures (issue 37).

A public function says what each argument means by annotating it with a kind of this module::

    def log_so3(R: Rotation, tol: Tolerance = 1e-9): ...

and the one mechanism of :mod:`robodyn._boundary` checks every annotated argument at the call,
before any work, for sympy and numeric values alike: ``Kind.check(value, "log_so3: R")``.
A kind checks the *meaning* (a rotation is proper orthogonal, an inertia positive
semidefinite), not only the type, and refuses with the house message
``function: argument: expected ..., got ...`` through :func:`robodyn._checks.error`.

Contract (shared by the kinds and the boundary):

* a kind is a subclass of :class:`Kind`; its class method ``check(value, name)`` returns
  nothing useful (the boundary ignores the return value) and raises on a wrong value;
* ``expected`` is the short phrase of the house message ("a proper rotation matrix");
* this module is on the ground floor: it imports only :mod:`robodyn._checks` (and numpy/sympy).
"""
from __future__ import annotations

__all__ = ["Kind"]


class Kind:
    """Base class of the library's argument kinds (see the module docstring)."""

    expected = "a value"

    @classmethod
    def check(cls, value, name: str) -> None:
        """Refuse ``value`` (raise) when it is not of this kind; ``name`` is ``"fname: arg"``."""
        return None


from ._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
