"""Valid calls of the vehicle carrying a kinematic tree (issue 38, helper trees42): the
two-joint welded.urdf fixture with a floating base, so that each substitution is cheap.
Format: see tests/_fuzz_api_support.py."""
from pathlib import Path

from robodyn import urdf

try:            # the vehicle's public home: robodyn.vehicle, or robodyn.port_hamiltonian once
    from robodyn import vehicle as _home        # the library is in packages (issue 37)
except ImportError:
    from robodyn import port_hamiltonian as _home
_NAME = f"{_home.__name__}.VehicleManipulator.from_tree"

_FILE = str(Path(__file__).resolve().parents[1] / "fixtures" / "urdf" / "welded.urdf")
_F = urdf.load_urdf(_FILE, floating_base=True)

CALLS = {
    _NAME: lambda: ((_F,), {"name": "welded"}),
}

TEXT = {
    # the vehicle's name, used in its messages: free text by design (never run or parsed)
    _NAME: ("name",),
}
