"""Valid calls of robodyn.recursive_codegen (issue 38, helper codegen42): the two-joint
welded.urdf fixture (a general axis and a slide), whose module builds in a fraction of a
second. Format: see tests/_fuzz_api_support.py."""
from pathlib import Path

import numpy as np

from robodyn import urdf

_FILE = str(Path(__file__).resolve().parents[1] / "fixtures" / "urdf" / "welded.urdf")
_M = urdf.load_urdf(_FILE)
_G = np.array([0.0, 0.0, -9.81])

CALLS = {
    "robodyn.recursive_codegen.recursive_source": lambda: ((_M,), {"gravity": _G}),
    "robodyn.recursive_codegen.compile_recursive": lambda: ((_M,), {"gravity": _G}),
}
