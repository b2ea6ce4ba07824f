"""Settings shared by the figure modules (dpi, quick and static modes, page-weight budget) and
the argument checks they share."""
from __future__ import annotations

import math
import numbers
import os

import numpy as np

from .. import _checks


FRAME_BUDGET_BYTES = 2_000_000


FRAME_BUDGET_BYTES = 2_000_000
"""Page-weight budget: at most this many bytes of embedded frame data (base64 text) per figure."""


MAX_PARAMS = 2


MAX_PARAMS = 2
_DEFAULT_DPI = 100


_DEFAULT_DPI = 100
_MIN_DPI = 60


_MIN_DPI = 60
_QUICK_STEPS = 3


_QUICK_STEPS = 3
_QUICK_ANIMATION_FRAMES = 5


_QUICK_ANIMATION_FRAMES = 5
_CONTINUOUS_MS = 80     # live sliders redraw while dragging when a frame takes less than this


_CONTINUOUS_MS = 80     # live sliders redraw while dragging when a frame takes less than this
_CSS_DPI = 100           # CSS pixels per figure inch in the static HTML (stable layout at any dpi)


class BudgetWarning(UserWarning):
    """The frame grid or dpi of a figure was reduced to stay within :data:`FRAME_BUDGET_BYTES`."""


def _pdf_dpi():
    """dpi of the pictures for the PDF (``ROBODYN_PDF_DPI``, set by the book's LaTeX build), or
    None."""
    value = os.environ.get("ROBODYN_PDF_DPI", "").strip()
    if not value:
        return None
    try:
        dpi = float(value)
    except ValueError:
        raise ValueError(f"ROBODYN_PDF_DPI: expected a number of dots per inch, got "
                         f"{value!r}") from None
    if not 50 <= dpi <= 600:
        raise ValueError(f"ROBODYN_PDF_DPI: expected a value in [50, 600], got {dpi:g}")
    return dpi


def _env_on(name):
    return os.environ.get(name, "") not in ("", "0")


def _quick():
    from .. import quick_mode
    return quick_mode()


def _real(x, what):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{what}: expected a real number, got {_checks._describe(x)}")
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{what}: expected a finite number, got {x}")
    return x


def _figsize_arg(figsize, fname):
    try:
        w, h = (float(x) for x in figsize)
    except (TypeError, ValueError):
        raise TypeError(f"{fname}: figsize: expected (width, height) in inches, got "
                        f"{_checks._describe(figsize)}") from None
    if not (0 < w <= 30 and 0 < h <= 30):
        raise ValueError(f"{fname}: figsize: expected positive inches (at most 30), got {(w, h)}")
    return (w, h)


def _text_arg(x, what):
    if x is not None and not isinstance(x, str):
        raise TypeError(f"{what}: expected a str or None, got {_checks._describe(x)}")
    return x


def _axes_arg(ax, fname):
    from matplotlib.axes import Axes
    if not isinstance(ax, Axes):
        raise TypeError(f"{fname}: ax: expected a matplotlib Axes (e.g. fig.add_subplot() or "
                        f"fig.add_subplot(projection='3d')), got {_checks._describe(ax)}")
    return ax
