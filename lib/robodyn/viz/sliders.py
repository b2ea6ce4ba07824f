"""Sliders of an interactive figure: :class:`~robodyn.viz.sliders.Slider` and the parameter grids."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _value_checks
from ._common import MAX_PARAMS, _QUICK_STEPS, _real


@dataclass(frozen=True)
class Slider:
    """One slider of an :func:`~robodyn.viz.interactive.interactive_figure`: ``steps`` equally spaced values from ``lo``
    to ``hi`` (both included).

    Parameters
    ----------
    lo, hi : float
        the range, ``lo < hi`` (in the parameter's unit: rad, m, kg, ...).
    steps : int
        number of grid values, >= 2. The live slider moves on the same grid as the static one.
    default : float, optional
        initial value, in [lo, hi]; it is snapped to the nearest grid value (choose ``steps`` so
        that it lies on the grid). Default: the grid value nearest the middle.
    label : str, optional
        text shown next to the slider, e.g. ``'q1 (rad)'``. Default: the parameter name.

    Raises
    ------
    TypeError, ValueError
        for non-numbers, ``lo >= hi``, ``steps`` not a whole number >= 2, a default outside.

    >>> s = Slider(0.0, 1.0, steps=5, default=0.3)
    >>> s.values.tolist(), s.default_index
    ([0.0, 0.25, 0.5, 0.75, 1.0], 1)
    """

    lo: float
    hi: float
    steps: int = 11
    default: float | None = None
    label: str | None = None

    def __post_init__(self):
        lo = _real(self.lo, "Slider: lo")
        hi = _real(self.hi, "Slider: hi")
        if not lo < hi:
            raise _value_checks.error("Slider: lo, hi", "lo < hi", f"lo={lo}, hi={hi}")
        s = _steps_arg(self.steps, "Slider: steps")
        d = self.default
        if d is not None:
            d = _real(d, "Slider: default")
            if not lo <= d <= hi:
                raise _value_checks.refusal(
                    ValueError, f"Slider: default: expected a value in [lo, hi] = [{lo}, {hi}], "
                                f"got {d}")
        if self.label is not None and not isinstance(self.label, str):
            raise _value_checks.refusal(
                TypeError, f"Slider: label: expected a str, got {_value_checks._describe(self.label)}")
        if self.label is not None and (len(self.label) > 200 or "\n" in self.label):
            raise _value_checks.error("Slider: label", "one line of at most 200 characters",
                                f"{len(self.label)} characters")
        if not np.all(np.isfinite(np.linspace(lo, hi, s))):
            raise _value_checks.error("Slider: lo, hi", "a range whose width hi - lo is a finite "
                                "number", f"lo = {lo:g}, hi = {hi:g}")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        object.__setattr__(self, "steps", s)
        object.__setattr__(self, "default", d)

    @property
    def values(self) -> np.ndarray:
        """The grid, ``numpy.linspace(lo, hi, steps)``."""
        return np.linspace(self.lo, self.hi, self.steps)

    @property
    def default_index(self) -> int:
        """Index of the grid value nearest ``default`` (nearest the middle if none)."""
        d = (self.lo + self.hi) / 2 if self.default is None else self.default
        return int(np.argmin(np.abs(self.values - d)))

    def resampled(self, steps: int) -> "Slider":
        """The same slider with another number of grid values (the default snapped again).

        >>> Slider(0.0, 1.0, steps=5, default=0.3).resampled(3).values.tolist()
        [0.0, 0.5, 1.0]
        """
        steps = _steps_arg(steps, "Slider.resampled: steps")
        d = float(self.values[self.default_index])
        return Slider(self.lo, self.hi, steps, d, self.label)


def _steps_arg(s, what):
    """A whole number of grid values, 2 to 1001 (Fraction(4, 1), sympy Integer(4), numpy ints
    too)."""
    return _value_checks.size(s, what, low=2, high=1001,
                        hint="every value is a precomputed frame of the rendered book")


def _quick_grid(slider):
    """The quick-mode grid of a slider: at most 3 values, all of them on the full grid (its ends
    and, when the full grid has an odd number of values, its middle)."""
    for k in range(min(_QUICK_STEPS, slider.steps), 1, -1):
        if (slider.steps - 1) % (k - 1) == 0:
            return slider if k == slider.steps else slider.resampled(k)
    return slider                                   # not reached: k = 2 always divides


def _slider_arg(name, spec):
    if isinstance(spec, Slider):
        return spec
    if isinstance(spec, tuple) and len(spec) == 3:
        try:
            return Slider(*spec)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"interactive_figure: params[{name!r}] = {spec!r}: {exc}") from exc
    raise _value_checks.refusal(
        TypeError, f"interactive_figure: params[{name!r}]: expected viz.Slider(lo, hi, steps=..., "
                   f"default=...) or a tuple (lo, hi, steps), got {_value_checks._describe(spec)}")


def _params_arg(params):
    if not isinstance(params, dict):
        raise _value_checks.refusal(
            TypeError, f"interactive_figure: params: expected a dict name -> viz.Slider or "
                       f"(lo, hi, steps), got {_value_checks._describe(params)}")
    if not params:
        raise _value_checks.refusal(
            ValueError, "interactive_figure: params: expected 1 or 2 parameters, got none "
                        "(for a figure without sliders draw it directly)")
    if len(params) > MAX_PARAMS:
        raise _value_checks.refusal(
            ValueError, f"interactive_figure: params: expected at most {MAX_PARAMS} parameters, "
                        f"got {len(params)} ({', '.join(map(str, params))}); fix the others as "
                        f"default arguments of draw, e.g. def draw(fig, q1, q2, q3=0.5)")
    out = {}
    for name, spec in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise _value_checks.refusal(
                ValueError, f"interactive_figure: params: expected parameter names that are "
                            f"Python identifiers (keywords of draw), got {name!r}")
        out[name] = _slider_arg(name, spec)
    return out

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
