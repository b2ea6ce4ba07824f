r"""Figures, interactive figures and animations: the only module of :mod:`robodyn` that imports
matplotlib and ipywidgets.

Computing modules never plot, and nothing here derives: the drawing primitives take an existing
matplotlib ``Axes`` and numbers the computing modules produced (poses, screw axes, a chain and its
joint values) and return the artists they made.

* :func:`interactive_figure` -- a figure with up to two sliders. One object, two renderings: a live
  ipywidgets view in a Jupyter kernel, and a static HTML version (precomputed PNG frames switched by
  a tiny inline script) for the rendered book. With ``reuse_figure=True`` the draw function builds
  its figure once and then updates it; :func:`animated` and :func:`clear_animated` mark and clear
  the moving parts, which alone are redrawn per frame (the 100 ms budget of a slider move).
* :func:`animation` -- motion, as matplotlib's JavaScript player (``FuncAnimation.to_jshtml``),
  made offline-safe and given alt text.
* :func:`draw_frame`, :func:`draw_screw_axis`, :func:`draw_chain`, :func:`set_equal_aspect`,
  :func:`arm_figure` -- drawing primitives for 2D and 3D axes.

Figures are built on :class:`matplotlib.figure.Figure` with an Agg canvas, never through
``pyplot``: importing this module or calling :func:`interactive_figure` does not touch the pyplot
backend (so it works headless and leaves Jupyter's inline backend alone), and no figure is
printed twice in a notebook.

Environment variables
---------------------
``ROBODYN_STATIC=1``
    set by the book build: :func:`interactive_figure` precomputes the full frame grid.
``ROBODYN_QUICK=1`` (:func:`robodyn.quick_mode`)
    set by the tests: a small grid (at most 3 values per parameter, all on the full grid) and at
    most 5 animation frames.
``ROBODYN_WIDGET_TIMINGS=path``
    append one JSON line per interactive figure with the time ``draw`` + PNG rendering takes.
``ROBODYN_PDF_DPI=200``
    set by the book's LaTeX build (``book/_ext/book_fixes.py``): the still picture an
    interactive figure or animation offers as ``image/png`` (what the PDF shows) is rendered at
    this dpi; the HTML frames keep theirs.
"""
from __future__ import annotations

import base64
import gc
import html as _html
import io
import itertools
import json
import math
import numbers
import os
import time
import warnings
from dataclasses import dataclass

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from . import _checks
from .kinematics import SerialChain, adjoint, fk_space, jacobian_space, link_poses

__all__ = ["Slider", "interactive_figure", "InteractiveFigure", "animated", "clear_animated",
           "animation", "Animation",
           "draw_frame", "draw_screw_axis", "draw_chain", "chain_points", "set_equal_aspect",
           "arm_figure",
           "FRAME_BUDGET_BYTES", "BudgetWarning"]

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
    from . import quick_mode
    return quick_mode()


# --------------------------------------------------------------------------
# sliders
# --------------------------------------------------------------------------


def _real(x, what):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{what}: expected a real number, got {_checks._describe(x)}")
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{what}: expected a finite number, got {x}")
    return x


