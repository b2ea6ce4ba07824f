"""No answer key is a guessing oracle (issue 41 point 5): a bounded search of whole answers
built from each problem's own symbols, run against the digest of every key of every published
student notebook, recovers none -- and, as a control, recovers set I's problems 2 and 7
(``[0, 0, w, 0, -a*w, 0]``, ``l1*l2*sin(q2)``) from digest keys made for them the old way.

The attacker here works from the student notebook alone (its problems, its key) and tries, per
problem and up to :data:`BUDGET` digests: for a scalar, coefficient times a product of up to
four *atoms* (the problem's symbols, the sine and cosine of its angles and of the sum of two
angles), simplest first; for a vector or matrix, the zero answer, then one entry set to such a
term (up to two atoms), then two entries (coefficients ±1). Each candidate is evaluated at the
key's points and tested with the key's own ``matches`` (one PBKDF2 digest: what the self-check
computes). The generator's side (``grader._searchable``) counts boxes of candidates instead;
this is the attack itself.
"""
import itertools
import math
from pathlib import Path

import nbformat
import numpy as np
import pytest
import sympy as sp

from robodyn import answers
from robodyn.answers import _key_hash
from robodyn.grading import _exposure, grader, markup

ROOT = Path(__file__).resolve().parents[1]
SETS = ROOT / "book" / "assignments"
STUDENT = sorted(p for p in SETS.glob("*.ipynb"))
BUDGET = 3000
"""Digests tried per problem (about 1 ms each)."""


def _problem_set(path):
    """The student notebook's ProblemSet with its key: its setup and key cells, run here."""
    nb = nbformat.read(path, as_version=4)
    ns = {}
    for c in nb.cells:
        if (markup.meta(c) or {}).get("grade_id") in ("setup", markup.KEY_ID):
            exec(compile(c.source, str(path), "exec"), ns)        # noqa: S102 -- the book's own
    return ns["problems"]


def _atoms(problem, points):
    """The attacker's atoms at the key's points, built with sympy from the problem's symbols."""
    syms = problem.symbols()
    angles = [syms[a] for a in problem.angles]
    exprs = list(syms.values()) + [f(a) for a in angles for f in (sp.sin, sp.cos)]
    exprs += [f(a + b) for a, b in itertools.combinations(angles, 2) for f in (sp.sin, sp.cos)]
    names = list(syms)
    args = [np.asarray(points[n], dtype=float) for n in names]
    fn = sp.lambdify([syms[n] for n in names], exprs, "numpy")
    return [np.broadcast_to(np.asarray(v, dtype=float), args[0].shape) for v in fn(*args)]


def _terms(atoms, degree, coefficients):
    n = len(atoms[0])
    for c in coefficients:
        for d in range(degree + 1):
            for combo in itertools.combinations_with_replacement(range(len(atoms)), d):
                yield c * (np.prod([atoms[i] for i in combo], axis=0) if combo else np.ones(n))


def _candidates(shape, atoms):
    n = len(atoms[0])
    size = math.prod(shape)
    if size == 1:
        yield from (t.reshape((n,) + shape) for t in _terms(atoms, 4, (1, -1, 2, -2, .5, -.5)))
        return
    zero = np.zeros((n, size))
    yield zero.reshape((n,) + shape)
    terms = list(_terms(atoms, 2, (1, -1)))
    for i in range(size):
        for t in terms:
            V = zero.copy()
            V[:, i] = t
            yield V.reshape((n,) + shape)
    for i, j in itertools.combinations(range(size), 2):
        for s, t in itertools.product(terms, repeat=2):
            V = zero.copy()
            V[:, i], V[:, j] = s, t
            yield V.reshape((n,) + shape)


def attack(problem, key, budget=BUDGET):
    """The number of digests it took to recover the answer, or None within ``budget``."""
    atoms = _atoms(problem, key.points)
    for tried, V in enumerate(itertools.islice(_candidates(key.shape, atoms), budget), 1):
        try:
            if key.matches(V):
                return tried
        except _key_hash.Undecided:
            continue
    return None


