"""Valid calls of the public callables added by check30 (for the API fuzzer)."""
from robodyn.answers import Problem, ProblemSet


def _set():
    ps = ProblemSet("demo", [Problem("p1", "x")])
    ps.load_key('{"p1": {"points": {}, "shape": []}}')
    return ps


CALLS = {
    "robodyn.answers.ProblemSet.test": lambda: ((_set(), "p1", 2.5), {}),
}
