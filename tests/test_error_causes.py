"""A refusal raised because a foreign exception was met keeps that exception as its cause
(issue 37, point 3: ``raise ... from exc``, never ``from None``): the frames where the error
happened stay in the traceback. A ``from None`` left in the library says why, in a comment
starting ``# from None:`` on the raise or the line before (checked here for every module)."""
import ast
import pathlib
import textwrap

import numpy as np
import pytest
import sympy as sp

import robodyn
from robodyn import equations, impacts

LIB = pathlib.Path(robodyn.__file__).parent
REASON = "# from None:"


def uncommented_cuts(source):
    """Line numbers of the ``raise X from None`` in ``source`` whose raise statement (any of its
    lines) or the line just before it carries no ``# from None:`` reason."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Raise) and isinstance(node.cause, ast.Constant) \
                and node.cause.value is None:
            around = lines[max(node.lineno - 2, 0):node.end_lineno]
            if not any(REASON in line for line in around):
                found.append(node.lineno)
    return found


def test_every_from_none_in_the_library_gives_its_reason():
    files = sorted(LIB.rglob("*.py"))
    assert len(files) > 50                              # the walk found the library
    cuts = {f"{path.relative_to(LIB)}:{n}" for path in files
            for n in uncommented_cuts(path.read_text(encoding="utf-8"))}
    assert not cuts, (f"raise ... from None without a '{REASON} <reason>' comment (use "
                      f"'from exc' to keep the exception it was raised from): {sorted(cuts)}")


def test_the_walk_finds_a_cut_without_a_reason():
    source = textwrap.dedent("""\
        def f(x):
            try:
                return float(x)
            except ValueError:
                raise TypeError("f: x: expected a number, got "
                                "text") from None
            except OverflowError:
                # from None: a stated reason
                raise ValueError("f: x: too large") from None
            except ZeroDivisionError as exc:
                raise ValueError("f: x: zero") from exc
        """)
    assert uncommented_cuts(source) == [5]


def test_a_domain_error_of_the_generated_code_keeps_its_cause():
    q, u = sp.symbols("q u")
    form = equations.mass_matrix_form([q], [u], [[1]], [sp.sqrt(q)])
    with pytest.raises(ValueError, match="finite values") as info:
        form.numeric().forcing([-1.0], [0.0])
    assert isinstance(info.value.__cause__, ValueError)          # math's domain error
    assert "math domain error" in str(info.value.__cause__)
    assert not info.value.__suppress_context__ or info.value.__cause__ is not None


def test_a_mass_matrix_that_is_not_positive_definite_keeps_the_cholesky_error():
    q, u = sp.symbols("q u")
    num = equations.mass_matrix_form([q], [u], [[sp.cos(q)]], [0]).numeric()
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite") as info:
        num.accelerations([np.pi], [0.0])
    assert isinstance(info.value.__cause__, np.linalg.LinAlgError)


def test_impact_map_keeps_the_cholesky_error():
    with pytest.raises(robodyn.ArgumentError, match="positive definite") as info:
        impacts.impact_map(np.diag([1.0, -1.0]), np.array([[0.0, 1.0]]), [0.0, -1.0], 0.5)
    assert isinstance(info.value.__cause__, np.linalg.LinAlgError)


def test_a_surface_whose_phi_returns_text_keeps_the_conversion_error():
    s = impacts.Surface("floor", lambda q: "high", lambda q: np.array([0.0, 1.0]))
    with pytest.raises(TypeError, match="phi: expected phi\\(q\\) to return a real number") \
            as info:
        s.phi(np.array([0.0, 1.0]))
    assert isinstance(info.value.__cause__, ValueError)


def ragged(x):
    """A sweep's function whose results have different shapes (module level: it pickles)."""
    return np.zeros(int(x) + 1)


def test_a_sweep_of_ragged_results_keeps_numpy_s_error():
    from robodyn import walking as stability
    with pytest.raises(robodyn.ArgumentError, match="sweep: func: expected results of one "
                                                    "shape") as info:
        stability.sweep(ragged, [0, 1, 2])
    assert isinstance(info.value.__cause__, ValueError)
    assert not isinstance(info.value.__cause__, robodyn.RobodynError)   # numpy's own


# --- representative sites that used to cut the cause (``from None``) -----------------------

def test_a_number_beyond_float64_keeps_the_overflow_error():
    from robodyn import _value_checks
    with pytest.raises(robodyn.ArgumentError, match="beyond the float64 range") as info:
        _value_checks.scalar(10**400, "f: x")
    assert type(info.value.__cause__) is OverflowError


