"""Valid calls of the public callables added by issue 31's engine work (robodyn.derivatives),
for the API fuzzer (tests/fuzz_calls/*.py)."""
import numpy as np

import robodyn as rd
from robodyn import derivatives as dv
from robodyn import models

_G = [0.0, -9.81, 0.0]
_Z2 = np.zeros(2)
_VMS = rd.VehicleManipulator.from_chain(models.planar_rr(), rd.spatial_inertia(5.0, [1, 1, 1]))
_H = rd.homogeneous(rd.rotation([0, 0, 1], 0.3), [0.1, 0.2, 0.0])

CALLS = {
    "robodyn.derivatives.rnea_derivatives":
        lambda: ((models.planar_rr(), [0.3, 0.2], [0.1, -0.4], [0.5, 0.0]), {"gravity": _G}),
    "robodyn.derivatives.aba_derivatives":
        lambda: ((models.planar_rr(), [0.3, 0.2], [0.1, -0.4], [0.5, 0.0]), {"gravity": _G}),
    "robodyn.derivatives.linearized_dynamics":
        lambda: ((models.planar_rr(), [0.3, 0.2], [0.0, 0.0], [0.5, 0.0]), {"gravity": _G}),
    "robodyn.derivatives.vms_rnea_derivatives":
        lambda: ((_VMS, [0.3, 0.2], np.full(6, 0.1), [0.1, -0.4], np.zeros(6), _Z2),
                 {"base_pose": _H, "gravity": [0.0, 0.0, -9.81]}),
    "robodyn.derivatives.vms_aba_derivatives":
        lambda: ((_VMS, [0.3, 0.2], np.full(6, 0.1), [0.1, -0.4], np.zeros(6), _Z2),
                 {"base_pose": _H, "gravity": [0.0, 0.0, -9.81]}),
}
