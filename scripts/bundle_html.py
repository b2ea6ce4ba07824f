"""Zip the built HTML book into an offline bundle that the book itself offers for download.

    python scripts/bundle_html.py [_build/html]

writes ``<html>/_downloads/robot-dynamics-interactively-html.zip``: every file of the built site
(MathJax and all other assets included, so it needs no network) under one top-level folder
``robot-dynamics-interactively-html/``, except the bundle itself and the Makefile's ``.built``
stamp, plus a ``README.txt`` that says what the folder is and gives the one line that serves it
(search shows its snippets only from a server: browsers refuse ``fetch`` on ``file://``). Run it
after Sphinx has finished. The archive is deterministic: names in sorted order,
one fixed timestamp and fixed permissions, so the same site gives the same bytes.

Inside the bundle the pages' links to the bundle itself would point at a zip that is not there,
and the links to the whole book's PDF at a file that is not there either (``make site`` copies
the PDF into the published site after this bundle is made). So in the bundle the intro page's
"Download the whole HTML book" becomes a short note that this is the offline copy of the online
book, and every other link to the zip or the PDF (the pages' download menus, the intro's PDF)
points at the online book's copy, at the public address of ``_config.yml``
(scripts/site_address.py). The site on the server keeps its links. The 404 page is left out:
it serves the online site (its ``<base>`` is the site's path there).
"""
from __future__ import annotations

import html as htmllib
import importlib.util
import pathlib
import re
import sys
import zipfile

NAME = "robot-dynamics-interactively-html"
PDF_NAME = "robot-dynamics-interactively.pdf"   # make site copies make pdf's PDF there
BUNDLE = pathlib.PurePosixPath("_downloads") / f"{NAME}.zip"
PDF = pathlib.PurePosixPath("_downloads") / PDF_NAME
SKIP = {".built", "404.html"}           # the Makefile's stamp; the online site's 404 page
EPOCH = (1980, 1, 1, 0, 0, 0)           # zip's earliest date: no build time in the archive
# the intro page's link (a "reference download" in the article) to the bundle
SELF_LINK = re.compile(r'<a\b[^>]*\bclass="reference download"[^>]*\bhref="[^"]*'
                       + re.escape(NAME) + r'\.zip"[^>]*>.*?</a>', re.DOTALL)
# any other relative link to the bundle or the PDF (download menus, the intro's PDF link)
WHOLE_BOOK_HREF = re.compile(r'\bhref="(?![a-z]+:)[^"]*?(' + re.escape(f"{NAME}.zip") + "|"
                             + re.escape(PDF_NAME) + ')"')
OFFLINE_NOTE = ('<span class="robodyn-offline-note"><strong>This is the offline copy</strong> '
                'of <a href="{site}">the online book</a>, which offers it for download</span>')


def _site_url() -> str:
    spec = importlib.util.spec_from_file_location(
        "site_address", pathlib.Path(__file__).with_name("site_address.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.site_address().site_url


def offline_page(data: bytes, site_url: str) -> bytes:
    """An HTML page as it goes into the bundle: the intro's link to the bundle replaced by a
    note, every other link to the bundle or the PDF pointing at the online book's copy."""
    text = data.decode("utf-8")
    site = htmllib.escape(site_url, quote=True)
    new = SELF_LINK.sub(OFFLINE_NOTE.format(site=site), text)
    new = WHOLE_BOOK_HREF.sub(lambda m: f'href="{site}_downloads/{m.group(1)}"', new)
    return data if new == text else new.encode("utf-8")


SERVE = f"python3 -m http.server --bind 127.0.0.1 --directory {NAME} 8000"
"""The one line that serves the unpacked bundle (run where the zip was unpacked)."""
README = """Robot Dynamics, Interactively: the offline copy of the book ({site}).

Open index.html in a browser: the whole book works from these files, no network needed.
Search works too, but the snippet under each result shows only when the folder is served
(browsers refuse to read the pages from file://). With Python 3, in the folder that holds
this one:

    {serve}

then open http://127.0.0.1:8000/ (Ctrl+C stops it).
"""
"""The bundle's README.txt: what the folder is and the one line that serves it."""


def bundle(html: pathlib.Path, site_url: str | None = None) -> pathlib.Path:
    """Write the bundle of the site in ``html`` and return its path; ``site_url`` is the online
    book's address (default: ``_config.yml``'s)."""
    html = pathlib.Path(html)
    site_url = site_url or _site_url()
    if not (html / "index.html").is_file():
        raise SystemExit(f"bundle_html: expected a built site with index.html in {html}/, "
                         f"found none (run the book build first)")
    out = html / BUNDLE
    out.parent.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in html.rglob("*") if p.is_file()
                   and p.relative_to(html).as_posix() not in (BUNDLE.as_posix(), PDF.as_posix())
                   and p.relative_to(html).as_posix() not in SKIP)
    tmp = out.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for path in files:
            info = zipfile.ZipInfo(f"{NAME}/{path.relative_to(html).as_posix()}", EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            data = path.read_bytes()
            zf.writestr(info, offline_page(data, site_url) if path.suffix == ".html" else data)
        info = zipfile.ZipInfo(f"{NAME}/README.txt", EPOCH)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        zf.writestr(info, README.format(site=site_url, serve=SERVE))
    tmp.replace(out)
    print(f"bundle_html: {len(files)} files -> {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return out


if __name__ == "__main__":
    if len(sys.argv) > 2:
        raise SystemExit(f"usage: {sys.argv[0]} [built site folder]; got {sys.argv[1:]}")
    bundle(pathlib.Path(sys.argv[1] if len(sys.argv) == 2 else "_build/html"))
