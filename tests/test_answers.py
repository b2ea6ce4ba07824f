"""robodyn.answers: the restricted parser, forgiving comparison, mistake diagnosis, answer keys."""
import json

import numpy as np
import pytest
import sympy as sp

import robodyn as rd
from robodyn import answers, lagrange, models
from robodyn.answers import (Feedback, Problem, ProblemSet, UnsafeExpressionError, compare,
                             decode, encode, equivalent, fingerprint, parse_expression)

q1, q2, qd1, qd2, l1, l2, theta, a, w = sp.symbols("q1 q2 qd1 qd2 l1 l2 theta a w", real=True)
ARM = Problem("jp", "J", variables={"q1": (-3, 3), "q2": (-3, 3), "l1": (0.5, 2),
                                    "l2": (0.5, 2)}, angles=("q1", "q2"))
J = sp.Matrix([[-l1 * sp.sin(q1) - l2 * sp.sin(q1 + q2), -l2 * sp.sin(q1 + q2)],
               [l1 * sp.cos(q1) + l2 * sp.cos(q1 + q2), l2 * sp.cos(q1 + q2)]])


# --------------------------------------------------------------------------
# the restricted parser
# --------------------------------------------------------------------------

def test_parse_reads_ordinary_math():
    e = parse_expression("l1*cos(q1) + l2*cos(q1 + q2)")
    assert sp.simplify(e - (l1 * sp.cos(q1) + l2 * sp.cos(q1 + q2))) == 0
    assert parse_expression("x^2 - 2**3 + sqrt(4)/2 + Rational(1, 2)") == \
        sp.Symbol("x", real=True)**2 - 8 + 1 + sp.Rational(1, 2)
    assert parse_expression("pi") == sp.pi and parse_expression("2*I") == 2 * sp.I
    assert parse_expression("0.5") == sp.Rational(1, 2)
    M = parse_expression("Matrix([[cos(t), -sin(t)], [sin(t), cos(t)]])")
    assert M.shape == (2, 2)
    assert parse_expression("[1, 2, 3]").shape == (1, 3)
    assert parse_expression("atan2(y, x)").func == sp.atan2


@pytest.mark.parametrize("text, match", [
    ("__import__('os')", "'__import__' is refused"),
    ("__import__('os').system('ls')", "attribute access"),
    ("().__class__.__bases__[0].__subclasses__()", "attribute access"),
    ("x.__class__", "attribute access"),
    ("__builtins__", "may not start with an underscore"),
    ("_secret + 1", "may not start with an underscore"),
    ("__class__(1)", "may not start with an underscore"),
    ("x[0]", "subscripts"),
    ("(lambda: 1)()", "only calls of named functions"),
    ("lambda x: x", "Lambda syntax is refused"),
    ("[x for x in y]", "ListComp syntax is refused"),
    ("'text'", "only numbers may appear"),
    ("open('/etc/passwd')", "unknown function 'open'"),
    ("eval('1')", "unknown function 'eval'"),
    ("sin(x=1)", "keyword and starred"),
    ("sin(*x)", "keyword and starred"),
    ("x if y else z", "IfExp syntax is refused"),
    ("x == y", "Compare syntax is refused"),
    ("2**10**10", "exponent"),
    ("x**y", "exponents must be numbers"),
    ("(((x+1)**12 + 1)**12 + 1)**2", "nested powers are too large"),
    ("1/0", "division by zero"),
    ("1e300 * x", "too large"),
    ("123456789012345678901234567890", "too large"),
    ("sin", "is a function"),
    ("import os", "not a valid expression"),
    ("x = 1", "not a valid expression"),
    ("", "empty"),
    ("atan2(1)", "takes 2 argument"),
])
def test_parse_refuses(text, match):
    with pytest.raises(UnsafeExpressionError, match=match):
        parse_expression(text)


def test_parse_limits_and_names():
    with pytest.raises(UnsafeExpressionError, match="characters"):
        parse_expression("x+" * 20000 + "x")
    with pytest.raises(UnsafeExpressionError, match="syntax nodes"):
        parse_expression("[" + ", ".join(["x"] * 2500) + "]")
    with pytest.raises(UnsafeExpressionError, match="unknown name 'y'"):
        parse_expression("x + y", names=["x"])
    with pytest.raises(TypeError, match="expected a str"):
        parse_expression(b"x")
    with pytest.raises(UnsafeExpressionError, match="rows of the matrix"):
        parse_expression("[[1, 2], [3]]")