@dataclass(frozen=True)
class Slider:
    """One slider of an :func:`interactive_figure`: ``steps`` equally spaced values from ``lo``
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
            raise ValueError(f"Slider: expected lo < hi, got lo={lo}, hi={hi}")
        s = self.steps
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"Slider: steps: expected a whole number >= 2, got "
                            f"{_checks._describe(s)}")
        if s < 2:
            raise ValueError(f"Slider: steps: expected a whole number >= 2, got {s}")
        if s > 1001:
            raise ValueError(f"Slider: steps: expected at most 1001 values (every value is a "
                             f"precomputed frame of the rendered book), got {s}")
        d = self.default
        if d is not None:
            d = _real(d, "Slider: default")
            if not lo <= d <= hi:
                raise ValueError(f"Slider: default: expected a value in [lo, hi] = [{lo}, {hi}], "
                                 f"got {d}")
        if self.label is not None and not isinstance(self.label, str):
            raise TypeError(f"Slider: label: expected a str, got {_checks._describe(self.label)}")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        object.__setattr__(self, "steps", int(s))
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
        """The same slider with fewer grid values (the default snapped again)."""
        d = float(self.values[self.default_index])
        return Slider(self.lo, self.hi, steps, d, self.label)


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
            raise type(exc)(f"interactive_figure: params[{name!r}] = {spec!r}: {exc}") from None
    raise TypeError(f"interactive_figure: params[{name!r}]: expected viz.Slider(lo, hi, steps=..., "
                    f"default=...) or a tuple (lo, hi, steps), got {_checks._describe(spec)}")


def _params_arg(params):
    if not isinstance(params, dict):
        raise TypeError(f"interactive_figure: params: expected a dict name -> viz.Slider or "
                        f"(lo, hi, steps), got {_checks._describe(params)}")
    if not params:
        raise ValueError("interactive_figure: params: expected 1 or 2 parameters, got none "
                         "(for a figure without sliders draw it directly)")
    if len(params) > MAX_PARAMS:
        raise ValueError(f"interactive_figure: params: expected at most {MAX_PARAMS} parameters, "
                         f"got {len(params)} ({', '.join(map(str, params))}); fix the others as "
                         f"default arguments of draw, e.g. def draw(fig, q1, q2, q3=0.5)")
    out = {}
    for name, spec in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"interactive_figure: params: expected parameter names that are "
                             f"Python identifiers (keywords of draw), got {name!r}")
        out[name] = _slider_arg(name, spec)
    return out


# --------------------------------------------------------------------------
# rendering frames
# --------------------------------------------------------------------------


def _new_figure(figsize, dpi):
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png_bytes(fig, palette=True):
    """The figure as PNG bytes, drawn by Agg. ``palette=True`` (the embedded frames): quantized to
    256 colours by maximum coverage, at most a few levels off per channel (invisible for line
    art and colormaps) and 2-3 times smaller; ``palette=False`` (the live widget): RGB, fast."""
    fig.canvas.draw()
    return _png_from_canvas(fig, palette)


def _png_from_canvas(fig, palette=True):
    """The pixels the figure's Agg canvas holds now, as PNG bytes (see :func:`_png_bytes`)."""
    from PIL import Image
    rgba = np.asarray(fig.canvas.buffer_rgba())
    img = Image.fromarray(rgba[..., :3].copy(), "RGB")
    if not palette:
        buf = io.BytesIO()
        img.save(buf, format="PNG", compress_level=1)
        return buf.getvalue()
    img = img.quantize(colors=256, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE)
    # the palette averages near-white shades: give the dominant (background) colour back exactly
    counts = np.bincount(np.asarray(img).ravel(), minlength=256)
    k = int(np.argmax(counts))
    flat = rgba[..., :3].reshape(-1, 3)
    pal = np.array(img.getpalette()[:768], dtype=np.uint8).reshape(-1, 3)
    if k < len(pal):
        sample = flat[np.asarray(img).ravel() == k][:4096]
        vals, n = np.unique(sample, axis=0, return_counts=True)
        pal[k] = vals[np.argmax(n)]
        img.putpalette(pal.ravel().tolist())
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def _render(draw, values, figsize, dpi, title, palette=True, layout=None, reuse=False):
    """Run ``draw`` and return (png bytes, milliseconds), with the garbage collector paused:
    its pauses (tens of ms, at random frames) are moved out of the slider's response time, and
    the garbage of the frame is collected after it (see :func:`_render_frame`)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _render_frame(draw, values, figsize, dpi, title, palette, layout, reuse)
    finally:
        if enabled:
            gc.enable()


def _render_frame(draw, values, figsize, dpi, title, palette=True, layout=None, reuse=False):
    """Run ``draw`` and return (png bytes, milliseconds).

    ``layout`` (a dict, one per interactive figure) holds what frames share. Without ``reuse``
    each frame is drawn into a fresh figure, and the layout is frozen: the first frame is laid out
    by matplotlib's constrained layout and its axes positions are stored; later frames with the
    same axes reuse them, so the axes do not jump between frames and the costly layout pass runs
    once. With ``reuse`` (see :func:`interactive_figure`) one figure per dpi is kept in ``layout``
    and handed to ``draw`` again, which updates its artists; see :func:`_render_reused`.
    """
    t0 = time.perf_counter()
    if reuse:
        png = _render_reused(draw, values, figsize, dpi, title, palette,
                             {} if layout is None else layout)
        return png, (time.perf_counter() - t0) * 1e3
    frozen = layout.get("positions") if layout is not None else None
    # always created with constrained layout, so that draw (e.g. fig.colorbar(ax=...)) makes the
    # same axes as in the first frame; the layout engine is switched off afterwards if frozen
    fig = _drawn_figure(draw, values, figsize, dpi, title)
    if frozen and len(fig.axes) == len(frozen) and all(
            ax.get_axes_locator() is None or type(ax.get_axes_locator()).__name__ ==
            "_ColorbarAxesLocator" for ax in fig.axes):
        fig.set_layout_engine("none")
        for ax, pos in zip(fig.axes, frozen):
            ax.set_position(pos)
        suptitle = getattr(fig, "_suptitle", None)         # constrained layout had moved it
        if suptitle is not None and layout.get("suptitle_y") is not None:
            suptitle.set_y(layout["suptitle_y"])
    png = _png_bytes(fig, palette)
    ms = (time.perf_counter() - t0) * 1e3
    if layout is not None and frozen is None and \
            isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        layout["positions"] = [ax.get_position().frozen() for ax in fig.axes]
        suptitle = getattr(fig, "_suptitle", None)
        layout["suptitle_y"] = None if suptitle is None else suptitle.get_position()[1]
    fig.clear()
    return png, ms


def _drawn_figure(draw, values, figsize, dpi, title):
    """A new figure (constrained layout, Agg canvas) after ``draw``, with the suptitle."""
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    draw(fig, **values)
    _check_drew(fig, values)
    if title and not fig.get_suptitle():
        fig.suptitle(title)
    return fig


def _check_drew(fig, values):
    if not fig.axes and not fig.images and not fig.artists and not fig.lines and not fig.texts:
        raise ValueError(f"interactive_figure: draw(fig, {_kwargs(values)}) drew nothing into "
                         f"fig; make the axes from fig (ax = fig.add_subplot()), not with "
                         f"plt.gca() or plt.subplots()")


def _animated_artists(fig):
    """The figure's animated artists in drawing order: per axes (in order), by zorder."""
    found = [a for a in fig.findobj(lambda a: a.get_animated()) if a is not fig]
    rank = {id(ax): k for k, ax in enumerate(fig.axes)}
    return sorted(found, key=lambda a: (rank.get(id(a.axes), -1), a.get_zorder()))


def _blit(fig, artists):
    renderer = fig.canvas.get_renderer()
    for artist in artists:
        if hasattr(artist, "do_3d_projection"):          # 3D collections project before drawing
            artist.do_3d_projection()
        artist.draw(renderer)


def animated(artists):
    """Mark artists as *animated* and return them: with ``interactive_figure(...,
    reuse_figure=True)`` these are the ones redrawn per frame, over a background kept as pixels.
    Takes one artist or an iterable of them (a list, a ``BarContainer``), nested lists too.

    >>> fig = Figure(); ax = fig.add_subplot()
    >>> line, = animated(ax.plot([0, 1], [0, 1]))
    >>> line.get_animated()
    True
    """
    if hasattr(artists, "set_animated"):
        items = [artists]
    elif hasattr(artists, "__iter__"):
        items = list(artists)
    else:
        raise TypeError(f"animated: expected an artist or an iterable of artists, got "
                        f"{_checks._describe(artists)}")
    out = []
    for a in items:
        if hasattr(a, "set_animated"):
            a.set_animated(True)
            out.append(a)
        elif hasattr(a, "__iter__"):
            out += animated(a)
        else:
            raise TypeError(f"animated: expected matplotlib artists, got {_checks._describe(a)}")
    return out


def clear_animated(where):
    """Remove the animated artists of the previous frame (lines, patches, texts and annotations,
    collections, images) from one axes, or from every axes of a figure, keeping the axes' own
    title and labels: a draw function with ``reuse_figure=True`` calls it, then draws the new
    frame's moving parts (e.g. :func:`draw_chain`) and marks them with :func:`animated`.
    Artists it updates in place instead (``set_data``) belong on other axes.

    >>> fig = Figure(); ax = fig.add_subplot()
    >>> _ = animated(ax.plot([0, 1])); _ = ax.plot([1, 0])
    >>> clear_animated(fig); len(ax.lines)
    1
    """
    if isinstance(where, Figure):
        axes = list(where.axes)
    else:
        axes = [_axes_arg(where, "clear_animated")]
    for ax in axes:
        for group in (ax.lines, ax.patches, ax.texts, ax.collections, ax.images, ax.artists):
            for a in list(group):
                if a.get_animated():
                    a.remove()


