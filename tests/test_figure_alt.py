"""Every matplotlib figure of the book has alt text (issue 41's accessibility of the pages),
found in the notebook sources without a build: a code cell that shows a figure
(``plt.show()``) carries ``"mystnb": {"image": {"alt": ...}}`` in its metadata, which MyST-NB
writes into the page's ``<img alt=...>``. The browser test (tests/browser/test_pages.py) finds
the same defect in the built page, minutes later."""
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for p in (ROOT / "book").rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts and "_build" not in p.parts)


def figures_without_alt(path):
    """Indices of the code cells of ``path`` that show a figure and give it no alt text."""
    nb = nbformat.read(path, as_version=4)
    return [i for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and "plt.show()" in cell.source
            and not str(cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")).strip()]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_figure_has_alt_text(path):
    bad = figures_without_alt(path)
    assert not bad, (f"{path.relative_to(ROOT)}: code cells {bad} show a figure without alt "
                     f"text; add to the cell's metadata \"mystnb\": {{\"image\": {{\"alt\": "
                     f"\"what the figure shows\"}}}}")