def test_parse_never_evaluates_text(monkeypatch):
    """No text reaches eval, exec or sympify (sympy may sympify numbers internally)."""
    import builtins
    import sys
    texts = []

    def spy(owner, name):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            if args and isinstance(args[0], (str, bytes)):
                texts.append((name, args[0]))
            return original(*args, **kwargs)
        monkeypatch.setattr(owner, name, wrapper)
    for owner, name in ((builtins, "eval"), (builtins, "exec"), (sp, "sympify"),
                        (sys.modules["sympy.core.sympify"], "sympify")):
        spy(owner, name)
    e = parse_expression("sin(x)**2 + cos(x)**2 + Rational(1, 2) + 0.25")
    monkeypatch.undo()
    assert not texts and sp.simplify(e) == sp.Rational(7, 4)


# --------------------------------------------------------------------------
# accepted in every equivalent form
# --------------------------------------------------------------------------

@pytest.mark.parametrize("form", [
    J,
    sp.expand_trig(J),                                     # sums of angles expanded
    J.applyfunc(lambda e: sp.rewrite(e, sp.exp) if False else e) * 1,
    np.array(J.tolist(), dtype=object),                    # an object array
    "[[-l1*sin(q1) - l2*sin(q1+q2), -l2*sin(q1+q2)], [l1*cos(q1) + l2*cos(q1+q2), l2*cos(q1+q2)]]",
    J.subs({q1: sp.Symbol("q1", positive=True)}),          # other assumptions, same name
])
def test_equivalent_forms_accepted(form):
    fb = compare(form, J, ARM)
    assert fb.correct, fb


def test_other_equivalences():
    x = sp.Symbol("x")
    assert compare(sp.sin(2 * x), 2 * sp.sin(x) * sp.cos(x)).correct
    assert compare(1 - sp.sin(x)**2, sp.cos(x)**2).correct
    assert compare(0.5 * x, x / 2).correct                            # float and rational
    assert compare([1.0, 2.0, 3.0], sp.Matrix([1, 2, 3])).correct      # row or column vector
    assert compare(np.array([[1.0], [2.0]]), [1, 2]).correct
    assert compare(2 * np.pi / 3 + 1e-12, 2 * np.pi / 3).correct
    # numerically equal where simplification gives up: a sum and its rewritten form
    e = sp.cos(x)**6 + 3 * sp.cos(x)**2 * sp.sin(x)**2 * (sp.cos(x)**2 + sp.sin(x)**2)
    assert compare(e + sp.sin(x)**6, sp.Integer(1)).correct
    assert equivalent(sp.cos(x)**2, 1 - sp.sin(x)**2)


# --------------------------------------------------------------------------
# each common mistake: rejected, with the matching feedback
# --------------------------------------------------------------------------

def test_sign_flip():
    fb = compare(-J, J, ARM)
    assert not fb.correct and fb.mistake == "sign" and "sign" in fb.message


def test_missing_half_and_extra_half():
    T = sp.Rational(1, 2) * (l1 * qd1**2 + l2 * qd2**2)
    fb = compare(2 * T, T)
    assert fb.mistake == "half" and "½ is missing" in fb.message
    assert compare(T / 2, T).mistake == "double"


def test_transposed_jacobian():
    fb = compare(J.T, J, ARM)
    assert fb.mistake == "transpose" and "transpose" in fb.message
    J3 = sp.Matrix([[q1, q2, 1], [q2, 2, q1]])                   # 2x3: the transpose is 3x2
    fb = compare(J3.T, J3, Problem("p", "x", variables={"q1": (-1, 1), "q2": (-1, 1)}))
    assert fb.mistake == "transpose" and "3×2 instead of 2×3" in fb.message


def test_twist_order():
    V = sp.Matrix([0, 0, w, 0, -a * w, 0])
    p = Problem("p", "V", variables={"a": (0.5, 2), "w": (-2, 2)})
    fb = compare(sp.Matrix([0, -a * w, 0, 0, 0, w]), V, p)
    assert fb.mistake == "twist-order" and "(ω, v)" in fb.message
    Js = rd.jacobian_space(models.planar_rr(l1, l2), [q1, q2])    # 6x2: rows swapped
    fb = compare(sp.Matrix.vstack(Js[3:, :], Js[:3, :]), Js, ARM)
    assert fb.mistake == "twist-order"
    Ad = rd.adjoint(rd.homogeneous(rd.rotation("z", 0.3), [1.0, 2.0, 0.5]))   # 6x6: both
    S = np.block([[Ad[3:, 3:], Ad[3:, :3]], [Ad[:3, 3:], Ad[:3, :3]]])
    assert compare(S, Ad).mistake == "twist-order"


