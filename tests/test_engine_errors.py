"""The compiled engines raise robodyn's own errors (issue 37): a refusal of ``_engine.c`` or
``_tree_engine.c`` is a :class:`robodyn.RobodynError` (``ArgumentTypeError``, also a
``TypeError``; ``ArgumentError``, also a ``ValueError``) with the house message
``function: argument: expected ..., got ...``, not a builtin ``TypeError`` of its own wording."""
import re

import numpy as np
import pytest

import robodyn
from robodyn import dynamics, models, trees

ENGINE = dynamics._recursions._engine()
pytestmark = pytest.mark.skipif(ENGINE is None, reason="no C compiler: the numpy path runs")

HOUSE = r"^engine\.\w+: [\w ,]+: expected .+, got .+"
"""The house form of a message: function: argument: expected ..., got ..."""



@pytest.mark.parametrize("call, cls, message", [
    (lambda e: e.chain(1, 2, 3), robodyn.ArgumentTypeError,
     r"^engine\.chain: arguments: expected 4 \(basis, K, mass, home\), got 3$"),
    (lambda e: e.chain(*[np.zeros(3)] * 4), robodyn.ArgumentTypeError,
     r"^engine\.chain: basis, K, mass, home: expected float64 arrays .*got malformed"),
    (lambda e: e.crba("not a handle", np.zeros(2)), robodyn.ArgumentTypeError,
     r"^engine\.crba: chain: expected the chain handle of engine\.chain, got str$"),
    (lambda e: e.rnea(1), robodyn.ArgumentTypeError,
     r"^engine\.rnea: arguments: expected \d+, got 1$"),
    (lambda e: e.pose_gravity(np.eye(4), np.zeros(3), "1e-9"), robodyn.ArgumentTypeError,
     r"^engine\.pose_gravity: tol: expected a real number, got str$"),
    (lambda e: e.pose_gravity(np.eye(4), np.zeros(3), True), robodyn.ArgumentTypeError,
     r"^engine\.pose_gravity: tol: expected a real number, got bool$"),
    (lambda e: e.pose_gravity(np.eye(4), np.zeros(3), 10**400), robodyn.ArgumentError,
     r"^engine\.pose_gravity: tol: expected a real number, got an integer too large"),
    (lambda e: e.rnea_derivatives(object(), 1, 2, 3, 4), robodyn.ArgumentTypeError,
     r"^engine\.rnea_derivatives: chain: expected the chain handle of engine\.chain, got "
     r"object$"),
])
def test_the_engine_raises_the_library_errors(call, cls, message):
    with pytest.raises(cls, match=message) as info:
        call(ENGINE)
    assert isinstance(info.value, robodyn.RobodynError)
    assert type(info.value) is cls                      # not a builtin TypeError/ValueError
    assert re.match(HOUSE, str(info.value))


def test_the_engine_still_answers_good_input():
    """The engine's good path is unchanged: the compiled mass matrix equals the numpy one."""
    chain, q = models.ur5_like(), np.linspace(0.1, 0.6, 6)
    M = dynamics.crba(chain, q)
    dynamics._recursions.ENGINE, saved = "numpy", dynamics._recursions.ENGINE
    try:
        M_numpy = dynamics.crba(chain, q)
    finally:
        dynamics._recursions.ENGINE = saved
    assert np.allclose(M, M_numpy, rtol=1e-12, atol=1e-12)


def test_the_tree_engine_raises_the_library_errors():
    eng = dynamics._recursions._load_compiled(trees._TREE_ENGINE, "_tree_engine.c", "robodyn_tree_engine",
                                  "robodyn.trees: the compiled tree engine", "numpy")
    with pytest.raises(robodyn.ArgumentTypeError,
                       match=r"^tree_engine\.tree: data: expected a well-formed tree .*got "
                             r"malformed data \(6 arguments\)$"):
        eng.tree(1, 2)
    with pytest.raises(robodyn.ArgumentTypeError,
                       match=r"^tree_engine\.crba: arguments: expected 2 \(tree, q\), got 1$"):
        eng.crba(1)
    with pytest.raises(robodyn.ArgumentTypeError,
                       match=r"^tree_engine: tree: expected the handle of tree\(\), got int$"):
        eng.crba(1, np.zeros(2))
    with pytest.raises(robodyn.ArgumentTypeError,
                       match=r"^tree_engine: arguments: expected 6 .*, got 2$"):
        eng.rnea(1, 2)