def _render_reused(draw, values, figsize, dpi, title, palette, state):
    """One frame of a figure drawn with ``reuse=True``: PNG bytes.

    The first call at a dpi makes the figure, runs ``draw`` (which builds everything), lays it
    out once (constrained layout, then frozen) and draws it completely. Later calls hand ``draw``
    the same figure, which updates its artists. If some artists are *animated*
    (``artist.set_animated(True)``), the rest is the background: drawn once without them and
    kept as pixels, and each frame restores those pixels and draws only the animated artists
    (matplotlib's blitting), so axes, ticks and labels are not drawn again. Without animated
    artists every frame is one full draw of the reused figure.
    """
    key = ("reuse", dpi)
    entry = state.get(key)
    if entry is None:
        fig = _drawn_figure(draw, values, figsize, dpi, title)
        fig.canvas.draw()                        # lays out (constrained) and draws the background
        fig.set_layout_engine("none")            # freeze the layout: no layout pass per frame
        moving = _animated_artists(fig)
        entry = state[key] = {"fig": fig, "background": None, "n_axes": len(fig.axes)}
        if moving:
            entry["background"] = fig.canvas.copy_from_bbox(fig.bbox)
            _blit(fig, moving)
        return _png_from_canvas(fig, palette)
    fig = entry["fig"]
    draw(fig, **values)
    if len(fig.axes) != entry["n_axes"]:
        raise ValueError(f"interactive_figure: draw(fig, {_kwargs(values)}) with "
                         f"reuse_figure=True added axes to a figure it had already drawn; on "
                         f"later calls update the artists of fig.axes instead (build them only "
                         f"when fig.axes is empty)")
    moving = _animated_artists(fig)
    if entry["background"] is not None and moving:
        fig.canvas.restore_region(entry["background"])
        _blit(fig, moving)
    else:
        fig.canvas.draw()
    return _png_from_canvas(fig, palette)


def _kwargs(values):
    return ", ".join(f"{k}={_fmt(v)}" for k, v in values.items())