def test_degrees_for_radians():
    p = Problem("p", "theta_R")
    fb = compare(120.0, 2 * np.pi / 3, p)
    assert fb.mistake == "degrees" and "degrees" in fb.message
    # an expression that takes its angle in degrees
    J_deg = J.subs({q1: q1 * sp.pi / 180, q2: q2 * sp.pi / 180}, simultaneous=True)
    assert compare(J_deg, J, ARM).mistake == "degrees"
    # a function that takes degrees
    pf = Problem("f", "f", inputs=((2,),), input_range=(-3, 3))
    ref = lambda q: np.array([np.cos(q[0]), np.sin(q[0] + q[1])])      # noqa: E731
    bad = lambda q: ref(np.radians(q))                                  # noqa: E731
    assert compare(bad, ref, pf).mistake == "degrees"


def test_wrong_shape():
    fb = compare(J[:, 0], J, ARM)
    assert fb.mistake == "shape" and "expected 2×2, got 2×1" in fb.message
    assert compare(np.zeros(5), np.zeros(6)).mistake == "shape"


def test_missing_term_of_C():
    M = rd.mass_matrix(models.planar_rr(l1, l2, 1, 1), [q1, q2])
    C = lagrange.coriolis_matrix(M, [q1, q2], [qd1, qd2])
    p = Problem("c", "C", variables={"q1": (-3, 3), "q2": (-3, 3), "qd1": (-2, 2),
                                     "qd2": (-2, 2), "l1": (0.5, 2), "l2": (0.5, 2)})
    # a classic slip: C_12 with only the dM_12/dq2 part, the Gamma_122 qd2 term forgotten
    G122 = sp.diff(M[0, 1], q2) - sp.diff(M[1, 1], q1) / 2
    wrong = C.copy()
    wrong[0, 1] = sp.expand(C[0, 1] - G122 * qd2)
    fb = compare(wrong, C, p)
    assert fb.mistake == "missing-term" and "entry (1, 2) misses a term" in fb.message
    assert compare(C, C, p).correct


def test_wrong_entries_and_variables():
    bad = J.copy()
    bad[1, 1] = 5
    fb = compare(bad, J, ARM)
    assert fb.mistake == "entries" and "(2, 2)" in fb.message
    fb = compare(J + sp.Symbol("x") * sp.ones(2, 2), J, ARM)
    assert fb.mistake == "variables" and "depends on x" in fb.message


def test_unanswered_invalid_and_not_finite():
    """The student's text gets feedback; a value that is not an answer is refused (issue 28)."""
    assert compare(None, J).status == "unanswered"
    with pytest.raises(TypeError, match="compare: answer: expected numbers"):
        compare({"a": 1}, J)
    assert compare("import os", J).status == "error"
    assert compare(np.full((2, 2), np.nan), np.eye(2)).mistake == "type"
    with pytest.raises(TypeError, match="compare: answer: .*True/False"):
        compare(True, 1.0)
    fb = compare(lambda q: 1 / 0, lambda q: q, Problem("f", "f", inputs=((2,),)))
    assert fb.mistake == "type" and "ZeroDivisionError" in fb.message


def test_feedback_text():
    fb = Feedback("correct", "correct.", key="p1")
    assert str(fb) == "✔ p1: correct." and bool(fb)
    assert not Feedback("incorrect", "no.")


# --------------------------------------------------------------------------
# encoding (what leaves a student's process) and answer keys
# --------------------------------------------------------------------------

@pytest.mark.parametrize("value", [J, J[0, 0], sp.Integer(3), 2.5, np.arange(6.0),
                                   np.eye(3) * (1 + 2j), None])
def test_encode_decode_roundtrip(value):
    data = json.loads(json.dumps(encode(value)))
    back = decode(data, ARM if isinstance(value, sp.Basic) else None)
    if value is None:
        assert back is None
    else:
        assert compare(back, value, ARM if isinstance(value, sp.Basic) else None).correct


def test_encode_function_and_text():
    p = Problem("f", "f", inputs=((2,),))
    inputs = p.sample_points(5, np.random.default_rng(0))
    data = encode(lambda q: 2 * q, p, inputs)
    assert data["type"] == "samples" and data["shape"] == [5, 2]
    ref = decode(encode(lambda q: q + q, p, inputs), p, inputs)
    assert compare(decode(data, p, inputs), ref, p).correct
    assert encode(lambda q: 1 / 0, p, inputs)["type"] == "invalid"
    assert encode(lambda q: q, p)["type"] == "invalid"            # no inputs
    assert encode("sin(x)") == {"type": "text", "text": "sin(x)"}


