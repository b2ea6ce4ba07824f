"""Valid calls of the vehicle carrying a kinematic tree (issue 38, helper trees42): the
two-joint welded.urdf fixture with a floating base, so that each substitution is cheap.
Format: see tests/_fuzz_api_support.py."""
from pathlib import Path

from robodyn import urdf

_NAME = "robodyn.port_hamiltonian.VehicleManipulator.from_tree"

_FILE = str(Path(__file__).resolve().parents[1] / "fixtures" / "urdf" / "welded.urdf")
_F = urdf.load_urdf(_FILE, floating_base=True)

CALLS = {
    _NAME: lambda: ((_F,), {"name": "welded"}),
}

TEXT = {
    # the vehicle's name, used in its messages: free text by design (never run or parsed)
    _NAME: ("name",),
}
