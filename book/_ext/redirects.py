"""Sphinx extension: the old addresses of renamed pages keep working.

``book_redirects`` (Sphinx config, set in ``_config.yml``) maps an old page name to its new one
(doc names, without ``.html``: ``book/part4/05_many_contacts: book/part4/04_many_contacts``).
After an HTML build, each old name gets a small page ``<old>.html`` that sends the reader on at
once, three ways: ``<meta http-equiv="refresh">`` (no script needed), a script that keeps the
query and the ``#anchor`` of the old link (``location.replace``), and a plain link. Its
``<link rel="canonical">`` names the new page's public address (``html_baseurl``, from
``html.baseurl`` of ``_config.yml``), and it asks search engines not to index it. The build
stops with an error when an old name is still a page of the book or a new one is not.

>>> print(redirect_html("book/part4/05_x", "book/part4/04_x", "https://o.github.io/r/"))
... # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>This page has moved</title>
<link rel="canonical" href="https://o.github.io/r/book/part4/04_x.html">
<meta name="robots" content="noindex">
<meta http-equiv="refresh" content="0; url=04_x.html">
<script>location.replace("04_x.html" + location.search + location.hash);</script>
</head>
<body><p>This page has moved to <a href="04_x.html">04_x.html</a>.</p></body>
</html>
"""
from __future__ import annotations

import html
import json
import posixpath
from pathlib import Path

from sphinx.errors import ExtensionError


def relative_url(old: str, new: str) -> str:
    """The link from page ``old`` to page ``new`` (doc names), relative to ``old``'s folder.

    >>> relative_url("book/part5/03a_x", "book/part5/04_x"), relative_url("a/b", "c/d")
    ('04_x.html', '../c/d.html')
    """
    return posixpath.relpath(f"{new}.html", posixpath.dirname(old) or ".")


def redirect_html(old: str, new: str, baseurl: str) -> str:
    """The page written at ``<old>.html``, which sends its reader to ``<new>.html``."""
    rel = relative_url(old, new)
    attr = html.escape(rel, quote=True)
    canonical = html.escape(f"{baseurl.rstrip('/')}/{new}.html" if baseurl else rel, quote=True)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>This page has moved</title>\n"
            f'<link rel="canonical" href="{canonical}">\n'
            f'<meta name="robots" content="noindex">\n'
            f'<meta http-equiv="refresh" content="0; url={attr}">\n'
            f"<script>location.replace({json.dumps(rel)} + location.search + location.hash);"
            f"</script>\n</head>\n"
            f'<body><p>This page has moved to <a href="{attr}">{html.escape(rel)}</a>.</p>'
            f"</body>\n</html>\n")


def check_redirects(redirects, docnames) -> None:
    """Refuse a map whose old name is still a page or whose new name is not one."""
    if not isinstance(redirects, dict):
        raise ExtensionError(f"book_redirects: expected a mapping old -> new page, got "
                             f"{type(redirects).__name__}")
    for old, new in redirects.items():
        if old in docnames:
            raise ExtensionError(f"book_redirects: {old!r} is still a page of the book")
        if new not in docnames:
            raise ExtensionError(f"book_redirects: {old!r} -> {new!r}, which is no page")


def write_redirects(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    redirects = app.config.book_redirects or {}
    check_redirects(redirects, set(app.env.found_docs))
    for old, new in redirects.items():
        path = Path(app.outdir) / f"{old}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(redirect_html(old, new, app.config.html_baseurl or ""), encoding="utf-8")


def setup(app):
    app.add_config_value("book_redirects", {}, "html")
    app.connect("build-finished", write_redirects)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