def test_decode_refuses_bad_data():
    with pytest.raises(UnsafeExpressionError, match="attribute access"):
        decode({"type": "sympy", "shape": [], "entries": ["x.__class__"]})
    with pytest.raises(ValueError, match="do not match the shape"):
        decode({"type": "sympy", "shape": [2, 2], "entries": ["1"]})
    with pytest.raises(ValueError, match="do not match the shape"):
        decode({"type": "numeric", "shape": [3], "real": [1, 2]})
    with pytest.raises(ValueError, match="unknown type"):
        decode({"type": "pickle"})
    with pytest.raises(ValueError, match="expected a dict"):
        decode([1, 2])
    with pytest.raises(ValueError, match="samples without their inputs"):
        decode({"type": "samples", "shape": [1, 2], "real": [1, 2]})
    with pytest.raises(ValueError, match="too large"):
        decode({"type": "invalid", "message": "too large"})
    with pytest.raises(ValueError, match="longer than 60000 characters"):
        decode({"type": "sympy", "shape": [4, 1], "entries": ["x+" * 8000 + "x"] * 4})
    long_sum = sum(sp.symbols(f"{'x' * 38}0:100"))              # about 4000 characters
    assert encode(sp.Matrix([long_sum] * 20))["type"] == "invalid"


def test_answer_key_checks_without_the_formula():
    ps = ProblemSet("set", [ARM])
    key = {"jp": fingerprint(J, ARM)}
    assert "sin" not in json.dumps(key)                      # no formula
    assert "real" not in key["jp"] and "hash" in key["jp"]    # no values either
    ps.load_key(json.dumps(key))
    assert ps.check("jp", sp.expand_trig(J)).correct
    assert ps.check("jp", J.T).mistake == "transpose"
    assert ps.check("jp", -J).mistake == "sign"
    assert ps.check("jp", None).status == "unanswered"
    assert "jp" in str(ps.check("jp", J))
    with pytest.raises(TypeError, match="ProblemSet.check: answer"):   # not an answer at all
        ps.check("jp", {"not": "an answer"})


def test_answer_key_of_a_constant_checks_the_form_only():
    c = Problem("c", "w", rtol=1e-3)
    ps = ProblemSet("set", [ARM, c])
    assert not ps.in_key("jp") and not ps.in_key("c")
    wrench = np.array([0.0, 5.886, 0.0, 0.0, 0.0, -19.62])
    key = {"jp": fingerprint(J, ARM), "c": fingerprint(wrench, c)}
    assert key["c"] == {"points": {}, "shape": [6]}            # nothing to try values against
    ps.load_key(json.dumps(key))
    assert ps.in_key("jp") and ps.in_key("c")
    for form in (wrench, wrench.tolist(), repr(wrench.tolist()), sp.Matrix(wrench), -wrench):
        assert ps.check("c", form).status == "form"             # right form, value unknown
    assert ps.check("c", [1, 2, 3]).mistake == "shape"
    assert ps.check("c", [np.nan] * 6).mistake == "type"
    assert "checked when the notebook is graded" in str(ps.check("c", wrench))
    with pytest.raises(KeyError, match="no problem 'p9'"):
        ps.in_key("p9")


def _key_numbers(key):
    """Every number in a key entry, points excepted (the points are public)."""
    found = []

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k != "points":
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            found.append(float(v))
    walk(key)
    return found


def test_a_key_gives_no_value_away():
    """The values of the reference at the key's points are nowhere in the key; grid and
    tolerance tell only the octave of the answer's size; two references that differ in ONE
    entry give keys that differ only in the one digest of the whole answer (nothing per
    entry); the digest does not match a value off by a grid step."""
    fp = fingerprint(J, ARM)
    pts = {k: np.asarray(v) for k, v in fp["points"].items()}
    R = np.array(sp.lambdify(sorted(J.free_symbols, key=lambda s: s.name), J)(
        *[pts[n] for n in ("l1", "l2", "q1", "q2")]), dtype=float)
    assert not any(np.isclose(R, x, rtol=1e-6, atol=0).any() for x in _key_numbers(fp)
                   if abs(x) > 1e-9)
    assert set(fp) == {"version", "points", "shape", "grid", "tol", "salt", "hash"}
    other = fingerprint(J + sp.Matrix([[0, 0], [0, l1 * sp.cos(q2) / 50]]), ARM)
    assert {k for k in fp if fp[k] != other[k]} == {"hash"}
    assert len(fp["hash"]) == len(other["hash"]) == 64
    key = answers._problems._key_from_dict(fp, ARM)
    V = np.moveaxis(R, -1, 0).astype(complex)               # (6, 2, 2), as the check has it
    assert key.matches(V) and key.matches(V + 0.9 * key.tol)
    assert not key.matches(V + 1.1 * key.grid)
    assert not key.matches(V + np.where(np.arange(24).reshape(6, 2, 2) == 5, 1.1 * key.grid, 0))


