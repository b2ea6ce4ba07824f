"""The grader's comparisons, in a limited process of their own: ``python -m
robodyn.grading.judge``.

It reads a job (JSON) on standard input -- the problems, the encoded references and inputs,
one submission's encoded answers, a seed and a time budget per problem -- and writes one JSON
line per problem, as soon as it is judged: ``{"key", "score", "text", "mistake"}``. Each
comparison runs under a timer of CPU time (``budget`` s, ``ITIMER_PROF``: a loaded machine
does not fail an honest answer); one that runs out scores 0 with a message. The grader runs this
process with a memory limit, CPU time ``budget`` × problems + 30 s and a wall-clock backstop
of three times that;
problems it never reported score 0 with a message too (:func:`robodyn.grading.grader.judge`).
Answers arrive as JSON and are read by :func:`robodyn.answers.decode` (text only through the
whitelist of :func:`robodyn.answers.parse_expression`).
"""
import json
import signal
import sys


class OverBudget(BaseException):
    """A comparison that ran out of its time budget (a BaseException: nothing in the
    comparison catches it)."""


def _alarm(signum, frame):
    raise OverBudget()


def judge_one(p, ref_enc, student_enc, inputs, rng):
    """Score and feedback of one answer: ``(score, text, mistake)``.

    ``p``: the :class:`robodyn.answers.Problem`; ``ref_enc``: the encoded reference (a dict,
    :func:`robodyn.answers.encode`'s record); ``student_enc``: the student's record (a dict),
    or None for no answer; ``inputs``: None, or the argument lists of a function
    answer (lists of finite numbers); ``rng``: a numpy Generator of the test points.
    """
    import numpy as np

    from robodyn import _value_checks, answers
    from robodyn.grading import _args
    if not isinstance(p, answers.Problem):
        raise _value_checks.error("judge_one: p", "an answers.Problem",
                            _value_checks.describe(p), exc=TypeError)
    for name, v in (("ref_enc", ref_enc), ("student_enc", student_enc)):
        if name == "ref_enc" or v is not None:
            if not isinstance(v, dict) or not all(isinstance(k, str) for k in v) or \
                    v.get("type") not in _args.RECORD_TYPES:
                raise _value_checks.error(f"judge_one: {name}", "an encoded answer (a dict whose "
                                    f"'type' is one of {_args.RECORD_TYPES})",
                                    _value_checks.describe(v), exc=TypeError)
    if inputs is not None and not (isinstance(inputs, list) and _args.numeric_lists(inputs)):
        raise _value_checks.error("judge_one: inputs", "None or a list of argument lists of finite "
                            "numbers", _value_checks.describe(inputs), exc=TypeError)
    if not isinstance(rng, np.random.Generator):
        raise _value_checks.error("judge_one: rng", "a numpy Generator",
                            _value_checks.describe(rng), exc=TypeError)
    args = None if inputs is None else \
        [tuple(np.asarray(a, dtype=float) for a in t) for t in inputs]
    try:
        expected = answers.decode(ref_enc, p, args)
    except ValueError as exc:
        return 0.0, f"(grader) the reference could not be read: {exc}", None
    try:
        given = answers.decode(student_enc, p, args) if isinstance(student_enc, dict) \
            else None
    except (ValueError, TypeError) as exc:
        return 0.0, f"✘ {str(exc)[:300]}", "type"
    try:
        fb = answers.compare(given, expected, p, rng=rng, n_points=24)
    except Exception as exc:                         # noqa: BLE001 -- never stop the others
        return 0.0, f"✘ could not be checked: {type(exc).__name__}: {str(exc)[:200]}", None
    if fb.correct:
        score = float(p.points)
    elif fb.fraction is not None:                     # partial credit: the right entries
        score = round(float(p.points) * fb.fraction, 2)
    else:
        score = 0.0
    return score, str(fb), fb.mistake


def main():
    import numpy as np

    from robodyn import answers
    job = json.loads(sys.stdin.read())
    budget = float(job["budget"])
    rng = np.random.default_rng(int(job["seed"]))
    signal.signal(signal.SIGPROF, _alarm)
    for d in job["problems"]:
        p = answers.Problem.from_dict(d)
        try:
            signal.setitimer(signal.ITIMER_PROF, budget)
            score, text, mistake = judge_one(p, job["references"][p.key],
                                             job["answers"].get(p.key, {"type": "none"}),
                                             job["inputs"].get(p.key), rng)
        except OverBudget:
            score, text, mistake = 0.0, (f"✘ the answer took longer than the {budget:g} s "
                                         f"(CPU time) budget of the comparison (too large an "
                                         f"expression?)"), "budget"
        except MemoryError:
            score, text, mistake = 0.0, "✘ the comparison ran out of memory (too large an " \
                                        "expression?)", "budget"
        except (ValueError, TypeError, KeyError) as exc:     # a malformed record: this one only
            score, text, mistake = 0.0, f"✘ the answer could not be read: {str(exc)[:300]}", \
                "type"
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        sys.stdout.write(json.dumps({"key": p.key, "score": score, "text": text,
                                     "mistake": mistake}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}, "main": {"open": True}})
