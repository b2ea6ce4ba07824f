"""Valid calls of robodyn.urdf and robodyn.trees (issue 38, helper urdf38): small models
(the two-joint welded.urdf fixture, a floating base) so that each substitution is cheap.
Format: see tests/_fuzz_api_support.py."""
import dataclasses
from pathlib import Path

import numpy as np

from robodyn import trees, urdf

_FILE = str(Path(__file__).resolve().parents[1] / "fixtures" / "urdf" / "welded.urdf")
_M = urdf.load_urdf(_FILE)
_F = urdf.load_urdf(_FILE, floating_base=True)
_Q = np.array([0.3, 0.1])
_NU = np.linspace(-1.0, 1.0, 8)
_POSE = np.array([[0.0, -1.0, 0.0, 0.1], [1.0, 0.0, 0.0, 0.2], [0.0, 0.0, 1.0, 0.3],
                  [0.0, 0.0, 0.0, 1.0]])


def _fields():
    return {f.name: getattr(_M, f.name) for f in dataclasses.fields(_M) if f.name != "_cache"}


CALLS = {
    "robodyn.urdf.load_urdf": lambda: ((_FILE,), {"floating_base": True}),
    "robodyn.urdf.example_robots": lambda: ((), {}),
    "robodyn.urdf.lock_joints": lambda: ((_M, ["rail"]), {"q": _Q}),
    "robodyn.urdf.serial_chain": lambda: ((_M,), {"tip": "slide"}),
    "robodyn.urdf.RobotModel": lambda: ((), _fields()),
    "robodyn.trees.body_poses": lambda: ((_F, _Q), {"base_pose": _POSE}),
    "robodyn.trees.frame_pose": lambda: ((_F, _Q, "plate"), {"base_pose": _POSE}),
    "robodyn.trees.frame_jacobian": lambda: ((_F, _Q, "slide"), {"base_pose": _POSE}),
    "robodyn.trees.crba": lambda: ((_F, _Q), {}),
    "robodyn.trees.rnea": lambda: ((_F, _Q, _NU, _NU[::-1].copy()),
                                   {"base_pose": _POSE, "gravity": np.array([0.0, 0.0, -9.81])}),
    "robodyn.trees.aba": lambda: ((_F, _Q, _NU, _NU[::-1].copy()),
                                  {"base_pose": _POSE, "gravity": np.array([0.0, 0.0, -9.81])}),
}

TEXT = {
    # a path or a robot's name; link and joint names: looked up, never run or parsed
    "robodyn.urdf.load_urdf": ("source", "package_dirs", "name"),
    "robodyn.urdf.lock_joints": ("joints",),
    "robodyn.urdf.serial_chain": ("tip",),
    "robodyn.trees.frame_pose": ("frame",),
    "robodyn.trees.frame_jacobian": ("frame",),
    "robodyn.urdf.RobotModel": ("name", "joint_names", "joint_types", "frames", "meshes",
                                "base_link", "source"),
}

CALLS.update({
    "robodyn.trees.rnea_derivatives": lambda: ((_F, _Q, _NU, _NU[::-1].copy()),
                                               {"base_pose": _POSE}),
    "robodyn.trees.aba_derivatives": lambda: ((_F, _Q, _NU, _NU[::-1].copy()),
                                              {"base_pose": _POSE}),
})