def test_the_key_tolerance_scheme():
    """Rounding on one grid with the neighbours of the boundaries tried: every answer within
    the tolerance is accepted (values ON a boundary, and floating noise of any sign), every
    answer off by more than a cell plus the tolerance is refused; more values near a
    boundary than can be tried: the check says it cannot decide (and never 'wrong')."""
    from robodyn.answers import _key_hash as kh
    salt, g, tol = "00" * 16, 1.0, 1e-3
    R = np.array([[3.5, -4.0], [0.0, 7.25]])                  # 3.5 and 7.5±: boundaries
    d = kh.digest(R, g, salt)
    for shift in (0.0, 1e-12, -1e-12, 0.9e-3, -0.9e-3, 0.9e-3j):
        assert kh.matches(R + shift, g, tol, salt, d), shift
    for shift in (1.002, -1.002, 2.0):
        assert not kh.matches(R + shift, g, tol, salt, d), shift
    assert not kh.matches(R[::-1], g, tol, salt, d) and not kh.matches(-R, g, tol, salt, d)
    rng = np.random.default_rng(3)
    for trial in range(200):                     # random answers, random scales, noise
        scale = 10.0 ** rng.uniform(-3, 3)
        R = rng.normal(size=(6, 3, 3)) * scale
        g, tol = kh.grid_step(R, 1e-6, 1e-9)
        d = kh.digest(R, g, "ab" * 16)
        assert kh.matches(R * (1 + rng.uniform(-1e-12, 1e-12, R.shape)), g, tol, "ab" * 16, d)
        W = R.copy()
        W.flat[rng.integers(R.size)] += rng.choice([-1, 1]) * (g + 2 * tol)
        assert not kh.matches(W, g, tol, "ab" * 16, d)
    B = (np.arange(kh.MAX_AMBIGUOUS + 1) + 0.5) * 1.0          # every value on a boundary
    with pytest.raises(kh.Undecided):
        kh.matches(B, 1.0, 1e-3, salt, kh.digest(B, 1.0, salt))
    p = Problem("u", "x", variables={"t": (0.0, 1.0)}, rtol=0.2, atol=1e-9)
    key = answers._problems._HashKey({"t": B}, (), 1.0, 1e-3, salt, kh.digest(B, 1.0, salt))
    fb = answers._problems._key_compare(sp.Symbol("t"), key, p)       # 9 values, all on boundaries
    assert fb.status == "form" and "cannot decide" in fb.message


def _entry_by_entry_attack(reply, cands):
    """Coordinate search: for each entry in turn, the others held at the current guess, try
    its candidates and keep the one whose reply differs from the others' (a signal), else the
    current one. Returns the number of placements of the right candidates (of all) for which
    the final guess is right."""
    import itertools
    n, m = len(cands), len(cands[0])
    wins = 0
    for right_at in itertools.product(range(m), repeat=n):    # cands[e][0] is the right one
        order = [[(k + right_at[e]) % m for k in range(m)] for e in range(n)]
        guess = [order[e][0] for e in range(n)]
        for e in range(n):
            replies = [reply(tuple(guess[:e] + [c] + guess[e + 1:])) for c in order[e]]
            odd = [k for k, r in enumerate(replies) if replies.count(r) == 1]
            if len(set(replies)) > 1 and odd:
                guess[e] = order[e][odd[0]]
        wins += all(c == 0 for c in guess)
    return wins, m ** n


def test_an_attacker_learns_nothing_entry_by_entry():
    """The attack of issue #29, run against the new key: recover a 2x2 answer one entry at a
    time (3 candidates per entry, one right). The key's reply is the same for every candidate
    of an entry unless the whole trial is right, so the search is a blind guess of whole
    answers: it wins only for the placements where its at most 1 + 4*2 distinct trials
    happen to hold the whole answer (9 of 81), and never learns an entry. Against per-entry
    feedback (the grader's, which names the wrong entries: the break-on-purpose check) the
    same search always wins."""
    ps = ProblemSet("set", [ARM])
    ps.load_key(json.dumps({"jp": fingerprint(J, ARM)}))
    cands = [[J[i], J[i] + l1 / 3, J[i] * (1 + q1**2 / 7)] for i in range(4)]
    seen = {}

    def key_reply(idx):
        if idx not in seen:
            fb = ps.check("jp", sp.Matrix(2, 2, [cands[e][k] for e, k in enumerate(idx)]))
            seen[idx] = (fb.status, fb.mistake, fb.message)
        return seen[idx]
    wins, total = _entry_by_entry_attack(key_reply, cands)
    assert total == 81 and wins <= 9
    # exactly as well as a blind guesser told only "right" or "not right" for whole answers
    blind = _entry_by_entry_attack(lambda idx: key_reply(idx)[0] == "correct", cands)
    assert (wins, total) == blind
    replies = {r for idx, r in seen.items() if any(idx)}      # every wrong whole answer ...
    assert len(replies) == 1 and next(iter(replies))[0] == "incorrect"   # ... the same reply
    assert seen.get((0, 0, 0, 0), ("correct",))[0] == "correct"
    pts = ARM.sample_points(8, np.random.default_rng(0))
    R = answers._problems._evaluator("symbolic", J, ARM, (2, 2))(pts)
    values = [[answers._problems._evaluator("symbolic", c, ARM, ())(pts) for c in cs] for cs in cands]

    def grader_reply(idx):         # the grader's per-entry verdict ("not entries (1, 2)")
        S = np.stack([values[e][k] for e, k in enumerate(idx)], axis=1).reshape(R.shape)
        return tuple(np.all(answers._problems._close(S, R, ARM), axis=0).ravel())
    assert _entry_by_entry_attack(grader_reply, cands) == (81, 81)


