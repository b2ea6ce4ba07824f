"""Animations: matplotlib's JavaScript player, offline-safe and with alt text."""
from __future__ import annotations

import base64
import html as _html
import math
import warnings

import numpy as np

from .. import _value_checks
from ._common import (BudgetWarning, FRAME_BUDGET_BYTES, _DEFAULT_DPI, _MIN_DPI,
                      _QUICK_ANIMATION_FRAMES, _dpi_arg, _figsize_arg, _pdf_dpi, _quick, _real,
                      _text_arg)
from .frames import _b64_len, _new_figure, _png_bytes


_FA_GLYPHS = {"fa-minus": "\u2212", "fa-fast-backward": "\u21e4", "fa-step-backward": "\u2039",
              "fa-play fa-flip-horizontal": "\u25c0", "fa-pause": "||", "fa-play": "\u25b6",
              "fa-step-forward": "\u203a", "fa-fast-forward": "\u21e5", "fa-plus": "+"}


class Animation:
    """What :func:`animation` returns: matplotlib's JavaScript player, as HTML.

    Attributes: ``html`` (str), ``frames`` (int), ``frame_bytes`` (int), ``dpi``.
    """

    def __init__(self, html, frames, frame_bytes, dpi, title, still_png):
        self.html = html
        self.frames = frames
        self.frame_bytes = frame_bytes
        self.dpi = dpi
        self.title = title
        self.still_png = still_png                       # base64 first frame: image/png (PDF)

    def _repr_html_(self):
        return self.html

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": repr(self), "text/html": self.html, "image/png": self.still_png}

    def __repr__(self):
        return (f"<animation {self.title or ''!r}: {self.frames} frames, "
                f"{self.frame_bytes / 1e3:.0f} kB>")


def _offline_jshtml(s, alt):
    """Remove the player's external font stylesheet, draw its buttons with unicode glyphs, add
    alt text to its image and a label to its frame slider."""
    import re
    s = re.sub(r'<link rel="stylesheet"\s*href="[^"]*font-awesome[^"]*">', "", s)
    for cls, glyph in sorted(_FA_GLYPHS.items(), key=lambda kv: -len(kv[0])):
        s = s.replace(f'<i class="fa {cls}"></i>', glyph)
    s = re.sub(r'<img id="(_anim_img[0-9a-f]+)">',
               lambda m: f'<img id="{m.group(1)}" alt="{_html.escape(alt)}">', s)
    # the frame slider has no label in matplotlib's template (axe rule "label", WCAG 4.1.2)
    s = re.sub(r'<input id="(_anim_slider[0-9a-f]+)" type="range"',
               lambda m: f'<input id="{m.group(1)}" type="range" aria-label="Animation frame"', s)
    return s


