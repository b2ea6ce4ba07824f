"""The grader's comparisons, in a limited process of their own: ``python -m
robodyn.grading.judge``.

It reads a job (JSON) on standard input -- the problems, the encoded references and inputs,
one submission's encoded answers, a seed and a time budget per problem -- and writes one JSON
line per problem, as soon as it is judged: ``{"key", "score", "text", "mistake"}``. Each
comparison runs under a timer (``budget`` s); one that runs out scores 0 with a message. The
grader runs this process with a memory limit and kills it at ``budget`` × problems + 30 s;
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
    """Score and feedback of one answer: ``(score, text, mistake)``."""
    import numpy as np

    from robodyn import answers
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
    signal.signal(signal.SIGALRM, _alarm)
    for d in job["problems"]:
        p = answers.Problem.from_dict(d)
        try:
            signal.setitimer(signal.ITIMER_REAL, budget)
            score, text, mistake = judge_one(p, job["references"][p.key],
                                             job["answers"].get(p.key, {"type": "none"}),
                                             job["inputs"].get(p.key), rng)
        except OverBudget:
            score, text, mistake = 0.0, (f"✘ the answer took longer than the {budget:g} s "
                                         f"budget of the comparison (too large an "
                                         f"expression?)"), "budget"
        except MemoryError:
            score, text, mistake = 0.0, "✘ the comparison ran out of memory (too large an " \
                                        "expression?)", "budget"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout.write(json.dumps({"key": p.key, "score": score, "text": text,
                                     "mistake": mistake}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}, "main": {"open": True}})