def test_rotation_order_and_degrees_are_named_by_the_key():
    al = sp.Symbol("alpha", real=True)
    p = Problem("r", "R", variables={"theta": (-3, 3), "alpha": (-3, 3)},
                angles=("theta", "alpha"))
    R = rd.rotation("z", theta) @ rd.rotation("x", al)
    ps = ProblemSet("set", [p])
    ps.load_key(json.dumps({"r": fingerprint(R, p)}))
    assert ps.check("r", R).correct
    assert ps.check("r", rd.rotation("x", al) @ rd.rotation("z", theta)).mistake == \
        "rotation-order"
    assert compare(rd.rotation("x", al) @ rd.rotation("z", theta), R, p).mistake == \
        "rotation-order"                                      # the grader says it too
    assert ps.check("r", R.T).mistake == "transpose"
    deg = R.subs({theta: theta * sp.pi / 180, al: al * sp.pi / 180})
    assert ps.check("r", deg).mistake == "degrees"
    assert "rotations are multiplied in the reverse order" in str(
        ps.check("r", rd.rotation("x", al) @ rd.rotation("z", theta)))


def test_problem_test_fails_for_what_the_key_knows_is_wrong():
    """``problems.test`` (the check cells): passes for a right answer and for one whose
    value only the grader can check; fails (AssertionError) for a wrong or blank one."""
    c = Problem("c", "w")
    ps = ProblemSet("set", [ARM, c])
    ps.test("jp", J)                                          # no key: passes (instructor)
    ps.load_key(json.dumps({"jp": fingerprint(J, ARM), "c": fingerprint(np.ones(3), c)}))
    ps.test("jp", sp.expand_trig(J))
    ps.test("c", [1.0, 2.0, 3.0])                             # form only: the grader decides
    for bad, why in ((-J, "sign flipped"), (None, "not answered"),
                     (J + sp.Matrix([[0, 0], [0, 1e-2]]), "does not match")):
        with pytest.raises(AssertionError, match=why):
            ps.test("jp", bad)
    # what is not an answer of the right form is an error naming the argument (issue 28)
    for key, bad, why in (("c", [1.0, 2.0], "wrong shape"), ("c", [1.0, np.nan, 2.0],
                          "not finite"), ("c", [1.0, 1j, 2.0], "not real"),
                          ("jp", J + sp.Symbol("t") * sp.ones(2, 2), "depends on t"),
                          ("jp", "J.T", "safe parser"), ("jp", {"J": 1}, "got dict")):
        with pytest.raises((ValueError, TypeError), match=f"ProblemSet.test: answer: .*{why}"):
            ps.test(key, bad)


def test_answer_key_of_a_function():
    p = Problem("f", "fk", inputs=((3,),), input_range=(-np.pi, np.pi))
    arm = models.spatial_rrr()
    ps = ProblemSet("set", [p])
    ps.load_key(json.dumps({"f": fingerprint(lambda q: rd.fk_space(arm, q), p)}))
    assert ps.check("f", lambda q: rd.fk_space(arm, q)).correct
    assert ps.check("f", lambda q: rd.fk_body(arm, q)).correct         # the same pose
    assert not ps.check("f", lambda q: rd.fk_space(arm, q[::-1])).correct


