"""The grading callables the API fuzzer skips (they start a notebook's process, or change the
calling process for good) get the fuzzer's substitutions all the same, with that blocked.

For each callable in tests/fuzz_calls/grade34.py's SKIP that takes arguments, each argument of
its valid call (defaults included) is replaced in turn by every value of the fuzzer's catalog
(tests/_fuzz_api_support.py) while ``subprocess.Popen`` and ``sys.addaudithook`` raise
:class:`Started`. A *must refuse* value has to be refused with a ValueError/TypeError naming
``function: argument`` before anything starts; any other value may be refused that way or
reach the start. So no argument of these callables escapes the checks, although none of them
is run to its end here.
"""
import io
import json
import os
import runpy
import signal
import subprocess
import sys

import pytest

import _fuzz_api_support as fz

HERE = os.path.dirname(os.path.abspath(__file__))
REG = runpy.run_path(os.path.join(HERE, "fuzz_calls", "grade34.py"))
API = fz.public_callables()


def _parameters(name):
    import inspect
    kind, obj, owner = API[name]
    f = obj if kind != "method" else getattr(obj, name.rpartition(".")[2])
    return [p for p in inspect.signature(f).parameters if p != "self"]


BLOCKED = sorted(n for n in REG["SKIP"] if _parameters(n))
"""Skipped callables that take arguments (those without are never called here)."""


class Started(BaseException):
    """What a blocked process start (or audit hook) raises."""


def _start(*args, **kwargs):
    raise Started()


def test_every_skipped_grading_callable_with_arguments_is_fuzzed_here():
    assert BLOCKED and all(n in REG["CALLS"] for n in BLOCKED)


@pytest.mark.parametrize("name", BLOCKED)
def test_arguments_refused_before_any_process(name, monkeypatch, tmp_path):
    import inspect
    monkeypatch.chdir(tmp_path)           # a path given as text is relative: written here
    monkeypatch.setattr(subprocess, "Popen", _start)
    monkeypatch.setattr(sys, "addaudithook", _start)
    kind, f, _ = API[name]
    short = name.rpartition(".")[2]
    args, kwargs = REG["CALLS"][name]()
    with pytest.raises(Started):                     # the valid call gets to the start
        f(*args, **kwargs)
    ba = inspect.signature(f).bind(*args, **kwargs)
    ba.apply_defaults()                              # every argument, the defaults too
    failures, n = [], 0
    for arg in list(ba.arguments):
        subs = fz.substitutions(ba.arguments[arg])
        if arg in REG["TEXT"].get(name, ()):
            subs = [(lb, v, fz.MAYBE if isinstance(v, str) else vd) for lb, v, vd in subs]
        if arg in REG["CODE"].get(name, ()):          # code, run only inside the sandbox
            subs = [(lb, v, fz.MAYBE if isinstance(v, (str, list)) else vd)
                    for lb, v, vd in subs]
        for label, value, verdict in subs:
            b2 = inspect.signature(f).bind(*ba.args, **ba.kwargs)
            b2.arguments[arg] = value
            n += 1
            try:
                f(*b2.args, **b2.kwargs)
            except Started:
                if verdict == fz.MUST:
                    failures.append(f"{arg}={label}: accepted (the process would start)")
            except (ValueError, TypeError) as exc:
                if not fz.names_argument(str(exc), short, arg):
                    failures.append(f"{arg}={label}: message does not name '{short}: {arg}': "
                                    f"{str(exc)[:160]}")
            finally:
                assert not os.path.exists(fz.SENTINEL), "THE PAYLOAD RAN"
    assert not failures, f"{len(failures)} of {n} substitutions failed:\n" + "\n".join(failures)


# --------------------------------------------------------------------------
# what the fuzzer cannot express
# --------------------------------------------------------------------------

def test_answer_key_cannot_end_its_raw_string():
    """The key is written into ``load_key(r'''...''')``: text that would close that string
    (and run what follows in every student's notebook) is refused."""
    from robodyn.grading import markup
    nb = REG["CALLS"]["robodyn.grading.markup.set_answer_key"]()[0][0]
    for bad in ('{"p": "\'\'\')\\nimport os#"}', '{"p": 1}\\\\', "[1]", "{"):
        with pytest.raises((ValueError, TypeError), match="set_answer_key: key_json"):
            markup.set_answer_key(nb, bad)
    assert markup.set_answer_key(nb, '{"p1": {"shape": []}}')


def test_a_unit_follows_only_a_child_of_this_process():
    from robodyn.grading import jail
    unit = jail.Unit(64)
    try:
        with pytest.raises(ValueError, match="watch: pid: expected the pid of a child"):
            unit.watch(1)                              # init: never killed by a unit
        with pytest.raises(ValueError, match="watch: pid"):
            unit.watch(os.getpid())
    finally:
        unit.close()


def test_a_malformed_answer_record_costs_its_problem_only(monkeypatch):
    """The judge process scores a record it cannot read 0 and goes on with the others."""
    from robodyn import answers
    from robodyn.grading import judge
    ps = [answers.Problem(k, "x") for k in ("p1", "p2", "p3")]
    job = {"problems": [p.to_dict() for p in ps], "seed": 1, "budget": 5.0, "inputs": {},
           "references": {p.key: answers.encode(2.0, p) for p in ps},
           "answers": {"p1": {"type": "numeric"}, "p2": "x", "p3": answers.encode(2.0, ps[2])}}
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(job)))
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    old = signal.getsignal(signal.SIGPROF)
    try:
        judge.main()                                   # the process's code, run here
    finally:
        signal.signal(signal.SIGPROF, old)
    rows = [json.loads(line) for line in sys.stdout.getvalue().splitlines()]
    assert [r["key"] for r in rows] == ["p1", "p2", "p3"]
    assert rows[0]["score"] == rows[1]["score"] == 0.0, rows
    assert rows[2]["score"] == 1.0, rows


def test_every_grading_callable_has_a_registered_valid_call():
    """A new public callable of robodyn.grading without a valid call (tests/fuzz_calls/) fails
    here, whatever PENDING says: the fuzzer reaches every one."""
    calls, skip, *_ = fz.load_registry()
    missing = [n for n, (kind, obj, _) in API.items() if n.startswith("robodyn.grading.")
               and n not in calls and n not in skip
               and not (kind == "class" and issubclass(obj, BaseException))]
    assert not missing, f"add valid calls to tests/fuzz_calls/grade34.py: {missing}"
