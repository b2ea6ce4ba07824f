"""The book's code fits its code box: every code line of every notebook under book/ is at
most 88 characters long (longer lines are cut in the rendered page and need horizontal
scrolling). Cells the page does not show (tagged ``remove-cell`` or ``remove-input``, such as
the problem sets' generated answer key) are not in a code box and are not counted."""
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 88
HIDDEN = {"remove-cell", "remove-input"}   # cells the rendered page does not show
NOTEBOOKS = sorted(p for p in (ROOT / "book").rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts)


def long_lines(path, width=WIDTH):
    """(cell index, line number, length) of every code line longer than `width`."""
    nb = nbformat.read(path, as_version=4)
    return [(i, j + 1, len(line)) for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code"
            and not HIDDEN & set(cell.get("metadata", {}).get("tags", []))
            for j, line in enumerate(cell.source.split("\n")) if len(line) > width]


def test_the_book_has_notebooks():
    assert len(NOTEBOOKS) > 30


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_code_lines_fit_the_code_box(path):
    found = long_lines(path)
    assert not found, (f"{path.relative_to(ROOT)}: code lines over {WIDTH} characters "
                       f"(cell, line, length): {found}")


def test_a_long_line_is_found(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("x" * 200),
                nbformat.v4.new_code_cell("a = 1\n" + "b = " + "1 + " * 25 + "1")]
    path = tmp_path / "long.ipynb"
    nbformat.write(nb, path)
    assert long_lines(path) == [(1, 2, 4 + 4 * 25 + 1)]


def test_a_removed_cell_is_not_counted(tmp_path):
    nb = nbformat.v4.new_notebook()
    hidden = nbformat.v4.new_code_cell("key = " + "1 + " * 40 + "1")
    hidden.metadata["tags"] = ["remove-cell"]
    nb.cells = [hidden, nbformat.v4.new_code_cell("b = " + "1 + " * 25 + "1")]
    path = tmp_path / "long.ipynb"
    nbformat.write(nb, path)
    assert long_lines(path) == [(1, 1, 4 + 4 * 25 + 1)]