def test_problem_and_set_errors():
    with pytest.raises(ValueError, match="key: expected an identifier"):
        Problem("p 1", "x")
    with pytest.raises(ValueError, match="points: expected a number >= 0"):
        Problem("p1", "x", points=-1)
    with pytest.raises(ValueError, match=r"variables\['q'\]: expected \(low, high\)"):
        Problem("p1", "x", variables={"q": (1, 0)})
    with pytest.raises(ValueError, match="angles: \\['z'\\] are not among the variables"):
        Problem("p1", "x", angles=("z",))
    with pytest.raises(ValueError, match="duplicate problem key 'p1'"):
        ProblemSet("s", [Problem("p1", "x"), Problem("p1", "y")])
    with pytest.raises(TypeError, match="expected Problem objects"):
        ProblemSet("s", ["p1"])
    with pytest.raises(KeyError, match="no problem 'p9'"):
        ProblemSet("s", [Problem("p1", "x")])["p9"]
    with pytest.raises(ValueError, match="needs a Problem with inputs"):
        compare(lambda q: q, lambda q: q)
    p = Problem("p1", "x", variables={"q": (0, 1)}, inputs=((2,),))
    assert Problem.from_dict(json.loads(json.dumps(p.to_dict()))) == p


def test_sizes_and_tolerances_are_validated():
    """compare's sample count and a Problem's tolerances go through the shared checks."""
    import pytest
    from robodyn import answers
    with pytest.raises(ValueError, match="compare: n_points"):
        answers.compare(1, 1, n_points=10**9)
    with pytest.raises(ValueError, match="Problem: rtol"):
        answers.Problem(key="p1", answer="ans", rtol=-1.0)


# --------------------------------------------------------------------------
# issue #19: no text run, NaN never equal, bounded work
# --------------------------------------------------------------------------

PAYLOADS = ["__import__('os').system('touch {f}')", "open('{f}', 'w')",
            "exec(\"open('{f}', 'w')\")", "lambda: open('{f}', 'w')"]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_text_inside_a_list_is_never_run(payload, tmp_path):
    x = sp.Symbol("x", real=True)
    planted = tmp_path / "pwned"
    code = payload.format(f=planted)
    ps = ProblemSet("demo", [Problem("p1", "v", variables={"x": (-1, 1)})])
    ps.load_key(json.dumps({"p1": fingerprint(sp.Matrix([x, 1]), ps["p1"])}))
    for value in ([x, code], (x, code), np.array([x, code], dtype=object),
                  np.array([[x, code]], dtype=object), [[x], [code]], np.array(code),
                  [code, 1.0], np.array([code, "1"])):
        for call, name in ((lambda: compare(value, sp.Matrix([x, 1])), "compare: answer"),
                           (lambda: ps.check("p1", value), "ProblemSet.check: answer"),
                           (lambda: ps.test("p1", value), "ProblemSet.test: answer"),
                           (lambda: encode(value), "encode: value"),
                           (lambda: compare(x, value), "compare: reference")):
            with pytest.raises((ValueError, TypeError), match=name):
                call()
        assert not ps.check("p1", repr(code)).correct        # the student's text: feedback
    assert not planted.exists()
    assert compare([x, "1"], sp.Matrix([x, 1])).correct        # the whitelist still reads


def test_nan_and_infinity_never_compare_equal():
    x = sp.Symbol("x", real=True)
    assert not compare(123, np.nan).correct and not compare(5, sp.oo).correct
    assert not compare(np.nan, np.nan).correct and not compare(sp.nan, sp.nan).correct
    assert not compare([1.0, np.nan], [1.0, np.nan]).correct
    assert not compare(np.inf, np.inf).correct
    with pytest.raises(ValueError, match="finite"):
        compare(x, x, points={"x": [np.nan, 1.0]})
    with pytest.raises(ValueError, match="finite"):
        compare(x, 2 * x, points={"x": [np.inf]})


@pytest.mark.parametrize("text", ["0**-1", "0**(-2)", "(x-x)**-1", "1/(2-2)"])
def test_parse_refuses_what_is_not_finite(text):
    with pytest.raises(UnsafeExpressionError, match="division by zero|not finite"):
        parse_expression(text)


def test_deep_text_is_refused_not_a_recursion_error():
    for text in ["-" * 1500 + "x", "(" * 900 + "x" + ")" * 900, "sin(" * 200 + "x" + ")" * 200]:
        with pytest.raises(UnsafeExpressionError, match="nested|not a valid"):
            parse_expression(text)
        with pytest.raises(ValueError):
            decode({"type": "sympy", "shape": [], "entries": [text]})


def test_large_answers_are_refused_or_bounded():
    import time
    with pytest.raises(UnsafeExpressionError, match="nested powers"):
        parse_expression("((q1+q2+l1+l2+1)**12+1)**12")
    p = Problem("p", "J", variables={"q1": (-1, 1), "q2": (-1, 1), "l1": (0.5, 1)})
    q1, l1 = sp.symbols("q1 l1", real=True)
    started = time.monotonic()
    fb = compare("(sin(q1)+cos(q2)+sin(q1+q2)+l1)**12", l1 * q1, p)
    assert not fb.correct and time.monotonic() - started < 30     # not sp.simplify's hours
    big = (sp.sin(q1) + l1) ** 12
    assert compare(sp.expand(big), big, p).correct                  # decided numerically


