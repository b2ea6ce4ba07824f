"""book/_ext/site_info.py without a Sphinx build: descriptions without TeX, the whole book in the
download menu, the footer line."""
import importlib.util
from pathlib import Path

from docutils.core import publish_doctree

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("site_info", ROOT / "book" / "_ext" / "site_info.py")
si = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(si)

def test_description_skips_math_and_stops_at_a_word():
    doctree = publish_doctree("Title\n=====\n\nThe mass matrix :math:`M(q)` is symmetric.\n\n"
                              "Robots move because forces act on their links.\n\n"
                              "Each chapter ends with a check cell that verifies its claim.\n")
    assert si.plain_description(doctree, 200) == (
        "Robots move because forces act on their links. Each chapter ends with a check cell "
        "that verifies its claim.")
    short = si.plain_description(doctree, 30)
    assert short == "Robots move because forces…" and len(short) <= 30


def test_download_menu_gets_the_whole_book():
    group = {"label": "download-buttons", "buttons": [{"label": "download-source-button"}]}
    context = {"header_buttons": [{"label": "fullscreen"}, group],
               "pathto": lambda target, resource: f"../../{target}"}
    si.add_whole_book_downloads(None, "book/part1/01", "page.html", context, None)
    urls = [b.get("url") for b in group["buttons"]]
    assert urls == [None, f"../../{si.WHOLE_PDF}", f"../../{si.WHOLE_ZIP}"]
    assert context["header_buttons"][0] == {"label": "fullscreen"}


def test_footer_without_git():
    assert si.footer_html("1.2.0", "2026-01-31", None, "https://github.com/o/r") == (
        '<p class="robodyn-build">Version 1.2.0, built 2026-01-31.</p>')
