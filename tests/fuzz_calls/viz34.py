"""Valid calls with EVERY argument given (so that the API fuzzer substitutes each of them) for
the callables of robodyn.viz, robodyn.walking, robodyn.walking and robodyn.parallel that no
other registry file covers (issue 28, helper viz34). tests/test_fuzz_viz34_coverage.py checks
that each of these callables gets a registry call binding all of its parameters."""
import numpy as np

import robodyn.viz as viz
from robodyn import models, walking

_POSE = np.array([[0.0, -1.0, 0.0, 0.2], [1.0, 0.0, 0.0, 0.1], [0.0, 0.0, 1.0, 0.3],
                  [0.0, 0.0, 0.0, 1.0]])


def _ax():
    from matplotlib.figure import Figure
    return Figure().add_subplot()            # 2D axes: ten times cheaper than 3D ones


def _fig():
    from matplotlib.figure import Figure
    fig = Figure()
    fig.add_subplot().plot([0, 1], [0, 1])
    return fig


def _draw(fig, a, b=0.0):
    ax = fig.add_subplot()
    ax.plot([0.0, np.cos(a)], [0.0, np.sin(a) + b])


def _draw_frame(fig, i):
    fig.clear()
    fig.add_subplot().plot([0.0, np.cos(i)], [0.0, np.sin(i)])


def _noted(key, result):
    """An on_result callback that only looks."""
    return None


def _live():
    return viz.interactive_figure(_draw, {"a": viz.Slider(0.0, 1.0, steps=3, default=0.5)},
                                  figsize=(3, 2), dpi=40)


CALLS = {
    "robodyn.parallel.map_tasks": lambda: (
        (walking.rr_points, [[0.1, 0.2], [0.3, -0.4]]),
        {"keys": ["a", "b"], "scheduler": None, "workers": 1, "on_result": _noted,
         "progress": False, "retries": 1, "description": "fuzz"}),
    "robodyn.viz.Slider": lambda: ((0.5, 2.0), {"steps": 4, "default": 1.0, "label": "a"}),
    "robodyn.viz.animated": lambda: ((_ax().plot([0, 1], [0, 1]),), {}),
    "robodyn.viz.clear_animated": lambda: ((_fig(),), {}),
    "robodyn.viz.animation": lambda: (
        (_draw_frame, [0.0, 0.5, 1.0]),
        {"interval": 50, "figsize": (2.0, 1.5), "title": "t", "alt": "a", "dpi": 30}),
    "robodyn.viz.interactive_figure": lambda: (
        (_draw, {"a": viz.Slider(0.0, 1.0, steps=3, default=0.5)}),
        {"figsize": (3.0, 2.0), "title": "t", "alt": "a", "dpi": 40, "continuous_update": False,
         "reuse_figure": False}),
    "robodyn.viz.InteractiveFigure.render_png": lambda: ((_live(),), {"a": 0.5}),
    "robodyn.viz.InteractiveFigure.widget": lambda: ((_live(),), {}),
    "robodyn.viz.draw_frame": lambda: ((_ax(), _POSE), {"length": 0.3, "label": "{b}"}),
    "robodyn.viz.draw_screw_axis": lambda: (
        (_ax(), [0.0, 0.0, 1.0, 0.0, -1.0, 0.0]),
        {"H": _POSE, "length": 0.8, "color": "tab:red", "label": "S"}),
    "robodyn.viz.chain_points": lambda: ((models.planar_rr(), [0.3, 0.5]), {}),
    "robodyn.viz.draw_chain": lambda: (
        (_ax(), models.planar_rr(), [0.3, 0.5]),
        {"frames": True, "screws": True, "link_frames": False, "color": "0.25", "length": 0.2,
         "label": "arm", "radius": 2.5}),
    "robodyn.viz.set_equal_aspect": lambda: ((_ax(),), {"radius": 1.5,
                                                           "centre": [0.1, 0.2, 0.3]}),
    "robodyn.viz.arm_figure": lambda: (
        (models.spatial_rrr(), [0.2, -0.4, 0.8]),
        {"planar": False, "title": "arm", "figsize": (3.0, 2.5), "frames": True,
         "length": 0.2}),
    "robodyn.walking.CompassGait": lambda: (
        (), {"m": 5.0, "m_h": 10.0, "a": 0.5, "b": 0.5, "slope": 0.05, "g": 9.81}),
    "robodyn.walking.RimlessWheel": lambda: (
        (), {"spokes": 10, "length": 1.0, "mass": 2.0, "slope": 0.1, "g": 9.81}),
    "robodyn.walking.RimlessWheel.closed_form_fixed_point": lambda: (
        (walking.RimlessWheel(spokes=10, slope=0.2),), {}),
    "robodyn.walking.ball_zeno_time": lambda: (
        (1.0, 0.5), {"speed": 0.5, "slope": 0.1, "g": 9.81}),
    "robodyn.walking.bouncing_ball": lambda: (
        (0.5,), {"slope": 0.1, "mass": 2.0, "g": 9.81}),
    "robodyn.walking.pendulum_against_wall": lambda: (
        (0.2,), {"restitution": 0.7, "length": 1.5, "mass": 2.0, "g": 9.81}),
    "robodyn.walking.rr_arm_against_wall": lambda: (
        (1.5,), {"restitution": 0.5, "l1": 1.0, "l2": 1.0, "m1": 1.0, "m2": 1.0, "g": 9.81}),
    "robodyn.walking.rr_points": lambda: (([0.3, 0.5],), {"l1": 1.2, "l2": 0.8}),
}
