"""Valid calls of Kane's method on a kinematic tree (issue 38, point 2; helper treesym43): the
two-joint welded.urdf fixture with a floating base (gravity as Symbols, in the base frame), so
that each substitution is cheap. Format: see tests/_fuzz_api_support.py."""
from functools import lru_cache
from pathlib import Path

import sympy as sp

from robodyn import kane, urdf

_FILE = str(Path(__file__).resolve().parents[1] / "fixtures" / "urdf" / "welded.urdf")


@lru_cache(maxsize=1)
def _tree():
    return kane.equations_of_motion(urdf.load_urdf(_FILE, floating_base=True),
                                    gravity=sp.symbols("gx gy gz"))


CALLS = {
    "robodyn.kane.TreeEquations.partial_velocities": lambda: ((_tree(), 1), {}),
}

SKIP = {"robodyn.kane.TreeEquations": "built by its factory function from checked arguments "
        "(kane.equations_of_motion of a RobotModel); the class is the result's type, not an "
        "entry point"}
