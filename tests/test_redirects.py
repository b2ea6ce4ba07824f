"""The old addresses of renamed chapters (issue 30, erratum 9): _config.yml's ``book_redirects``
maps each old page name to a page of the table of contents, no old name is a page or a file of
the book any more, and book/_ext/redirects.py writes the page that sends a reader on.
tests/browser/test_site.py follows every old address in the built site."""
import importlib.util
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


redirects = _load("redirects", ROOT / "book" / "_ext" / "redirects.py")
book_toc = _load("book_toc", ROOT / "scripts" / "book_toc.py")
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
REDIRECTS = CONFIG["sphinx"]["config"]["book_redirects"]
PAGES = book_toc.toc_files(ROOT / "_toc.yml")


def test_the_extension_is_on():
    sphinx = CONFIG["sphinx"]
    assert "redirects" in sphinx["config"]["extensions"]
    assert sphinx["local_extensions"]["redirects"] == "book/_ext"


@pytest.mark.parametrize("old", sorted(REDIRECTS))
def test_old_name_leads_to_a_page(old):
    new = REDIRECTS[old]
    assert new in PAGES, f"{old} -> {new}, which is not in _toc.yml"
    assert old not in PAGES, f"{old} is still in _toc.yml"
    left = [p for p in (ROOT / f"{old}.ipynb", ROOT / f"{old}.md") if p.exists()]
    assert not left, f"{old} is redirected but its file is still there: {left}"


def test_redirect_page():
    page = redirects.redirect_html("book/part5/03a_flexible_spin", "book/part5/04_flexible_spin",
                                   "https://o.github.io/r/")
    assert '<meta http-equiv="refresh" content="0; url=04_flexible_spin.html">' in page
    assert '<link rel="canonical" href="https://o.github.io/r/book/part5/04_flexible_spin.html">' \
        in page
    assert 'location.replace("04_flexible_spin.html" + location.search + location.hash)' in page


def test_a_bad_map_stops_the_build():
    from sphinx.errors import ExtensionError
    docs = {"book/a", "book/b"}
    redirects.check_redirects({"book/old": "book/a"}, docs)
    with pytest.raises(ExtensionError, match="still a page"):
        redirects.check_redirects({"book/a": "book/b"}, docs)
    with pytest.raises(ExtensionError, match="which is no page"):
        redirects.check_redirects({"book/old": "book/gone"}, docs)
    with pytest.raises(ExtensionError, match="expected a mapping"):
        redirects.check_redirects(["book/old"], docs)
