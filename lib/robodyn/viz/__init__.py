r"""Figures, interactive figures and animations: the only module of :mod:`robodyn` that imports
matplotlib and ipywidgets.

Computing modules never plot, and nothing here derives: the drawing primitives take an existing
matplotlib ``Axes`` and numbers the computing modules produced (poses, screw axes, a chain and its
joint values) and return the artists they made.

* :func:`~robodyn.viz.interactive.interactive_figure` -- a figure with up to two sliders. One object, two renderings: a live
  ipywidgets view in a Jupyter kernel, and a static HTML version (precomputed PNG frames switched by
  a tiny inline script) for the rendered book. With ``reuse_figure=True`` the draw function builds
  its figure once and then updates it; :func:`~robodyn.viz.frames.animated` and :func:`~robodyn.viz.frames.clear_animated` mark and clear
  the moving parts, which alone are redrawn per frame (the 100 ms budget of a slider move).
* :class:`~robodyn.viz.scene.Scene` -- a 3D scene the reader turns with the mouse (WebGL, plotly.js), with a time
  slider and play/pause; a matplotlib still for the PDF.
* :func:`animation` -- motion, as matplotlib's JavaScript player (``FuncAnimation.to_jshtml``),
  made offline-safe and given alt text.
* :func:`~robodyn.viz.drawing.draw_frame`, :func:`~robodyn.viz.drawing.draw_screw_axis`, :func:`~robodyn.viz.drawing.draw_chain`, :func:`~robodyn.viz.drawing.set_equal_aspect`,
  :func:`~robodyn.viz.drawing.arm_figure` -- drawing primitives for 2D and 3D axes.

Figures are built on :class:`matplotlib.figure.Figure` with an Agg canvas, never through
``pyplot``: importing this module or calling :func:`~robodyn.viz.interactive.interactive_figure` does not touch the pyplot
backend (so it works headless and leaves Jupyter's inline backend alone), and no figure is
printed twice in a notebook.

Environment variables
---------------------
``ROBODYN_STATIC=1``
    set by the book build: :func:`~robodyn.viz.interactive.interactive_figure` precomputes the full frame grid.
``ROBODYN_QUICK=1`` (:func:`robodyn.quick_mode`)
    set by the tests: a small grid (at most 3 values per parameter, all on the full grid) and at
    most 5 animation frames.
``ROBODYN_WIDGET_TIMINGS=path``
    append one JSON line per interactive figure with the time ``draw`` + PNG rendering takes.
``ROBODYN_PDF_DPI=200``
    set by the book's LaTeX build (``book/_ext/book_fixes.py``): the still picture an
    interactive figure or animation offers as ``image/png`` (what the PDF shows) is rendered at
    this dpi; the HTML frames keep theirs.

The package's modules, one concept each (all names stay importable from ``robodyn.viz``, where
they lived when it was one module): :mod:`~robodyn.viz.sliders`, :mod:`~robodyn.viz.frames`
(rendering and figure reuse), :mod:`~robodyn.viz.interactive`, :mod:`~robodyn.viz.animation`,
:mod:`~robodyn.viz.drawing`; ``_common`` holds the settings and argument checks they share and
``_static_html`` the page markup of an interactive figure.
"""
from __future__ import annotations

from ._common import FRAME_BUDGET_BYTES, MAX_PARAMS, BudgetWarning
from .animation import Animation, animation
from .drawing import (arm_figure, chain_points, draw_chain, draw_frame, draw_screw_axis,
                      set_equal_aspect)
from .frames import _render, animated, clear_animated
from .scene import Scene
from .interactive import _TIMING_SAMPLES, InteractiveFigure, interactive_figure
from .sliders import Slider, _quick_grid

__all__ = ["Slider", "interactive_figure", "InteractiveFigure", "animated", "clear_animated",
           "animation", "Animation",
           "draw_frame", "draw_screw_axis", "draw_chain", "chain_points", "set_equal_aspect",
           "arm_figure", "Scene",
           "FRAME_BUDGET_BYTES", "BudgetWarning"]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