def _digest_keys():
    for path in STUDENT:
        ps = _problem_set(path)
        for p in ps:
            k = ps._key[p.key]
            if not k.form_only and isinstance(k.points, dict):
                yield pytest.param(path, p.key, id=f"{path.stem}-{p.key}")


@pytest.mark.slow
@pytest.mark.parametrize("path,key", list(_digest_keys()))
def test_no_key_is_recovered_by_a_bounded_search(path, key):
    ps = _problem_set(path)
    assert attack(ps[key], ps._key[key]) is None


@pytest.mark.slow
def test_the_search_recovers_short_answers_from_digest_keys_the_old_way():
    """The control: keys of set I's problems 2 and 7 with their digest (as before issue 41)
    are recovered by the same search; now their keys hold their form only, and the measure
    of the generator puts both far below its budget."""
    ps = _problem_set(SETS / "part1_rigid_motion.ipynb")
    a, w, q2, l1, l2 = sp.symbols("a w q2 l1 l2", real=True)
    for key, ref in (("p2", sp.Matrix([0, 0, w, 0, -a * w, 0])), ("p7", l1 * l2 * sp.sin(q2))):
        p = ps[key]
        fp = answers.fingerprint(ref, p, seed=grader._seed(key))
        assert "hash" in fp
        old = answers._problems._key_from_dict(fp, p)
        tried = attack(p, old)
        assert tried is not None, key
        print(f"{key}: recovered from the old key after {tried} digests")
        assert ps._key[key].form_only                     # the published key: form only
        assert grader._guarded(fp, ref, p) == {"points": fp["points"], "shape": fp["shape"]}
        assert grader._box(fp, ref, p) <= _exposure.BUDGET


def test_the_measure_counts_boxes():
    """The generator's count on answers whose box is known by hand."""
    p = answers.Problem("p", "x", variables={"a": (0.3, 2.0), "w": (-3.0, 3.0)})
    pts = p.sample_points(6, np.random.default_rng(1))
    a, w = pts["a"], pts["w"]
    sizes = _exposure.level_sizes(2)           # factors a, w: no angles
    assert sizes[:3] == [1, 1 + 6 * 3, 1 + 6 * 3 + 6 * 3]
    R = np.stack([0 * a, w, -a * w], axis=1)
    assert _exposure.box(R, p, pts, 1e-9) == 1 * sizes[1] * sizes[2]
    assert _exposure.box(np.stack([a + w * w], axis=1), p, pts, 1e-9) == sizes[-1]
    assert _exposure.box(np.stack([a ** 5], axis=1), p, pts, 1e-9) == sizes[5]
    assert _exposure.box(np.stack([np.exp(a)], axis=1), p, pts, 1e-9) == math.inf


def test_the_instructor_page_names_every_problem_checked_for_form_only():
    """book/assignments/index.md lists exactly the problems whose published key holds their
    form only (constants and searchable answers)."""
    import json
    import re
    roman = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6}
    text = " ".join((SETS / "index.md").read_text(encoding="utf-8").split())
    listed = text.split("problems, constants included, are ", 1)[1].split(" (", 1)[0]
    named = set()
    for part, a, b in re.findall(r"\b([IVX]+)\.(\d+)(?:–[IVX]+\.(\d+))?", listed):
        named |= {(roman[part], k) for k in range(int(a), int(b or a) + 1)}
    keyed = set()
    for path in STUDENT:
        n = int(re.match(r"part(\d)_", path.name).group(1))
        key = json.loads(markup.answer_key_json(nbformat.read(path, as_version=4)))
        keyed |= {(n, int(k[1:])) for k, v in key.items() if "hash" not in v}
    assert named == keyed, (sorted(named - keyed), sorted(keyed - named))