def test_a_ragged_array_keeps_numpy_s_error():
    from robodyn import _value_checks
    with pytest.raises(robodyn.ArgumentError, match="expected an array of real numbers") as info:
        _value_checks._as_numeric([[1, 2], [3]], "f: x")
    assert type(info.value.__cause__) is ValueError                  # numpy's own
    assert "inhomogeneous" in str(info.value.__cause__)


def test_what_sympy_cannot_read_keeps_the_sympify_error():
    from robodyn import _value_checks
    with pytest.raises(robodyn.ArgumentTypeError, match="f: x: expected a sympy expression") \
            as info:
        _value_checks.expression(object(), "f: x")
    assert isinstance(info.value.__cause__, sp.SympifyError)


def test_a_ragged_answer_keeps_numpy_s_error_under_the_answer_s_refusal():
    from robodyn import answers
    ps = answers.ProblemSet("demo", [answers.Problem("p1", "x")])
    with pytest.raises(robodyn.ArgumentTypeError, match="ProblemSet.test: answer: expected "
                                                        "numbers") as info:
        ps.test("p1", [[1, 2], [3]])
    inner = info.value.__cause__
    assert isinstance(inner, robodyn.ArgumentTypeError)              # the reading's refusal
    assert type(inner.__cause__) is ValueError and "inhomogeneous" in str(inner.__cause__)


def test_a_malformed_answer_record_keeps_the_key_error():
    from robodyn import answers
    with pytest.raises(robodyn.ArgumentError, match="decode: data: expected an answer record "
                                                    "with the field 'shape'") as info:
        answers.decode({"type": "numeric"}, answers.Problem("p1", "x"))
    assert type(info.value.__cause__) is KeyError


def test_an_unreadable_answer_key_keeps_json_s_error():
    import json
    from robodyn import answers
    ps = answers.ProblemSet("demo", [answers.Problem("p1", "x")])
    with pytest.raises(robodyn.ArgumentError, match="load_key: text: expected JSON text") \
            as info:
        ps.load_key("{nope")
    assert type(info.value.__cause__) is json.JSONDecodeError


def test_a_matrix_sympy_cannot_build_keeps_its_error_in_codegen():
    from robodyn import codegen
    q, qd = sp.symbols("q qd")
    with pytest.raises(robodyn.ArgumentTypeError, match="compile_equations: C: expected a "
                                                        "sympy Matrix") as info:
        codegen.compile_equations([[1]], [[1, 2], [3]], [0], [q], [qd])
    assert type(info.value.__cause__) is ValueError                  # sympy's
    assert not isinstance(info.value.__cause__, robodyn.RobodynError)


def test_a_compiler_that_cannot_run_keeps_the_os_error(monkeypatch, tmp_path):
    from robodyn import codegen
    monkeypatch.setattr(codegen, "_compiler", lambda: [str(tmp_path / "no-such-cc")])
    with pytest.raises(codegen.CompileError, match="could not run") as info:
        codegen._build("int x;\n", "m_causes", tmp_path / "m_causes.so")
    assert isinstance(info.value.__cause__, FileNotFoundError)


def test_a_problem_spec_that_is_not_one_keeps_its_cause_in_run_cells():
    from robodyn.grading import grader
    with pytest.raises(robodyn.ArgumentError, match="run_cells: problems: expected a list of "
                                                    "problem specs") as info:
        grader.run_cells(["1"], [{"key": "p1", "answer": "x", "inputs": [5]}])
    inner = info.value.__cause__                                     # Problem.from_dict's
    assert isinstance(inner, TypeError) and "Problem.from_dict" in str(inner)
    assert type(inner.__cause__) is TypeError                        # tuple(5): Python's own
    assert "not iterable" in str(inner.__cause__)


def test_json_that_is_not_json_keeps_the_decoder_error_in_the_grader():
    import json
    from robodyn.grading import grader
    with pytest.raises(robodyn.ArgumentError, match="load_json: data: not valid JSON") as info:
        grader.load_json(b"{nope", max_bytes=100, max_depth=10)
    assert type(info.value.__cause__) is json.JSONDecodeError


def test_a_singular_mass_matrix_keeps_sympy_s_error_in_christoffel_symbols():
    from robodyn import symbolic
    q1, q2 = sp.symbols("q1 q2")
    with pytest.raises(robodyn.ArgumentError, match="expected an invertible mass matrix") \
            as info:
        symbolic.christoffel_symbols(sp.zeros(2, 2), [q1, q2], kind=2)
    assert isinstance(info.value.__cause__, ValueError)
    assert not isinstance(info.value.__cause__, robodyn.RobodynError)
