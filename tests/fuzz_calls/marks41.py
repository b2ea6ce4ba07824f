"""Valid calls of the grading helpers added for issues 39 and 41 (nbgrader's own release of
the book's notebooks), for the API fuzzer (issue 28)."""
import nbformat

from robodyn.grading import markup

_M = "robodyn.grading.markup"


def _instructor():
    cells = []
    for gid, src, kw in (("setup", "problems = None", dict(locked=True)),
                         (markup.KEY_ID, "problems.load_key(None)", dict(locked=True)),
                         ("p1_check", "problems.test('p1', x)",
                          dict(grade=True, locked=True, points=1))):
        c = nbformat.v4.new_code_cell(src)
        c.metadata["nbgrader"] = markup.nbgrader_metadata(gid, **kw)
        cells.append(c)
    return nbformat.v4.new_notebook(cells=cells)


def _graded_cell():
    c = nbformat.v4.new_code_cell("x = 1")
    c.metadata["nbgrader"] = markup.nbgrader_metadata("t", grade=True, locked=True, points=1)
    return c


CALLS = {
    f"{_M}.set_self_test": lambda: ((_instructor(), '{"p1": {"points": {}, "shape": []}}'),
                                    {}),
    f"{_M}.nbgrader_checksum": lambda: ((_graded_cell(),), {}),
}
