"""Valid calls of the public callables added by contact31 (issue 31), for the API fuzzer."""
import numpy as np

CALLS = {
    "robodyn.impacts.lemke": lambda: ((np.array([[2.0, -1.0], [-1.0, 1.0]]), [-1.0, 0.0]),
                                  {"max_pivots": 50, "tol": 1e-12}),
    "robodyn.impacts.contact_impulse": lambda: (
        (np.eye(3), np.array([[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0]]), [1.0, 0.0, 0.0], 1.0),
        {"method": "lemke", "max_iter": 100, "tol": 1e-9}),
    "robodyn.impacts.cradle_simultaneous": lambda: ((5, 1.0, 1.0, 1), {"method": "auto"}),
    "robodyn.impacts.cradle_sequential": lambda: ((5, 0.9, 1.0, 2), {"max_impacts": 1000}),
    "robodyn.impacts.hertz_damping": lambda: ((0.8,), {"speed": 2.0, "stiffness": 3.0}),
    "robodyn.impacts.cradle_hertz": lambda: ((3, 1.0, 1), {"stiffness": 1.0,
                                                                 "damping": 0.0,
                                                                 "t_final": 30.0,
                                                                 "rtol": 1e-8, "n_out": 50}),
}


def _vms47():
    from robodyn import spatial_inertia
    from robodyn.models import planar_rr
    from robodyn.port_hamiltonian import VMSForm
    from robodyn.port_hamiltonian import VehicleManipulator
    return VMSForm(VehicleManipulator.from_chain(planar_rr(), spatial_inertia(5.0, [1, 1, 1])))


CALLS["robodyn.port_hamiltonian.VMSForm.accelerations"] = lambda: (
    (_vms47(), np.array([0.3, 0.4]), np.array([0.1, -0.2, 0.3, 0.0, 0.5, -0.1, 1.0, -2.0])),
    {"w": np.zeros(6), "tau": np.array([0.5, -0.5])})