def animation(draw, frames, *, interval=40, figsize=(6, 4), title=None, alt=None, dpi=None):
    """Motion as an HTML player: matplotlib ``FuncAnimation(...).to_jshtml()``, offline-safe.

    ``draw(fig, i)`` draws frame ``i`` into the figure (clearing it and drawing again is fine).
    ``frames`` is a number of frames or a sequence of frame values passed as ``i``. In
    :func:`robodyn.quick_mode` at most 5 frames are kept (evenly spread, first and last kept).
    The figure is never shown by pyplot, so a notebook prints it once.

    The HTML is what ``to_jshtml()`` makes (matplotlib's ``HTMLWriter``), with the frames stored as
    palette PNGs (as in :func:`~robodyn.viz.interactive.interactive_figure`), the player's external icon font replaced by
    plain glyphs (it works offline) and alt text on its image.

    Page-weight budget, ``FRAME_BUDGET_BYTES`` = 2 MB of frame data: the dpi (``dpi=None``:
    100 or lower, not below 60) is chosen from the measured size of the first frame; if even
    that does not fit, frames are dropped evenly and the interval stretched so the duration
    stays. A :class:`~robodyn.viz.BudgetWarning` says what was reduced.

    Parameters
    ----------
    draw : callable ``draw(fig, i)``
    frames : int or sequence
    interval : float
        milliseconds between frames.
    figsize : (float, float)
        inches.
    title : str, optional
        suptitle drawn on every frame, and the alt/aria-label text.
    alt : str, optional
        alt text; default the title, else "Animation of N frames".
    dpi : float, optional
        dpi of the frames; default automatic (100 or lower, within the budget).

    Returns
    -------
    Animation
        ``.html`` holds ``<div class="robodyn-animation" role="group" aria-label=...>`` around
        the player.

    >>> def draw(fig, i):
    ...     fig.clear()
    ...     ax = fig.add_subplot()
    ...     ax.plot([0, np.cos(i / 3)], [0, np.sin(i / 3)])
    >>> a = animation(draw, 3, title='A turning rod')
    >>> 'robodyn-animation' in a.html and a.frames == 3
    True
    """
    from matplotlib.animation import FuncAnimation
    if not callable(draw):
        raise _value_checks.refusal(TypeError, f"animation: draw: expected a function draw(fig, i), got "
                        f"{_value_checks._describe(draw)}")
    seq = _frames_arg(frames)
    interval = _real(interval, "animation: interval", low=0, strict_low=True, high=60_000,
                     hint="milliseconds between frames")
    figsize = _figsize_arg(figsize, "animation")
    title = _text_arg(title, "animation: title")
    alt = _text_arg(alt, "animation: alt") or title or f"Animation of {len(seq)} frames"
    if _quick() and len(seq) > _QUICK_ANIMATION_FRAMES:
        keep = np.unique(np.linspace(0, len(seq) - 1, _QUICK_ANIMATION_FRAMES).round().astype(int))
        seq = [seq[k] for k in keep]

    def one(fig_, i):
        draw(fig_, i)
        if title and not fig_.get_suptitle():
            fig_.suptitle(title)

    dpi = _dpi_arg(dpi, "animation")
    d = dpi
    probe = _new_figure(figsize, d or _DEFAULT_DPI)    # one frame first: errors and size
    one(probe, seq[0])
    if not probe.axes:
        raise _value_checks.refusal(
            ValueError, f"animation: draw(fig, {seq[0]!r}) drew nothing into fig; make the axes "
                        f"from fig (ax = fig.add_subplot()), not with plt.gca() or "
                        f"plt.subplots()")
    reduced = []
    size = _b64_len(len(_png_bytes(probe)))
    if d is None:
        d = _DEFAULT_DPI
        for _attempt in range(3):                        # PNG size is not simply ~ dpi^2
            est = size * len(seq) * 1.15
            if est <= FRAME_BUDGET_BYTES or d <= _MIN_DPI:
                break
            d = max(_MIN_DPI, math.floor(d * math.sqrt(FRAME_BUDGET_BYTES / est)))
            probe = _new_figure(figsize, d)
            one(probe, seq[0])
            size = _b64_len(len(_png_bytes(probe)))
        if d < _DEFAULT_DPI:
            reduced.append(f"dpi {_DEFAULT_DPI} -> {d}")
    fit = max(2, int(FRAME_BUDGET_BYTES / (size * 1.15)))
    if len(seq) > fit:                                   # keep the duration, drop frames
        keep = np.unique(np.linspace(0, len(seq) - 1, fit).round().astype(int))
        interval = interval * (len(seq) - 1) / max(len(keep) - 1, 1)
        reduced.append(f"frames {len(seq)} -> {len(keep)} (interval {interval:.0f} ms)")
        seq = [seq[k] for k in keep]
    fig = _new_figure(figsize, d)
    fig.canvas.draw_idle = lambda *args, **kwargs: None  # drawn once per frame, by the writer

    def update(i):
        one(fig, i)
        return []

    anim = FuncAnimation(fig, update, frames=seq, init_func=lambda: [], interval=interval,
                         blit=False, repeat=True, cache_frame_data=False)
    # matplotlib's to_jshtml(), with the frames as palette PNGs (2-4 times smaller)
    from tempfile import TemporaryDirectory
    from pathlib import Path
    with TemporaryDirectory() as tmp:
        path = Path(tmp, "animation.html")
        anim.save(str(path), writer=_PaletteHTMLWriter(fps=1000 / interval, embed_frames=True,
                                                       default_mode="loop"))
        jshtml = path.read_text()
    fig.clear()
    import re
    frame_bytes = sum(len(m) for m in re.findall(r'"data:image/png;base64,[^"]*"', jshtml))
    what = f"animation {title!r}" if title else "animation"
    if frame_bytes > FRAME_BUDGET_BYTES:
        warnings.warn(f"{what}: {len(seq)} frames take {frame_bytes / 1e6:.1f} MB at dpi {d}, "
                      f"above the {FRAME_BUDGET_BYTES / 1e6:g} MB budget; use fewer frames or a "
                      f"smaller figsize", BudgetWarning, stacklevel=2)
    elif reduced:
        warnings.warn(f"{what}: reduced {', '.join(reduced)} to keep the frame data within the "
                      f"{FRAME_BUDGET_BYTES / 1e6:g} MB budget ({frame_bytes / 1e6:.2f} MB)",
                      BudgetWarning, stacklevel=2)
    html = (f'<div class="robodyn-animation" role="group" aria-label="{_html.escape(alt)}">'
            f'{_offline_jshtml(jshtml, alt)}</div>')
    still = re.search(r'"data:image/png;base64,([^"]*)"', jshtml).group(1)
    pdf_dpi = _pdf_dpi()
    if pdf_dpi:                                          # the PDF's picture: the first frame
        probe = _new_figure(figsize, pdf_dpi)
        one(probe, seq[0])
        still = base64.b64encode(_png_bytes(probe, palette=False)).decode("ascii")
        probe.clear()
    return Animation(html, len(seq), frame_bytes, d, title, still)


