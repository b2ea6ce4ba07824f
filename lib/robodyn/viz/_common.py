"""Settings shared by the figure modules (dpi, quick and static modes, page-weight budget) and
the argument checks they share."""
from __future__ import annotations

import os

import numpy as np

from .. import _value_checks


FRAME_BUDGET_BYTES = 2_000_000
"""Page-weight budget: at most this many bytes of embedded frame data (base64 text) per figure."""


MAX_PARAMS = 2
_DEFAULT_DPI = 100
_MIN_DPI = 60
_QUICK_STEPS = 3
_QUICK_ANIMATION_FRAMES = 5
_CONTINUOUS_MS = 80     # live sliders redraw while dragging when a frame takes less than this
_CSS_DPI = 100           # CSS pixels per figure inch in the static HTML (stable layout at any dpi)


class BudgetWarning(UserWarning):
    """The frame grid or dpi of a figure was reduced to stay within ``FRAME_BUDGET_BYTES``."""


def _pdf_dpi():
    """dpi of the pictures for the PDF (``ROBODYN_PDF_DPI``, set by the book's LaTeX build), or
    None."""
    value = os.environ.get("ROBODYN_PDF_DPI", "").strip()
    if not value:
        return None
    try:
        dpi = float(value)
    except ValueError as exc:
        raise _value_checks.refusal(
            ValueError, f"ROBODYN_PDF_DPI: expected a number of dots per inch, got "
                        f"{value!r}") from exc
    if not 50 <= dpi <= 600:
        raise _value_checks.refusal(
            ValueError, f"ROBODYN_PDF_DPI: expected a value in [50, 600], got {dpi:g}")
    return dpi


def _env_on(name):
    return os.environ.get(name, "") not in ("", "0")


def _quick():
    from .. import quick_mode
    return quick_mode()


def _real(x, what, **bounds):
    """A finite real number as a float (numpy, Fraction and sympy numbers too; symbols,
    booleans, arrays, text refused), ``what`` = ``"fname: arg"``; ``bounds`` as for
    :func:`robodyn._value_checks.real_number`."""
    return _value_checks.real_number(x, what, **bounds)


def _dpi_arg(dpi, fname):
    """None, or dots per inch in [10, 600] (checked before matplotlib sees it)."""
    if dpi is None:
        return None
    v = _real(dpi, f"{fname}: dpi", hint="dots per inch of the picture")
    if not 10 <= v <= 600:
        raise _value_checks.refusal(ValueError, f"{fname}: dpi: expected a value in [10, 600], got {v:g}")
    return v


def _flag_arg(x, what):
    return _value_checks.flag(x, what)


def _color_arg(x, what):
    """A matplotlib colour (a name, '#rrggbb', a grey level string, an RGB(A) tuple)."""
    from matplotlib.colors import is_color_like
    if isinstance(x, (bool, np.bool_)) or x is None or not is_color_like(x):
        raise _value_checks.error(what, "a matplotlib colour such as 'tab:blue', '#1f77b4' or '0.25'",
                            x, exc=TypeError if not isinstance(x, (str, tuple, list))
                            else ValueError)
    return x


def _figsize_arg(figsize, fname):
    what = f"{fname}: figsize"
    if isinstance(figsize, (str, bytes)) or not isinstance(figsize, (tuple, list, np.ndarray)) \
            or np.ndim(figsize) != 1 or len(figsize) != 2:
        raise _value_checks.refusal(TypeError, f"{what}: expected (width, height) in inches, got "
                        f"{_value_checks._describe(figsize)}")
    return tuple(_real(x, what, low=0, strict_low=True, high=30,
                       hint="positive inches, at most 30") for x in figsize)


def _text_arg(x, what):
    if x is not None and not isinstance(x, str):
        raise _value_checks.refusal(
            TypeError, f"{what}: expected a str or None, got {_value_checks._describe(x)}")
    if x is not None and len(x) > 2000:
        raise _value_checks.error(what, "a text of at most 2000 characters", f"{len(x)} characters")
    return x


def _axes_arg(ax, fname, arg="ax"):
    from matplotlib.axes import Axes
    if not isinstance(ax, Axes):
        raise _value_checks.refusal(TypeError, f"{fname}: {arg}: expected a matplotlib Axes"
                        f"{' or Figure' if arg == 'where' else ''} (e.g. fig.add_subplot() or "
                        f"fig.add_subplot(projection='3d')), got {_value_checks._describe(ax)}")
    return ax
