"""Valid calls registered by num34 (issue 28) for the API fuzzer: arguments that are arrays by
design get an array in their valid call (a scalar valid call makes the fuzzer refuse arrays)."""
import numpy as np

CALLS = {
    "robodyn.kane.spin_up_profile": lambda: ((np.array([0.0, 5.0, 15.0, 20.0]),),
                                                 {"final_rate": 6.0, "duration": 15.0}),
}
CALLS["robodyn.models.random_chain"] = lambda: ((4,), {"rng": 7, "prismatic": 0.3,
                                                      "helical": 0.1})
"""A seed, not a Generator: a Generator is advanced by the fuzzer's base call, so the legal
alternatives would be compared with a chain drawn from another state."""
CALLS["robodyn.kane.mode_shape"] = lambda: (
    (1.8751040687119611, 1.0, np.array([0.0, 0.5, 1.0])), {"derivative": 1})
