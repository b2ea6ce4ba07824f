"""Sphinx extension: what the published site tells its readers and their tools.

Everything here reads the book's one public address from Sphinx's config, which Jupyter Book
fills from ``_config.yml`` (``html.baseurl`` -> ``html_baseurl``, the site; ``repository.url``
and ``.branch`` -> ``html_theme_options``).

* **Footer.** Every page names the book's version (robodyn's, ``lib/pyproject.toml``), its build
  date (UTC; ``SOURCE_DATE_EPOCH`` when set) and the commit it was built from (``GITHUB_SHA``
  in a GitHub workflow, else ``git rev-parse HEAD``), linked to that commit in the repository.
* **The whole book in every download menu.** The theme's "Download this page" menu gets two
  more entries: the whole book as a PDF (``WHOLE_PDF``, which ``make site`` copies there from
  ``make pdf``) and as the offline zip (``WHOLE_ZIP``, ``scripts/bundle_html.py``).
* **404 page.** ``404.html``, a page of the book that leads back to it (introduction, search,
  contents). GitHub Pages serves it for a missing address at any depth, so its head starts with
  ``<base href="/<site path>/">``: its stylesheets and links resolve from the site's root.
* **Descriptions without TeX.** A page's ``og:description``, ``<meta name="description">`` and
  the text on its card are its first paragraphs that hold no mathematics, up to
  ``ogp_description_length`` characters: sphinxext-opengraph 0.13's own description parser
  (``sphinxext.opengraph.get_description``, which it has no option to replace) would show the
  TeX source of the formulas, so this extension puts :func:`plain_description` in its place.
* **robots.txt** naming the sitemap (``sitemap.xml``, sphinx-sitemap).
"""
from __future__ import annotations

import datetime
import os
import subprocess
import tomllib
from pathlib import Path
from urllib.parse import urlparse

from docutils import nodes

ROOT = Path(__file__).resolve().parents[2]
WHOLE_PDF = "_downloads/robot-dynamics-interactively.pdf"
WHOLE_ZIP = "_downloads/robot-dynamics-interactively-html.zip"


def book_version() -> str:
    """The book's version: the version of its library, ``lib/pyproject.toml``."""
    with open(ROOT / "lib" / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]


def build_commit() -> str | None:
    """The full hash of the commit being built, or None outside a git checkout."""
    sha = os.environ.get("GITHUB_SHA", "").strip()
    if sha:
        return sha
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def build_date() -> str:
    """The build's date, ``YYYY-MM-DD`` in UTC (from ``SOURCE_DATE_EPOCH`` when it is set)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch
            else datetime.datetime.now(datetime.timezone.utc))
    return when.strftime("%Y-%m-%d")


def footer_html(version: str, date: str, commit: str | None, repository_url: str) -> str:
    """The footer line.

    >>> footer_html("0.1.0", "2026-12-02", "0123456789abcdef", "https://github.com/o/r")
    '<p class="robodyn-build">Version 0.1.0, built 2026-12-02 from commit \
<a href="https://github.com/o/r/commit/0123456789abcdef">0123456</a>.</p>'
    """
    made = f"Version {version}, built {date}"
    if commit:
        made += (f' from commit <a href="{repository_url.rstrip("/")}/commit/{commit}">'
                 f"{commit[:7]}</a>")
    return f'<p class="robodyn-build">{made}.</p>'


def add_footer(app, config):
    """config-inited: the version in Sphinx's config and the footer in the theme's options."""
    version = book_version()
    config.version = config.release = version
    options = dict(config.html_theme_options or {})
    options["extra_footer"] = footer_html(version, build_date(), build_commit(),
                                          options.get("repository_url", ""))
    config.html_theme_options = options


def add_whole_book_downloads(app, pagename, templatename, context, doctree):
    """html-page-context, after the theme's buttons: the whole book in the download menu."""
    pathto = context.get("pathto")
    for group in context.get("header_buttons", []):
        if group.get("label") != "download-buttons":
            continue
        group["buttons"] += [
            {"type": "link", "url": pathto(WHOLE_PDF, 1), "text": "Whole book (.pdf)",
             "tooltip": "Download the whole book as one PDF", "icon": "fas fa-book",
             "label": "download-book-pdf-button"},
            {"type": "link", "url": pathto(WHOLE_ZIP, 1), "text": "Whole book (.zip)",
             "tooltip": "Download the whole HTML book for offline reading",
             "icon": "fas fa-file-zipper", "label": "download-book-zip-button"},
        ]


def plain_description(doctree, limit: int) -> str:
    """The first paragraphs of a page that hold no math, joined, cut at a word to ``limit``
    characters (with an ellipsis)."""
    text = ""
    for para in doctree.findall(nodes.paragraph):
        if para.next_node(nodes.math) is not None or para.next_node(nodes.raw) is not None:
            continue
        words = " ".join(para.astext().split())
        if not words:
            continue
        text = f"{text} {words}".strip()
        if len(text) >= limit:
            break
    if len(text) > limit:
        text = text[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text


NOT_FOUND_BODY = """
<section id="page-not-found">
<h1>Page not found</h1>
<p>There is no page at this address in <em>{title}</em>. It may have moved when the book's
chapters were rearranged.</p>
<ul>
<li><a href="{root}">Start at the introduction</a>, which lists the book's parts,</li>
<li><a href="search.html">search the book</a>, or</li>
<li>pick a chapter from the table of contents.</li>
</ul>
</section>
"""


def not_found_page(app):
    """html-collect-pages: ``404.html``, rendered with the book's own template and sidebar."""
    if app.builder.format != "html":
        return []
    title = app.config.project
    root = app.builder.get_target_uri(app.config.root_doc)
    context = {"title": "Page not found", "body": NOT_FOUND_BODY.format(title=title, root=root),
               "sourcename": "", "display_toc": False}
    return [("404", context, "page.html")]


def site_path(html_baseurl: str) -> str:
    """The site's path on its host, with a slash at each end.

    >>> site_path("https://o.github.io/r/")
    '/r/'
    >>> site_path("https://example.org")
    '/'
    """
    path = urlparse(html_baseurl).path.strip("/")
    return f"/{path}/" if path else "/"


def finish_site(app, exception):
    """build-finished: the 404 page's <base> and robots.txt."""
    if exception is not None or app.builder.format != "html" or not app.config.html_baseurl:
        return
    out = Path(app.outdir)
    page = out / "404.html"
    if page.exists():
        text = page.read_text(encoding="utf-8")
        base = f'<base href="{site_path(app.config.html_baseurl)}">'
        if base not in text:
            text = text.replace("<head>", f"<head>\n    {base}", 1)
            page.write_text(text, encoding="utf-8")
    name = getattr(app.config, "sitemap_filename", "sitemap.xml")
    sitemap = app.config.html_baseurl.rstrip("/") + "/" + name
    (out / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {sitemap}\n",
                                    encoding="utf-8")


def _description_for_opengraph(doctree, length, known_titles=None, document=None):
    return plain_description(doctree, length)


def setup(app):
    import sphinxext.opengraph
    sphinxext.opengraph.get_description = _description_for_opengraph
    app.connect("config-inited", add_footer)
    # MathJax on every page, not only on pages with equations: the sidebar's chapter titles
    # carry math ($M$), which the search page, the index and the pages without equations showed
    # raw ("\\(M\\)"), the offline copy too (tests/browser/test_site.py).
    app.set_html_assets_policy("always")
    app.connect("html-page-context", add_whole_book_downloads, priority=600)
    app.connect("html-collect-pages", not_found_page)
    app.connect("build-finished", finish_site)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
