"""Rendering frames: a draw function to PNG bytes on an Agg canvas, and the figure reuse that
redraws only the animated artists (:func:`~robodyn.viz.frames.animated`, :func:`~robodyn.viz.frames.clear_animated`)."""
from __future__ import annotations

import gc
import io
import time

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from .. import _value_checks
from ._common import _axes_arg


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
    once. With ``reuse`` (see :func:`~robodyn.viz.interactive.interactive_figure`) one figure per dpi is kept in ``layout``
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
        raise _value_checks.refusal(
            ValueError, f"interactive_figure: draw(fig, {_kwargs(values)}) drew nothing into "
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

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot()
    >>> line, = animated(ax.plot([0, 1], [0, 1]))
    >>> line.get_animated()
    True
    """
    out = []
    _mark_animated(artists, out, 0)
    return out


_MAX_NESTING = 8


def _mark_animated(x, out, depth):
    """Mark ``x`` (an artist, or an iterable of them nested at most 8 deep) as animated."""
    if hasattr(x, "set_animated") and hasattr(x, "get_animated"):
        x.set_animated(True)
        out.append(x)
        return
    if depth > _MAX_NESTING or isinstance(x, (str, bytes, dict)) or \
            not hasattr(x, "__iter__") or isinstance(x, np.ndarray) and x.dtype.kind != "O":
        raise _value_checks.error("animated: artists", "a matplotlib artist or an iterable of artists "
                            f"(nested at most {_MAX_NESTING} deep)", x, exc=TypeError)
    for k, a in enumerate(x):
        if k >= 100_000:
            raise _value_checks.error("animated: artists", "at most 100000 artists", "more")
        _mark_animated(a, out, depth + 1)


def clear_animated(where):
    """Remove the animated artists of the previous frame (lines, patches, texts and annotations,
    collections, images) from one axes, or from every axes of a figure, keeping the axes' own
    title and labels: a draw function with ``reuse_figure=True`` calls it, then draws the new
    frame's moving parts (e.g. :func:`~robodyn.viz.drawing.draw_chain`) and marks them with :func:`~robodyn.viz.frames.animated`.
    Artists it updates in place instead (``set_data``) belong on other axes.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot()
    >>> _ = animated(ax.plot([0, 1])); _ = ax.plot([1, 0])
    >>> clear_animated(fig); len(ax.lines)
    1
    """
    if isinstance(where, Figure):
        axes = list(where.axes)
    else:
        axes = [_axes_arg(where, "clear_animated", "where")]
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
        raise _value_checks.refusal(ValueError, f"interactive_figure: draw(fig, {_kwargs(values)}) with "
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

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
