"""Valid calls of robodyn.viz.Scene (the 3D scene) for the API fuzzer."""
import numpy as np

from robodyn.viz import Scene

_T = np.linspace(0.0, 1.0, 3)
_POSES = np.tile(np.eye(4), (3, 1, 1))


def _scene():
    s = Scene(_T, title="t", alt="a scene")
    s.line(np.zeros((2, 3)) + [[0, 0, 0], [1, 0, 0]], name="l")
    return s


CALLS = {
    "robodyn.viz.Scene": lambda: ((_T,), {"title": "t", "alt": "a scene", "still": 1,
                                          "height": 300, "time_label": "t", "unit": "s"}),
    "robodyn.viz.Scene.line": lambda: ((_scene(), np.array([[0.0, 0, 0], [1, 0, 0]])),
                                       {"name": "l", "color": "#123456", "width": 4,
                                        "markers": True}),
    "robodyn.viz.Scene.points": lambda: ((_scene(), np.zeros((3, 2, 3))),
                                         {"name": "p", "color": "#00ff00", "size": 5}),
    "robodyn.viz.Scene.triad": lambda: ((_scene(), _POSES), {"length": 0.2, "name": "f"}),
    "robodyn.viz.Scene.box": lambda: ((_scene(), np.eye(4), [0.2, 0.3, 0.4]),
                                      {"name": "b", "color": "#7f7f7f", "opacity": 0.5}),
    "robodyn.viz.Scene.screw_axis": lambda: ((_scene(), [0, 0, 0], [0, 0, 1], 0.1),
                                             {"length": 1.0, "name": "s", "color": "#9467bd"}),
    "robodyn.viz.Scene.plane": lambda: ((_scene(), [0, 0, 0], [0, 0, 1], 2.0),
                                        {"name": "floor", "color": "#bcbd22", "opacity": 0.25}),
    "robodyn.viz.Scene.to_plotly": lambda: ((_scene(),), {}),
    "robodyn.viz.Scene.html": lambda: ((_scene(),), {"static": True}),
    "robodyn.viz.Scene.still_png": lambda: ((_scene(),), {"dpi": 60}),
    "robodyn.viz.scene.plotly_js_path": lambda: ((), {}),
}