MAX_FRAMES = 10_000
"""At most this many frames in one animation (each is a picture of the page)."""


def _frames_arg(frames):
    """The frame values: ``range(frames)`` for a whole number (numpy ints, Fraction(3, 1) and
    sympy Integer(3) too), else a non-empty 1-D sequence of finite real numbers (indices or
    times; integers stay integers)."""
    what = "animation: frames"
    if not isinstance(frames, (list, tuple, range, np.ndarray)):
        return list(range(_value_checks.size(frames, what, low=1, high=MAX_FRAMES,
                                       hint="a number of frames, or a sequence of frame "
                                            "values")))
    a = _value_checks.real_array(list(frames) if isinstance(frames, range) else frames, what,
                           hint="frame values are numbers (indices, times) passed to "
                                "draw(fig, i)")
    if a.ndim != 1 or a.size == 0:
        raise _value_checks.error(what, "a non-empty 1-D sequence of frame values", f"shape {a.shape}")
    if a.size > MAX_FRAMES:
        raise _value_checks.error(what, f"at most {MAX_FRAMES} frames", f"{a.size} frames")
    whole = isinstance(frames, range) or np.asarray(frames).dtype.kind in "iu"
    return [int(v) for v in a] if whole else a.tolist()


def _palette_writer():
    from matplotlib.animation import HTMLWriter

    class PaletteHTMLWriter(HTMLWriter):
        """matplotlib's HTMLWriter, its PNG frames quantized like the interactive figures'."""

        def grab_frame(self, **savefig_kwargs):
            # Animation.save passes the face colour composited on white; our frames are the
            # figure's own opaque RGB, the same thing for an opaque figure
            if not self.embed_frames or self.frame_format != "png" or \
                    set(savefig_kwargs) - {"facecolor", "transparent"}:
                return super().grab_frame(**savefig_kwargs)
            data = base64.encodebytes(_png_bytes(self.fig)).decode("ascii")
            self._total_bytes += len(data)
            self._saved_frames.append(data)

    return PaletteHTMLWriter


def _PaletteHTMLWriter(**kw):
    return _palette_writer()(**kw)

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
