"""One error base class (issue 37): every exception class robodyn hands its readers -- found by
the API fuzzer's introspection of the public API, so a new one cannot escape -- is a
``robodyn.RobodynError`` (and the builtin class that fits), so ``except robodyn.RobodynError``
catches everything robodyn raises on purpose; warnings are warnings, not errors. The grader's
two interrupts (a cell over its time, a comparison over its budget) are BaseExceptions like
KeyboardInterrupt on purpose, so that ``except Exception`` in a student's code cannot swallow
them: they are signals inside the sandbox, never raised to a reader."""

import robodyn

import _fuzz_api_support as fz  # the fuzzer's introspection of the public API

INTERRUPTS = {"robodyn.grading.sandbox.CellTimeout", "robodyn.grading.judge.OverBudget"}


def public_exception_classes():
    return {q: obj for q, (kind, obj, owner) in fz.public_callables().items()
            if kind == "class" and issubclass(obj, BaseException)
            and not issubclass(obj, Warning)}


def test_the_interrupts_stay_out_of_reach_of_except_exception():
    found = public_exception_classes()
    for q in INTERRUPTS:
        assert q in found and not issubclass(found[q], Exception), q


def test_every_public_exception_is_a_robodyn_error():
    found = public_exception_classes()
    assert len(found) >= 12, sorted(found)
    stray = sorted(q for q, cls in found.items()
                   if q not in INTERRUPTS and not issubclass(cls, robodyn.RobodynError))
    assert not stray, f"public exception classes outside robodyn.RobodynError: {stray}"


def test_the_base_catches_a_refusal_and_keeps_the_builtin_class():
    try:
        robodyn.exp_so3([0.0, 0.0, 1.0], "0.5")
    except robodyn.RobodynError as exc:
        assert isinstance(exc, TypeError) and "exp_so3: theta" in str(exc)
    else:
        raise AssertionError("text given as an angle was not refused")