def _b64_len(nbytes):
    return 4 * ((nbytes + 2) // 3) + len("data:image/png;base64,")


def _fmt(x):
    return f"{x:.4g}"


# --------------------------------------------------------------------------
# the static HTML
# --------------------------------------------------------------------------

_SCRIPT = """<script>(function () {
  function init(root) {
    if (root.getAttribute('data-robodyn-ready')) { return; }
    var node = root.querySelector('script.robodyn-data');
    if (!node) { return; }
    root.setAttribute('data-robodyn-ready', '1');
    var data = JSON.parse(node.textContent);
    var img = root.querySelector('img.robodyn-frame');
    var sliders = root.querySelectorAll('input.robodyn-slider');
    var outs = root.querySelectorAll('output.robodyn-value');
    function update() {
      var k = 0, parts = [];
      for (var i = 0; i < sliders.length; i++) {
        var j = parseInt(sliders[i].value, 10);
        k = k * data.steps[i] + j;
        var text = data.labels[i] + ' = ' + data.values[i][j];
        sliders[i].setAttribute('aria-valuetext', text);
        if (outs[i]) { outs[i].textContent = data.values[i][j]; }
        parts.push(text);
      }
      if (k < data.frames.length) { img.src = data.frames[k]; }
      img.alt = data.alt + ' (' + parts.join(', ') + ')';
    }
    for (var i = 0; i < sliders.length; i++) {
      sliders[i].addEventListener('input', update);
      sliders[i].addEventListener('change', update);
    }
  }
  function all() {
    var roots = document.querySelectorAll('div.robodyn-interactive');
    for (var i = 0; i < roots.length; i++) { init(roots[i]); }
  }
  all();
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', all);
  }
})();</script>"""

_STYLE = ("display:inline-block;max-width:100%;font-family:sans-serif;font-size:0.9em;"
          "margin:0.5em 0")


def _static_html(sliders, frames, start, alt, title, figsize, note):
    """The static rendering: sliders, the start frame, all frames as data URIs in JSON."""
    names = list(sliders)
    width = int(round(figsize[0] * _CSS_DPI))
    k0 = 0
    for name in names:
        k0 = k0 * sliders[name].steps + start[name]
    if len(frames) == 1:                                 # live preview: the default frame only
        k0 = 0
    data = {
        "steps": [sliders[n].steps for n in names],
        "values": [[_fmt(v) for v in sliders[n].values] for n in names],
        "labels": [sliders[n].label or n for n in names],
        "frames": frames,
        "alt": alt,
    }
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    start_parts = ", ".join(f"{sliders[n].label or n} = {_fmt(sliders[n].values[start[n]])}"
                            for n in names)
    rows = []
    disabled = " disabled" if len(frames) == 1 and any(sliders[n].steps > 1 for n in names) \
        else ""
    for n in names:
        s = sliders[n]
        label = _html.escape(s.label or n)
        rows.append(
            f'<label style="display:flex;align-items:center;gap:0.6em;margin:0.2em 0">'
            f'<span style="min-width:6em">{label}</span>'
            f'<input type="range" class="robodyn-slider" data-param="{_html.escape(n)}" '
            f'min="0" max="{s.steps - 1}" step="1" value="{start[n]}" aria-label="{label}" '
            f'aria-valuetext="{label} = {_fmt(s.values[start[n]])}"{disabled} '
            f'style="flex:1">'
            f'<output class="robodyn-value" style="min-width:4em">'
            f'{_fmt(s.values[start[n]])}</output></label>')
    cap = f'<div style="color:#666;font-size:0.85em">{_html.escape(note)}</div>' if note else ""
    return (
        f'<div class="robodyn-interactive" style="{_STYLE};width:{width}px">'
        f'<img class="robodyn-frame" src="{frames[k0]}" '
        f'alt="{_html.escape(alt + " (" + start_parts + ")")}" '
        f'style="width:100%;height:auto;display:block">'
        f'{"".join(rows)}{cap}'
        f'<script type="application/json" class="robodyn-data">{payload}</script>'
        f'{_SCRIPT}</div>')


# --------------------------------------------------------------------------
# interactive figures
# --------------------------------------------------------------------------


class InteractiveFigure:
    """What :func:`interactive_figure` returns: displays as a live widget in a Jupyter kernel and
    as static HTML with working sliders in the rendered book.

    Attributes
    ----------
    html : str
        the static rendering (``text/html``).
    frames : int
        number of precomputed frames in :attr:`html`.
    frame_bytes : int
        bytes of frame data (base64 text) in :attr:`html`, <= :data:`FRAME_BUDGET_BYTES`.
    dpi : float
        dpi of the precomputed frames.
    mode : str
        ``'static'`` (full grid), ``'quick'`` (small grid) or ``'live'`` (default frame only).
    timings_ms : list of float
        time of ``draw`` + PNG rendering for each frame rendered.
    """

    def __init__(self, draw, sliders, figsize, title, alt, dpi, mode, frames, frame_sliders,
                 start, timings, frame_dpi, html, continuous_update=None):
        self._draw = draw
        self.sliders = sliders
        self.figsize = figsize
        self.title = title
        self.alt = alt
        self._dpi = dpi
        self.mode = mode
        self._frame_sliders = frame_sliders
        self._start = start
        self.frames = len(frames)
        self.frame_bytes = sum(len(f) for f in frames)
        self.timings_ms = timings
        self.dpi = frame_dpi
        self.html = html
        self._widget = None
        self._layout = {}
        self._reuse = False
        self._png_cache = {}
        if continuous_update is None:                # live redraw while dragging if it is fast
            continuous_update = bool(np.median(timings) < _CONTINUOUS_MS)
        self.continuous_update = continuous_update
        # the start frame, reused as the widget's first image when it has the same values
        values0 = {n: float(frame_sliders[n].values[start[n]]) for n in frame_sliders}
        k0 = 0 if len(frames) == 1 else int(np.ravel_multi_index(
            [start[n] for n in frame_sliders], [frame_sliders[n].steps for n in frame_sliders]))
        self.still_png = frames[k0].split(",", 1)[1]     # base64 start frame: image/png (PDF)
        self._png_cache[(tuple(values0.items()), frame_dpi)] = base64.b64decode(self.still_png)

    # live rendering ------------------------------------------------------
    def render_png(self, **values) -> bytes:
        """PNG bytes of the figure at ``values`` (the live widget's callback)."""
        full = {n: float(s.values[s.default_index]) for n, s in self.sliders.items()}
        full.update({n: float(v) for n, v in values.items()})
        dpi = self._dpi or _DEFAULT_DPI
        cached = self._png_cache.get((tuple(full.items()), dpi))
        if cached is not None:
            return cached
        return _render(self._draw, full, self.figsize, dpi, self.title, palette=False,
                       layout=self._layout, reuse=self._reuse)[0]

    def widget(self):
        """The live view: one ``FloatSlider`` per parameter above an ``Image`` widget; moving a
        slider re-runs ``draw`` (a plain function) and swaps the image."""
        if self._widget is None:
            import ipywidgets as w
            sliders = {}
            for n, s in self.sliders.items():
                sliders[n] = w.FloatSlider(
                    value=float(s.values[s.default_index]), min=s.lo, max=s.hi,
                    step=(s.hi - s.lo) / (s.steps - 1), description=s.label or n,
                    readout_format=".4g", continuous_update=self.continuous_update,
                    style={"description_width": "initial"},
                    layout=w.Layout(width=f"{int(self.figsize[0] * _CSS_DPI)}px"))
            image = w.Image(value=self.render_png(**{n: sl.value for n, sl in sliders.items()}),
                            format="png",
                            layout=w.Layout(width=f"{int(self.figsize[0] * _CSS_DPI)}px"))

            def update(_change=None):
                image.value = self.render_png(**{n: sl.value for n, sl in sliders.items()})

            for sl in sliders.values():
                sl.observe(update, names="value")
            self._widget = w.VBox([image, *sliders.values()])
        return self._widget

    # display -------------------------------------------------------------
    def _repr_html_(self):
        return self.html

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": repr(self), "text/html": self.html, "image/png": self.still_png}
        try:
            view = self.widget()._repr_mimebundle_()
        except ImportError:                              # no ipywidgets: static only
            view = None
        if view:
            bundle.update({k: v for k, v in view.items() if k != "text/plain"})
        return bundle

    def __repr__(self):
        names = ", ".join(self.sliders)
        return (f"<interactive figure {self.title or ''!r}: sliders {names}; "
                f"{self.frames} static frame(s), {self.frame_bytes / 1e3:.0f} kB>")


def interactive_figure(draw, params, *, figsize=(6, 4), title=None, alt=None, dpi=None,
                       continuous_update=None, reuse_figure=False):
    r"""A figure with one or two sliders that works live in Jupyter and static in the book.

    ``draw(fig, **values)`` is a plain function that draws into a fresh, empty matplotlib
    ``Figure`` for the given parameter values (it makes its own axes, e.g.
    ``fig.add_subplot(projection='3d')``). With ``reuse_figure=True`` it gets the *same* figure
    on every call instead: it builds axes, labels and artists when ``fig.axes`` is empty and
    afterwards only updates the artists' data (``set_data``, ``set_text``, ...), so labels,
    ticks and layout stay out of the per-frame work. Artists it marks with
    ``artist.set_animated(True)`` are the only ones that may change; the rest is drawn once and
    kept as pixels (blitting), which makes a frame several times faster (a changing axes title:
    ``viz.animated(ax.title)`` once, then ``ax.title.set_text(...)``, not ``ax.set_title``, which
    moves it). The returned object displays as

    * ``application/vnd.jupyter.widget-view+json``: ipywidgets ``FloatSlider``\ s that re-run
      ``draw`` (JupyterLab with a kernel prefers this);
    * ``text/html``: frames precomputed over the slider grid, PNG data URIs, switched by a tiny
      inline script driven by real ``<input type="range">`` sliders (the book's HTML builder
      prefers this; it works offline and with several figures on a page);
    * ``text/plain``: a one-line summary.

    How many frames the static HTML holds: the full grid (product of the ``steps``) when
    ``ROBODYN_STATIC=1`` (the book build); at most 3 values per parameter when
    :func:`robodyn.quick_mode` is on (tests); otherwise (a reader's live kernel) only the default
    frame, with the sliders disabled.

    **Page-weight budget**: at most :data:`FRAME_BUDGET_BYTES` = 2 MB of frame data (base64 text)
    per figure. The dpi (``dpi=None``: 100, or lower) and, if that is not enough, the number of
    steps are chosen automatically from measured PNG sizes; a :class:`BudgetWarning` says when the
    grid or the dpi was reduced.

    Parameters
    ----------
    draw : callable ``draw(fig, **values)``
    params : dict
        name -> :class:`Slider` or a tuple ``(lo, hi, steps)``; at most 2 entries, names are the
        keyword arguments of ``draw``.
    figsize : (float, float)
        inches.
    title : str, optional
        the figure's suptitle (unless ``draw`` set one) and the default alt text.
    alt : str, optional
        alt text of the static image; default: the title, else a generated description.
    dpi : float, optional
        dpi of the frames; default automatic (100 or lower, within the budget).
    continuous_update : bool, optional
        whether the live sliders redraw while being dragged (True) or on release (False);
        default: True when a frame takes less than 80 ms to draw and render.
    reuse_figure : bool
        hand ``draw`` the same figure on every call (see above); default False: a fresh figure.
        Axes limits should be fixed (``set_xlim``...), since the background is not redrawn.

    Returns
    -------
    InteractiveFigure

    Raises
    ------
    TypeError, ValueError
        for a ``draw`` that is not callable, more than 2 parameters, bad slider specifications,
        names that are not identifiers, a bad figsize, title, alt or dpi, a non-bool
        ``reuse_figure``; ``ValueError`` also when a reused figure gains axes on a later call.

    Static HTML contract (what the browser test and the book rely on)
    -----------------------------------------------------------------
    ``<div class="robodyn-interactive">`` holding ``<img class="robodyn-frame" alt="...">``
    (alt: ``alt``, else the title, else a generated description, followed by the current
    values), then per parameter, in the order of ``params``, ``<input type="range"
    class="robodyn-slider" data-param="NAME" min="0" max="steps-1">`` (the value is the grid
    index) and ``<output class="robodyn-value">``, then ``<script type="application/json"
    class="robodyn-data">`` (``{"steps", "values", "labels", "frames", "alt"}``, frames in
    row-major order of the parameters) and one inline script. An ``input`` (or ``change``)
    event on a slider swaps the image ``src``. No ids, no globals, no external requests; the
    script initialises every not yet initialised figure on the page, at once and again on
    ``DOMContentLoaded``, so it works for content parsed with the page and for content
    inserted later (JupyterLab re-creates the scripts).

    Environment
    -----------
    ``ROBODYN_WIDGET_TIMINGS=path`` appends one JSON line per figure:
    ``{"title", "params", "frames", "median_ms", "max_ms", "bytes", "samples", ...}``;
    ``median_ms``/``max_ms`` over 5 runs of the live callback, ``draw`` plus PNG rendering of one
    frame (what a live reader waits for per slider move), ``median_cpu_ms``/``max_cpu_ms`` the
    same in CPU time of the process; ``bytes`` the embedded frame data;
    ``static_median_ms`` the render time of one embedded (palette) frame.

    Examples
    --------
    >>> def draw(fig, a):
    ...     ax = fig.add_subplot()
    ...     x = np.linspace(0, 2 * np.pi, 50)
    ...     ax.plot(x, np.sin(a * x))
    ...     ax.set_xlabel('x (rad)')
    >>> f = interactive_figure(draw, {'a': Slider(0.5, 2.0, steps=4, label='frequency')},
    ...                        title='A sine')
    >>> 'class="robodyn-interactive"' in f.html, f.frame_bytes <= FRAME_BUDGET_BYTES
    (True, True)
    >>> sorted(f._repr_mimebundle_())[-1]
    'text/plain'
    """
    if not callable(draw):
        raise TypeError(f"interactive_figure: draw: expected a function draw(fig, **values), got "
                        f"{_checks._describe(draw)}")
    sliders = _params_arg(params)
    _check_signature(draw, sliders)
    figsize = _figsize_arg(figsize, "interactive_figure")
    title = _text_arg(title, "interactive_figure: title")
    alt = _text_arg(alt, "interactive_figure: alt")
    if dpi is not None:
        dpi = _real(dpi, "interactive_figure: dpi")
        if not 10 <= dpi <= 600:
            raise ValueError(f"interactive_figure: dpi: expected a value in [10, 600], got {dpi}")
    if continuous_update is not None and not isinstance(continuous_update, bool):
        raise TypeError(f"interactive_figure: continuous_update: expected True, False or None, "
                        f"got {_checks._describe(continuous_update)}")
    if not isinstance(reuse_figure, bool):
        raise TypeError(f"interactive_figure: reuse_figure: expected True or False, got "
                        f"{_checks._describe(reuse_figure)}")
    if not alt:
        labels = " and ".join(s.label or n for n, s in sliders.items())
        alt = title or f"Interactive figure with sliders for {labels}"

    if _env_on("ROBODYN_STATIC"):
        mode = "static"
        grid = dict(sliders)
    elif _quick():
        mode = "quick"
        grid = {n: _quick_grid(s) for n, s in sliders.items()}
    else:
        mode = "live"
        grid = dict(sliders)

    layout = {}
    frames, grid, start, timings, frame_dpi = _precompute(draw, grid, mode, figsize, title, dpi,
                                                          layout, reuse_figure)
    note = None
    if mode == "live":
        note = "Static preview (default values); run the notebook to move the sliders."
    html = _static_html(grid, frames, start, alt, title, figsize, note)
    fig = InteractiveFigure(draw, sliders, figsize, title, alt, dpi, mode, frames, grid, start,
                            timings, frame_dpi, html, continuous_update)
    fig._layout = layout
    fig._reuse = reuse_figure
    pdf_dpi = _pdf_dpi()
    if pdf_dpi:                  # the PDF's picture (image/png): the start frame, sharper
        values0 = {n: float(grid[n].values[start[n]]) for n in grid}
        png = _render(draw, values0, figsize, pdf_dpi, title, palette=False,
                      layout={} if not reuse_figure else layout, reuse=reuse_figure)[0]
        fig.still_png = base64.b64encode(png).decode("ascii")
    if os.environ.get("ROBODYN_WIDGET_TIMINGS"):
        _write_timing(fig, draw, sliders)
    return fig


def _check_signature(draw, sliders):
    """Every slider name must be a keyword of ``draw`` (unless it takes ``**values``)."""
    import inspect
    try:
        sig = inspect.signature(draw)
    except (TypeError, ValueError):                      # builtins, some callables: cannot tell
        return
    ps = sig.parameters
    if any(p.kind is p.VAR_KEYWORD for p in ps.values()):
        return
    names = [n for n, p in ps.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    missing = [n for n in sliders if n not in names[1:]]
    if missing:
        raise ValueError(f"interactive_figure: draw has no parameter {', '.join(missing)}; "
                         f"expected draw(fig, {', '.join(sliders)}), got draw{sig}")


def _precompute(draw, grid, mode, figsize, title, dpi, layout, reuse=False):
    """Render the frames within the budget; returns (data URIs, grid, start indices, ms, dpi).

    The size of one frame is measured (the default one); from it the dpi (when automatic, not
    below 60) and then the grid are reduced until the estimate fits, the frames are rendered and
    the measured total is checked; if frames came out larger than estimated, again with the
    estimate scaled by the excess.
    """
    names = list(grid)
    start = {n: grid[n].default_index for n in names}
    values0 = {n: float(grid[n].values[start[n]]) for n in names}
    d = dpi or _DEFAULT_DPI
    png0, ms0 = _render(draw, values0, figsize, d, title, layout=layout, reuse=reuse)
    timings = [ms0]
    if mode == "live":
        uri = "data:image/png;base64," + base64.b64encode(png0).decode("ascii")
        return [uri], grid, start, timings, d

    what = f"interactive_figure {title!r}" if title else "interactive_figure"
    safety = 1.1                                          # frames vary a little in size
    reduced = []
    total = 0
    for _attempt in range(4):
        def estimate():
            return math.prod(grid[n].steps for n in names) * _b64_len(len(png0)) * safety
        if estimate() > FRAME_BUDGET_BYTES and dpi is None and d > _MIN_DPI:
            new_d = max(_MIN_DPI, math.floor(d * math.sqrt(FRAME_BUDGET_BYTES / estimate())))
            if new_d < d:
                reduced.append(f"dpi {d:g} -> {new_d:g}")
                d = new_d
                png0, ms = _render(draw, values0, figsize, d, title, layout=layout, reuse=reuse)
                timings.append(ms)
        while estimate() > FRAME_BUDGET_BYTES and max(grid[n].steps for n in names) > 2:
            big = max(names, key=lambda n: grid[n].steps)
            old = grid[big].steps
            ratio = FRAME_BUDGET_BYTES / estimate()
            new = int(old * (math.sqrt(ratio) if len(names) == 2 else ratio))
            new = max(2, min(new, old - 1))
            grid[big] = grid[big].resampled(new)
            reduced.append(f"{big} steps {old} -> {new}")
        start = {n: grid[n].default_index for n in names}
        v0 = {n: float(grid[n].values[start[n]]) for n in names}
        if v0 != values0:                                  # the default moved with the grid
            values0 = v0
            png0, ms = _render(draw, values0, figsize, d, title, layout=layout, reuse=reuse)
            timings.append(ms)
        uris = []
        for idx in itertools.product(*(range(grid[n].steps) for n in names)):
            if all(idx[i] == start[n] for i, n in enumerate(names)):
                png = png0
            else:
                png, ms = _render(draw, {n: float(grid[n].values[idx[i]])
                                         for i, n in enumerate(names)}, figsize, d, title,
                                  layout=layout, reuse=reuse)
                timings.append(ms)
            uris.append("data:image/png;base64," + base64.b64encode(png).decode("ascii"))
        total = sum(len(u) for u in uris)
        if total <= FRAME_BUDGET_BYTES:
            if reduced:
                warnings.warn(f"{what}: reduced {', '.join(reduced)} to keep the frame data "
                              f"within the {FRAME_BUDGET_BYTES / 1e6:g} MB budget "
                              f"({len(uris)} frames, {total / 1e6:.2f} MB); pass fewer steps, "
                              f"a smaller figsize or a lower dpi to choose yourself",
                              BudgetWarning, stacklevel=3)
            return uris, grid, start, timings, d
        # measured more than estimated: raise the estimate by the excess and try again
        safety = 1.05 * total / (len(uris) * _b64_len(len(png0)))
    raise RuntimeError(f"{what}: could not fit the frames within {FRAME_BUDGET_BYTES} bytes "
                       f"(last attempt {total} bytes); pass fewer steps or a smaller figsize")


_TIMING_SAMPLES = 5


def _write_timing(fig, draw, sliders):
    """Append the timing record: the live callback (draw + RGB PNG at the live dpi) measured at
    the default and neighbouring grid points, plus the static frames' render times. Wall-clock
    time (what a reader waits for) and the process's CPU time (the same work without waiting
    for a busy processor: on a loaded machine the wall-clock figures grow, these do not)."""
    ms, cpu_ms = [], []
    dpi = fig._dpi or _DEFAULT_DPI
    for k in range(_TIMING_SAMPLES):
        vals = {n: float(s.values[(s.default_index + k) % s.steps]) for n, s in sliders.items()}
        c0 = time.process_time()
        ms.append(_render(draw, vals, fig.figsize, dpi, fig.title, palette=False,
                          layout=fig._layout, reuse=fig._reuse)[1])
        cpu_ms.append((time.process_time() - c0) * 1e3)
    rec = {"title": fig.title, "params": list(sliders), "frames": fig.frames,
           "median_ms": round(float(np.median(ms)), 3), "max_ms": round(float(np.max(ms)), 3),
           "median_cpu_ms": round(float(np.median(cpu_ms)), 3),
           "max_cpu_ms": round(float(np.max(cpu_ms)), 3),
           "bytes": fig.frame_bytes, "samples": len(ms), "live_dpi": dpi,
           "static_median_ms": round(float(np.median(fig.timings_ms)), 3),
           "frame_dpi": fig.dpi, "mode": fig.mode}
    with open(os.environ["ROBODYN_WIDGET_TIMINGS"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")


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


# --------------------------------------------------------------------------
# animation
# --------------------------------------------------------------------------

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
    palette PNGs (as in :func:`interactive_figure`), the player's external icon font replaced by
    plain glyphs (it works offline) and alt text on its image.

    Page-weight budget, :data:`FRAME_BUDGET_BYTES` = 2 MB of frame data: the dpi (``dpi=None``:
    100 or lower, not below 60) is chosen from the measured size of the first frame; if even
    that does not fit, frames are dropped evenly and the interval stretched so the duration
    stays. A :class:`BudgetWarning` says what was reduced.

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
        raise TypeError(f"animation: draw: expected a function draw(fig, i), got "
                        f"{_checks._describe(draw)}")
    if isinstance(frames, (bool, np.bool_)):
        raise TypeError("animation: frames: expected a number of frames or a sequence, got a bool")
    if isinstance(frames, (int, np.integer)):
        if frames < 1:
            raise ValueError(f"animation: frames: expected at least 1 frame, got {frames}")
        seq = list(range(int(frames)))
    else:
        try:
            seq = list(frames)
        except TypeError:
            raise TypeError(f"animation: frames: expected an int or a sequence, got "
                            f"{_checks._describe(frames)}") from None
        if not seq:
            raise ValueError("animation: frames: expected a non-empty sequence, got an empty one")
    interval = _real(interval, "animation: interval")
    if interval <= 0:
        raise ValueError(f"animation: interval: expected milliseconds > 0, got {interval}")
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

    if dpi is not None:
        dpi = _real(dpi, "animation: dpi")
        if not 10 <= dpi <= 600:
            raise ValueError(f"animation: dpi: expected a value in [10, 600], got {dpi}")
    d = dpi
    probe = _new_figure(figsize, d or _DEFAULT_DPI)    # one frame first: errors and size
    one(probe, seq[0])
    if not probe.axes:
        raise ValueError(f"animation: draw(fig, {seq[0]!r}) drew nothing into fig; make the axes "
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


# --------------------------------------------------------------------------
# drawing primitives
# --------------------------------------------------------------------------

_AXIS_COLORS = ("tab:red", "tab:green", "tab:blue")


def _is3d(ax):
    return getattr(ax, "name", "") == "3d"


def _axes_arg(ax, fname):
    from matplotlib.axes import Axes
    if not isinstance(ax, Axes):
        raise TypeError(f"{fname}: ax: expected a matplotlib Axes (e.g. fig.add_subplot() or "
                        f"fig.add_subplot(projection='3d')), got {_checks._describe(ax)}")
    return ax


def _numeric(x, shape, what):
    if _checks.is_symbolic(x):
        raise TypeError(f"{what}: expected numbers, got sympy expressions; substitute values "
                        f"first (e.g. with .subs or lambdify)")
    if len(shape) == 1:
        a = _checks.vector(x, shape[0], what)
    else:
        a = _checks.matrix(x, shape, what)
    return np.asarray(a, dtype=float)


def _line(ax, pts, **kw):
    pts = np.asarray(pts, dtype=float)
    if _is3d(ax):
        return ax.plot(pts[:, 0], pts[:, 1], pts[:, 2], **kw)[0]
    return ax.plot(pts[:, 0], pts[:, 1], **kw)[0]


def draw_frame(ax, H, length=0.2, label=None):
    """Draw the x, y, z axes of the pose ``H`` (4x4, in the axes' world frame) as red, green and
    blue segments of ``length`` from its origin. On 2D axes only x and y are drawn, projected on
    the xy plane.

    Returns
    -------
    list of artists: the axis lines (3 in 3D, 2 in 2D), then the label text if any.

    >>> fig = Figure(); ax = fig.add_subplot()
    >>> len(draw_frame(ax, np.eye(4), label='{s}'))
    3
    """
    _axes_arg(ax, "draw_frame")
    H = _numeric(H, (4, 4), "draw_frame: H (a 4x4 pose)")
    length = _real(length, "draw_frame: length")
    p, R = H[:3, 3], H[:3, :3]
    k = 3 if _is3d(ax) else 2
    arts = [_line(ax, [p, p + length * R[:, i]], color=_AXIS_COLORS[i], lw=1.8,
                  solid_capstyle="round") for i in range(k)]
    if label is not None:
        if _is3d(ax):
            arts.append(ax.text(*p, f" {label}", fontsize=9))
        else:
            arts.append(ax.text(p[0], p[1], f" {label}", fontsize=9, va="top"))
    return arts


def draw_screw_axis(ax, S, H=None, length=1.0, color="tab:purple", label=None):
    r"""Draw a screw axis ``S = (omega, v)``: for a unit omega (revolute, helical) a dashed line
    of ``length`` along omega through the point :math:`r = \omega\times v` nearest the origin,
    with an arrow along omega; for omega = 0 (prismatic) an arrow of ``length`` along v from the
    origin of ``H``. ``S`` is given in the frame of the pose ``H`` (default: the world frame) and
    drawn in the world frame, :math:`\mathcal S_{world} = \mathrm{Ad}_H\,\mathcal S`.

    On 2D axes the projection on the xy plane is drawn (an axis along z appears as a point).

    Returns
    -------
    list of artists.

    >>> fig = Figure(); ax = fig.add_subplot(projection='3d')
    >>> len(draw_screw_axis(ax, [0, 0, 1, 0, -1, 0])) >= 1
    True
    """
    _axes_arg(ax, "draw_screw_axis")
    S = _numeric(S, (6,), "draw_screw_axis: S (a screw axis (omega, v))")
    length = _real(length, "draw_screw_axis: length")
    origin = np.zeros(3)
    if H is not None:
        H = _numeric(H, (4, 4), "draw_screw_axis: H (a 4x4 pose)")
        S = adjoint(H) @ S
        origin = H[:3, 3]
    return _screw_artists(ax, S, origin, length, color, label)


def _screw_artists(ax, S, centre, length, color, label=None):
    """Artists of the world-frame screw axis S, centred at the axis point nearest ``centre``."""
    w, v = S[:3], S[3:]
    nw = np.linalg.norm(w)
    if nw > 1e-9:
        u = w / nw
        r = np.cross(u, v / nw)
        c = r + u * (u @ (centre - r))
        if not _is3d(ax) and np.linalg.norm(u[:2]) < 1e-6:
            # an axis normal to the drawing plane: the usual dot / cross symbol
            sym = r"$\odot$" if u[2] > 0 else r"$\otimes$"
            return [ax.plot([c[0]], [c[1]], ls="none", marker=sym, ms=13, color=color,
                            label=label, zorder=4)[0]]
        tail, tip = c - u * length / 2, c + u * length / 2
        style = "dashed"
    else:
        nv = np.linalg.norm(v)
        if nv < 1e-9:
            raise ValueError("draw_screw_axis: S: expected a unit omega, or omega = 0 and a "
                             "unit v, got S = 0")
        u = v / nv
        tail, tip = centre, centre + u * length
        style = "solid"
    arts = [_line(ax, [tail, tip], color=color, lw=1.2, ls=style, label=label)]
    arts.append(_arrow(ax, tip - 0.2 * length * u, tip, color))
    return arts


def _arrow(ax, tail, tip, color):
    if _is3d(ax):
        d = tip - tail
        return ax.quiver(*tail, *d, color=color, arrow_length_ratio=0.6, lw=1.2)
    return ax.annotate("", xy=tip[:2], xytext=tail[:2],
                       arrowprops=dict(arrowstyle="-|>", color=color, lw=1.2,
                                       shrinkA=0, shrinkB=0))


def chain_points(chain, q):
    """The points of the polyline :func:`draw_chain` draws, (k, 3) in the world frame: the base
    origin, for each revolute or helical joint the point of its current axis nearest the previous
    point, and the end-effector position. Prismatic joints add no point.

    >>> from robodyn.models import planar_rr
    >>> np.round(chain_points(planar_rr(), [0.0, np.pi / 2]), 12)
    array([[0., 0., 0.],
           [0., 0., 0.],
           [1., 0., 0.],
           [1., 1., 0.]])
    """
    if not isinstance(chain, SerialChain):
        raise TypeError(f"draw_chain: chain: expected a SerialChain, got "
                        f"{_checks._describe(chain)}")
    if chain.symbolic:
        raise TypeError(f"draw_chain: {chain!r} has symbolic parameters; build it with numbers "
                        f"(e.g. planar_rr(1.0, 0.8)) to draw it")
    q = _numeric(q, (chain.n,), f"draw_chain: q (one value per joint of the {chain.n}-joint "
                                f"chain)")
    J = jacobian_space(chain, q)
    pts = [np.zeros(3)]
    for i, kind in enumerate(chain.joint_types):
        if kind == "prismatic":
            continue
        w, v = J[:3, i], J[3:, i]
        w_unit = w / np.linalg.norm(w)
        r = np.cross(w_unit, v / np.linalg.norm(w))
        p = pts[-1]
        pts.append(r + w_unit * (w_unit @ (p - r)))
    pts.append(np.asarray(fk_space(chain, q), dtype=float)[:3, 3])
    return np.array(pts)


def draw_chain(ax, chain, q, frames=False, screws=False, link_frames=False, color="0.25",
               length=None, label=None, radius=None):
    """Draw a serial chain at ``q`` as a polyline of its links, with joints as markers.

    The polyline (:func:`chain_points`) starts at the base origin, visits, for each revolute or
    helical joint, the point of its current axis (column i of :func:`~robodyn.jacobian_space`)
    nearest the previous point, and ends at the end-effector position of
    :func:`~robodyn.fk_space`; prismatic joints add no point. On 2D axes the xy projection is
    drawn (planar robots), on 3D axes the chain itself; the aspect is made equal.

    Parameters
    ----------
    ax : matplotlib Axes, 2D or 3D
    chain : SerialChain (numeric)
    q : array_like (n,), rad / m
    frames : bool
        draw the end-effector frame.
    screws : bool
        draw each joint's current screw axis (:func:`draw_screw_axis`).
    link_frames : bool
        draw the link centre-of-mass frames (:func:`~robodyn.link_poses`).
    color : matplotlib colour of the links.
    length : float, optional
        length of frame axes and screw arrows; default 15% of the chain's extent.
    label : str, optional
        legend label of the links (default: the chain's name).
    radius : float, optional
        fix the axes to a square/cube of half-width ``radius`` (m) around the base, so that
        frames of an interactive figure or animation do not jump; default: fit the drawing.

    Returns
    -------
    list of artists; ``[0]`` is the link polyline (its data are the points above), ``[1]`` the
    joint markers, then the optional frames and screw axes.

    Raises
    ------
    TypeError
        for a symbolic chain, a non-Axes ``ax``; ``ValueError`` for a wrong-length ``q`` or
        ``link_frames=True`` on a chain without link frames.

    >>> from robodyn.models import planar_rr
    >>> fig = Figure(); ax = fig.add_subplot()
    >>> arts = draw_chain(ax, planar_rr(), [0.3, 0.5], frames=True)
    >>> np.allclose(arts[0].get_xydata()[-1], fk_space(planar_rr(), [0.3, 0.5])[:2, 3])
    True
    """
    _axes_arg(ax, "draw_chain")
    pts = chain_points(chain, q)
    q = np.asarray(q, dtype=float)
    if link_frames and chain.link_homes is None:
        raise ValueError(f"draw_chain: link_frames=True needs link frames, and {chain!r} has no "
                         f"link_homes")
    extent = max(np.ptp(pts, axis=0).max(), np.linalg.norm(pts, axis=1).max(), 1e-3)
    L = 0.15 * extent if length is None else _real(length, "draw_chain: length")
    arts = [_line(ax, pts, color=color, lw=2.5, solid_capstyle="round",
                  label=chain.name if label is None else label)]
    joints = pts[1:-1]
    base = pts[:1]
    jp = np.vstack([base, joints]) if len(joints) else base
    if _is3d(ax):
        arts.append(ax.plot(jp[:, 0], jp[:, 1], jp[:, 2], ls="none", marker="o", ms=6,
                            mfc="white", mec=color, mew=1.5)[0])
    else:
        arts.append(ax.plot(jp[:, 0], jp[:, 1], ls="none", marker="o", ms=6, mfc="white",
                            mec=color, mew=1.5, zorder=3)[0])
    if frames:
        arts += draw_frame(ax, fk_space(chain, q), length=L)
    if link_frames:
        for H in link_poses(chain, q):
            arts += draw_frame(ax, H, length=0.6 * L)
    if screws:
        J = jacobian_space(chain, q)
        k = 1
        for i, kind in enumerate(chain.joint_types):
            S = J[:, i]
            if kind == "prismatic":                      # arrow along v from the last point
                arts += _screw_artists(ax, S, pts[k - 1], L, "tab:purple")
            else:
                arts += _screw_artists(ax, S, pts[k], 2 * L, "tab:purple")
                k += 1
    set_equal_aspect(ax, radius=radius)
    return arts


def set_equal_aspect(ax, radius=None, centre=None):
    """Give the axes equal scale on every axis: on 3D axes a cube around the current limits (or
    of half-width ``radius`` around ``centre``, default the origin), on 2D axes
    ``ax.set_aspect('equal')`` (with ``radius``, limits +-radius around ``centre``).
    Returns ``ax``.

    >>> fig = Figure(); ax = fig.add_subplot(projection='3d')
    >>> _ = ax.plot([0, 2], [0, 1], [0, 0.5])
    >>> _ = set_equal_aspect(ax)
    >>> spans = [b - a for a, b in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim())]
    >>> bool(np.allclose(spans, spans[0]) and spans[0] >= 2)
    True
    >>> set_equal_aspect(ax, radius=1.5).get_zlim()
    (np.float64(-1.5), np.float64(1.5))
    """
    _axes_arg(ax, "set_equal_aspect")
    three = _is3d(ax)
    if radius is not None:
        radius = _real(radius, "set_equal_aspect: radius")
        if radius <= 0:
            raise ValueError(f"set_equal_aspect: radius: expected a length > 0 (m), got {radius}")
        c = np.zeros(3) if centre is None else _numeric(centre, (3,), "set_equal_aspect: centre")
        half = radius
    elif three:
        ax.autoscale_view()
        lims = np.array([ax.get_xlim3d(), ax.get_ylim3d(), ax.get_zlim3d()])
        c = lims.mean(axis=1)
        half = max((lims[:, 1] - lims[:, 0]).max() / 2, 1e-6)
    if not three:
        if radius is not None:
            ax.set_xlim(c[0] - half, c[0] + half)
            ax.set_ylim(c[1] - half, c[1] + half)
        ax.set_aspect("equal", adjustable="box")
        return ax
    ax.set_xlim3d(c[0] - half, c[0] + half)
    ax.set_ylim3d(c[1] - half, c[1] + half)
    ax.set_zlim3d(c[2] - half, c[2] + half)
    ax.set_box_aspect((1, 1, 1))
    return ax


def arm_figure(chain, q, *, planar=None, title=None, figsize=(5, 4), **draw_kw):
    """A new figure with the chain drawn at ``q`` (2D for a planar chain moving in the xy
    plane, else 3D), axes labelled in metres. Returns the ``Figure`` (not shown by pyplot; a
    notebook displays it as the cell's value).

    >>> from robodyn.models import spatial_rrr
    >>> fig = arm_figure(spatial_rrr(), [0.2, -0.4, 0.8], frames=True)
    >>> fig.axes[0].name
    '3d'
    >>> fig._repr_png_()[:4]        # a notebook shows it as a picture
    b'\\x89PNG'
    """
    if not isinstance(chain, SerialChain):
        raise TypeError(f"arm_figure: chain: expected a SerialChain, got "
                        f"{_checks._describe(chain)}")
    if planar is None:
        S = np.asarray(chain.screws, dtype=float) if not chain.symbolic else None
        planar = S is not None and bool(
            np.allclose(S[0:2], 0) and np.allclose(S[5], 0)
            and np.allclose(np.asarray(chain.home, dtype=float)[2, 3], 0))
    fig = _new_figure(figsize, _DEFAULT_DPI)
    ax = fig.add_subplot() if planar else fig.add_subplot(projection="3d")
    draw_chain(ax, chain, q, **draw_kw)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    if not planar:
        ax.set_zlabel("z (m)")
    else:
        ax.grid(True, lw=0.3)
    ax.set_title(title if title is not None else f"{chain.name} at q = "
                 f"({', '.join(_fmt(x) for x in np.asarray(q, dtype=float))})")
    # a pyplot-free Figure is shown by IPython only through a rich repr (or matplotlib-inline,
    # which is registered only once pyplot has been imported): give it one
    fig._repr_png_ = lambda: _png_bytes(fig, palette=False)
    return fig
