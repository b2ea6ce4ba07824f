"""Valid calls registered by core37 (issue 37) for the API fuzzer."""
import numpy as np

from robodyn.models import planar_rr

CALLS = {
    # near end points: the fuzzer's "negated" end point (-q_end - 1) stays a geodesic the
    # shooting method reaches in about a second (from the doctest's end point it takes 20 s)
    "robodyn.lagrange.geodesic": lambda: ((planar_rr(), [0.0, 0.0], [0.2, 0.1]),
                                          {"n_points": 51}),
}
