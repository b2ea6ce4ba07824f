"""Valid calls of robodyn.port_hamiltonian callables that no other registry file or doctest of
the public module calls (the VMS forms' doctests live in the private robodyn.port_hamiltonian._vms_forms).
Format: see tests/_fuzz_api_support.py."""
import functools

import numpy as np

import robodyn as rd
from robodyn import models
from robodyn import port_hamiltonian as ph
from robodyn.port_hamiltonian import VehicleManipulator

P = "robodyn.port_hamiltonian."
Q, QD, V = np.array([0.3, -0.2]), np.array([0.1, 0.4]), np.array([0.2, -0.1, 0.05])
W, TAU = np.array([0.1, -0.2, 0.3]), np.array([0.2, -0.1])


@functools.lru_cache(None)
def _vms():
    G = rd.spatial_inertia(8.0, [0.3, 0.3, 0.5])
    return VehicleManipulator.from_chain(models.planar_rr(), G, "planar")


@functools.lru_cache(None)
def _form():
    return ph.VMSForm(_vms())


def _x():
    return _form().state(rd.homogeneous(rd.rotation([0, 0, 1], 0.3), [0.1, 0.2, 0.0]), V, Q, QD)


CALLS = {
    P + "ReducedEulerLagrange": lambda: ((_vms(),), {"gravity": (0.0, -9.81, 0.0), "sign": 1}),
    P + "BoltzmannHamel": lambda: ((_vms(),), {"gravity": (0.0, -9.81, 0.0)}),
    P + "DecoupledForm.parts": lambda: ((ph.DecoupledForm(_vms()), Q), {"p": V}),
    P + "energy_momentum_step": lambda: ((_form(), _x(), 0.05), {
        "inputs": (W, TAU), "t": 0.0, "tol": 1e-12, "max_iter": 50}),
}