def test_symbolic_budget_stops_slow_work():
    from robodyn.answers._problems import _OverBudget, _within_budget
    import time

    def slow():
        while True:
            time.sleep(0.01)
    started = time.monotonic()
    with pytest.raises(_OverBudget):
        _within_budget(slow, 0.2)
    assert time.monotonic() - started < 5
    assert _within_budget(lambda: 3, 1.0) == 3


def test_problem_test_refuses_a_bad_key():
    ps = ProblemSet("set", [ARM])
    with pytest.raises(TypeError, match="ProblemSet.test: key: expected a problem key"):
        ps.test(3, J)
    with pytest.raises(ValueError, match=r"ProblemSet.test: key: expected one of \['jp'\]"):
        ps.test("p9", J)


def test_the_fuzzer_reaches_every_argument_of_the_answers_api():
    """Issue 28, closed for the class: every public callable of robodyn.answers has a valid
    call registered for the API fuzzer (tests/fuzz_calls/) that passes ALL its parameters, so
    a new argument without checks cannot escape the fuzzer's substitutions."""
    import inspect

    import _fuzz_api_support as fz
    calls = fz.load_registry()[0]
    api = {n: v for n, v in fz.public_callables().items()
           if v[1].__module__.startswith("robodyn.answers.") or v[1].__module__ == "robodyn.text_parser"}
    assert "robodyn.answers.compare" in api and "robodyn.answers.ProblemSet.test" in api
    unreached = []
    for name, (kind, obj, _) in sorted(api.items()):
        if kind == "class" and (issubclass(obj, BaseException) or obj is answers.Feedback):
            continue                                # raised, or a result record
        f = obj.__init__ if kind == "class" else obj if kind == "function" else \
            getattr(obj, name.rpartition(".")[2])
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if kind in ("class", "method"):
            params = params[1:]                     # self
        if name not in calls:
            unreached.append(f"{name}: no registered call")
            continue
        args, kwargs = calls[name]()
        if kind == "method":
            args = args[1:]
        bound = inspect.signature(f).bind_partial(*((None,) if kind in ("class", "method")
                                                    else ()), *args, **kwargs).arguments
        missed = [p.name for p in params if p.name not in bound]
        if missed:
            unreached.append(f"{name}: {missed} not passed")
    assert not unreached, "\n".join(unreached)


def test_cross_argument_refusals_name_the_argument():
    """What the fuzzer cannot express (one argument against another): each is an error that
    names the function the user called and the argument at fault (issue 28)."""
    x = sp.Symbol("x", real=True)
    p = Problem("p", "y", variables={"x": (0.0, 1.0)})
    pf = Problem("f", "g", inputs=((2,),))
    cases = [
        (lambda: compare(x, sp.Function("f")(x)), "compare: reference: .*numpy can evaluate"),
        (lambda: fingerprint(sp.Derivative(sp.Function("g")(x), x), p),
         "fingerprint: reference"),
        (lambda: equivalent(x, x + sp.Symbol("z"), p), "equivalent: reference: .*variables"),
        (lambda: equivalent(x, x, p, points={"z": [0.5]}), "equivalent: points"),
        (lambda: compare(x, x, points={"x": [0.1, 0.2], "y": [0.3]}), "compare: points"),
        (lambda: compare(x, x + sp.Symbol("z"), points={"x": [0.5]}), "compare: points: .*'z'"),
        (lambda: compare(x, x, p, points=[(np.ones(2),)]), "compare: points"),
        (lambda: compare(lambda v: v, lambda v: v, p), "compare: problem: .*inputs"),
        (lambda: fingerprint(lambda v: v, p), "fingerprint: problem: .*inputs"),
        (lambda: decode({"type": "samples", "shape": [2, 2], "real": [1, 2, 3, 4]}, pf,
                        [(np.ones(2),)]), "decode: inputs"),
        (lambda: decode({"type": "numeric", "shape": [-2, -1], "real": [1, 2]}), "decode: data"),
        (lambda: encode(lambda v: v, pf, {"x": [1.0]}), "encode: inputs"),
        (lambda: Problem.from_dict({**p.to_dict(), "inputs": 5}), "Problem.from_dict: d"),
        (lambda: parse_expression("x", "xyz"), "parse_expression: names"),
    ]
    for call, match in cases:
        with pytest.raises((ValueError, TypeError), match=match):
            call()
    # a function that returns NaN is an invalid record, not numbers that compare as NaN
    with np.errstate(divide="ignore"):
        assert encode(lambda v: v / 0.0, pf, [(np.ones(2),)])["type"] == "invalid"
