"""A blank student notebook's check cells fail with the self-check's verdict, not with a wall of
the library's frames (issue 39, item 7): IPython leaves out the frames robodyn marks as plumbing
(``__tracebackhide__``: the boundary of every public call, and the check itself but for the one
line that raises), so each failed check shows the student's cell, the raising line and the
verdict. nbgrader's Validate still counts the failure (an AssertionError)."""
import contextlib
import io
import re


def test_a_failed_self_check_shows_the_verdict_not_the_library():
    from IPython.testing.globalipapp import start_ipython
    ip = start_ipython()
    ip.run_cell("from robodyn.answers._problems import ProblemSet, Problem\n"
                "ps = ProblemSet('demo', [Problem('p1', 'x')])\n"
                "ps.load_key('{\"p1\": {\"points\": {}, \"shape\": []}}')")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        result = ip.run_cell("ps.test('p1', None)")
    shown = re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue())
    assert isinstance(result.error_in_exec, AssertionError)
    assert "not answered yet" in shown and "AssertionError" in shown
    frames = re.findall(r"robodyn/[\w/]+\.py", shown)
    assert len(frames) <= 1, shown                   # only the line that raises
    assert "_boundary.py" not in shown, shown
