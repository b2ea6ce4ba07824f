"""Valid calls of robodyn.port_hamiltonian callables whose doctest call is not a plain valid one
(issue 28, helper vms34). Format: see tests/_fuzz_api_support.py."""
import numpy as np

import robodyn as rd
from robodyn import port_hamiltonian

_H = rd.homogeneous(rd.rotation([0, 0, 1], 0.3), [0.1, 0.2, 0.0])
_I = rd.spatial_inertia(2.0, [0.1, 0.2, 0.3])
_V = np.array([0.1, -0.2, 1.0, 0.5, 0.0, 0.2])


def _accel(H, V):
    return port_hamiltonian.euler_poincare(_I, V)


CALLS = {
    # the rigid-body half of robodyn.port_hamiltonian lives in robodyn.port_hamiltonian._rigid_body (vehicle re-exports
    # it), whose doctests the fuzzer's recorder does not read
    "robodyn.port_hamiltonian.coadjoint": lambda: ((np.arange(1.0, 7.0),), {}),
    "robodyn.port_hamiltonian.euler_poincare": lambda: ((_I, _V), {"W": np.ones(6)}),
    "robodyn.port_hamiltonian.dexp_inverse": lambda: ((0.1 * _V, np.ones(6)), {"order": 4}),
    "robodyn.port_hamiltonian.rigid_body_step": lambda: ((_H, _V, 0.01, _accel), {}),
    # pose_error measures how far any 4x4 matrix is from a rigid motion: a non-rigid one is
    # its input by design (the catalog's "non-rigid pose must be refused" does not apply)
    "robodyn.port_hamiltonian.pose_error": lambda: ((np.diag([1.0, 1.0, 2.0, 1.0]),), {}),
    "robodyn.port_hamiltonian.Subgroup.coadjoint": lambda: ((port_hamiltonian.SUBGROUPS["planar"], [1.0, 2.0, 3.0]), {}),
    # the doctest's call shows a refusal; this one is the default label's
    "robodyn.port_hamiltonian.check_pose": lambda: ((_H,), {}),
    "robodyn.port_hamiltonian.Subgroup.contains": lambda: ((port_hamiltonian.SUBGROUPS["planar"], _H), {"tol": 1e-9}),
}

TEXT = {
    # the label of H in check_pose's messages: free text by design (never run or parsed)
    "robodyn.port_hamiltonian.check_pose": ("name",),
}
