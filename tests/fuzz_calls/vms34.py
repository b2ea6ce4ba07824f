"""Valid calls of robodyn.vehicle callables whose doctest call is not a plain valid one
(issue 28, helper vms34). Format: see tests/_fuzz_api_support.py."""
import numpy as np

import robodyn as rd
from robodyn import vehicle as vh

_H = rd.homogeneous(rd.rotation([0, 0, 1], 0.3), [0.1, 0.2, 0.0])

CALLS = {
    # the doctest's call shows a refusal; this one is the default label's
    "robodyn.vehicle.check_pose": lambda: ((_H,), {}),
    "robodyn.vehicle.Subgroup.contains": lambda: ((vh.SUBGROUPS["planar"], _H), {"tol": 1e-9}),
}

TEXT = {
    # the label of H in check_pose's messages: free text by design (never run or parsed)
    "robodyn.vehicle.check_pose": ("name",),
}
