"""robodyn's errors: one base class to catch, and the reader's call they are named after.

Every refusal of robodyn is a :class:`~robodyn.errors.RobodynError`, and also the builtin class that fits, so
code written against ``ValueError``/``TypeError`` keeps working:

* :class:`~robodyn.errors.ArgumentError` (``ValueError``) -- an argument has the right type but a wrong value
  (NaN, a negative mass, a reflection where a rotation goes);
* :class:`~robodyn.errors.ArgumentTypeError` (``TypeError``) -- an argument of the wrong type (text where
  numbers go, a complex number, a boolean array);
* :class:`~robodyn.errors.ResultError` (``ValueError``) -- finite input whose result is not finite (an
  overflow of float64, a singular problem).

Each message has the house form ``function: argument: expected ..., got ...`` and names the
function **the reader called**, also when the refusal was found by an inner function: the
boundary of the public API (:mod:`robodyn._boundary`) records the reader's call in a
per-thread slot (``CALL``) on entry, and :func:`robodyn._value_checks.error` reads it where the error is
raised. Nothing is renamed afterwards: the exception keeps its class, attributes and frames.
Exceptions of other libraries and of the reader's own callbacks pass through unchanged (a note
says which robodyn call they went through).

This module is on the ground floor: it imports nothing of robodyn.

>>> import robodyn
>>> try:
...     robodyn.exp_so3([0.0, float("nan"), 0.0])
... except robodyn.RobodynError as exc:
...     print(type(exc).__name__, isinstance(exc, ValueError))
ArgumentError True
"""
from __future__ import annotations

import re
import threading

__all__ = ["RobodynError", "ArgumentError", "ArgumentTypeError", "ResultError"]


class RobodynError(Exception):
    """Base class of every error robodyn raises on purpose (catch this one)."""


class ArgumentError(RobodynError, ValueError):
    """An argument of the right type with a wrong value: ``function: argument: expected ...``."""


class ArgumentTypeError(RobodynError, TypeError):
    """An argument of the wrong type: ``function: argument: expected ..., got ...``."""


class ResultError(RobodynError, ValueError):
    """Finite input whose result is not finite: ``function: result: expected finite ...``."""


class Call:
    """The reader's call under way: the function's public name and its parameter names.

    ``finite`` says whether every argument was finite (then a non-finite number met inside is
    an overflow of the result, not a refusal of an argument).
    """

    __slots__ = ("name", "short", "names", "finite")

    def __init__(self, name: str, names, finite: bool = True):
        self.name, self.names, self.finite = name, names, finite
        self.short = name.rpartition(".")[2]

    def owns(self, fname: str) -> bool:
        """Whether ``fname`` (the head of a message) names this call's own function."""
        first = fname.split(" ")[0].split("(")[0]        # "Surface 'floor'", "VMSForm(...)"
        return first in (self.name, self.short) or first.endswith("." + self.short)


class _CallSlot(threading.local):
    """The reader's call under way in this thread, with a context variable's ``get``, ``set``
    and ``reset`` (``set`` returns the token that ``reset`` takes; calls nest, so a slot per
    thread is enough: a call runs to its end in the thread that made it). Not a
    ``contextvars.ContextVar``: setting one of those on every call of the reader makes the
    numpy calls that follow measurably slower (numpy reads its own context variable on each
    ufunc call, and every ``set`` invalidates the lookups' cache) -- 2 µs on ``fk_space``.
    The value lives in ``cell``, a one-item list of this thread's own: the boundary reads the
    thread-local ``cell`` once per call and then reads, sets and restores the value with list
    operations (each access of a thread-local attribute looks up this thread's dictionary).
    A new thread starts with None, a forked worker with its parent's value.

    >>> slot = _CallSlot()
    >>> token = slot.set("f")
    >>> slot.get(), slot.cell[0], slot.reset(token), slot.get()
    ('f', 'f', None, None)
    """

    def __init__(self):
        self.cell = [None]              # run once in each thread, on its first access

    def get(self):
        return self.cell[0]

    def set(self, value):
        cell = self.cell
        token = (cell[0],)
        cell[0] = value
        return token

    def reset(self, token):
        self.cell[0] = token[0]


CALL = _CallSlot()
"""The reader's call under way in this thread (a :class:`Call`), or None."""

OPEN = Call("", ())
"""The value of ``CALL`` while robodyn runs the reader's code (``map_tasks``' func): the
robodyn calls made there are the reader's own."""

_IDENT = re.compile(r"[A-Za-z_]\w*")
_OVERFLOW = re.compile(r"\bfinite numbers\b|\bfinite result|overflow|\bnan\b|\binf\b", re.I)
"""A refusal of non-finite numbers (not a domain error's "finite values": a state outside the
model's domain is not an overflow)."""


def house_message(msg: str, exc=ValueError):
    """``(message, class)`` of a refusal raised now: its message names the reader's function
    when an inner function refused the reader's argument of the same name (a non-finite value
    that no argument of the reader explains is an overflow of the reader's result).

    >>> token = CALL.set(Call("arm_figure", ("chain", "q")))
    >>> house_message("draw_chain: q: expected 2 values, got 3")
    ('arm_figure: q: expected 2 values, got 3', <class 'robodyn.errors.ArgumentError'>)
    >>> CALL.reset(token)
    """
    cls = {ValueError: ArgumentError, TypeError: ArgumentTypeError}.get(exc, exc)
    call = CALL.get()
    if call is None or call is OPEN:
        return msg, cls
    head, sep, rest = msg.partition(": ")
    if not sep or call.owns(head):
        return msg, cls
    m = _IDENT.match(rest)
    if m and m.group(0) in call.names:
        return f"{call.name}: {rest}", cls
    if call.finite and _OVERFLOW.search(msg) and issubclass(cls, ValueError):
        return (f"{call.name}: result: expected finite numbers for finite input, got an "
                f"overflow inside ({msg[:200]})", ResultError)
    return msg, cls
