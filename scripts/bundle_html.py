"""Zip the built HTML book into an offline bundle that the book itself offers for download.

    python scripts/bundle_html.py [_build/html]

writes ``<html>/_downloads/robot-dynamics-interactively-html.zip``: every file of the built site
(MathJax and all other assets included, so it needs no network) under one top-level folder
``robot-dynamics-interactively-html/``, except the bundle itself and the Makefile's ``.built``
stamp. Run it after Sphinx has finished. The archive is deterministic: names in sorted order,
one fixed timestamp and fixed permissions, so the same site gives the same bytes.

Inside the bundle the pages' links to the bundle itself (the intro page's "Download the whole
HTML book") would point at a zip that is not there: each is replaced by a short note that this
is the offline copy. The site on the server keeps its link.
"""
from __future__ import annotations

import pathlib
import re
import sys
import zipfile

NAME = "robot-dynamics-interactively-html"
BUNDLE = pathlib.PurePosixPath("_downloads") / f"{NAME}.zip"
SKIP = {".built"}                       # the Makefile's stamp, not part of the site
EPOCH = (1980, 1, 1, 0, 0, 0)           # zip's earliest date: no build time in the archive
SELF_LINK = re.compile(r'<a\b[^>]*\bhref="[^"]*' + re.escape(NAME) + r'\.zip"[^>]*>.*?</a>',
                       re.DOTALL)
OFFLINE_NOTE = ('<span class="robodyn-offline-note"><strong>This is the offline copy</strong> '
                '(the online book offers it for download here)</span>')


def offline_page(data: bytes) -> bytes:
    """An HTML page as it goes into the bundle: links to the bundle replaced by a note."""
    text = data.decode("utf-8")
    new = SELF_LINK.sub(OFFLINE_NOTE, text)
    return data if new == text else new.encode("utf-8")


def bundle(html: pathlib.Path) -> pathlib.Path:
    """Write the bundle of the site in ``html`` and return its path."""
    html = pathlib.Path(html)
    if not (html / "index.html").is_file():
        raise SystemExit(f"bundle_html: expected a built site with index.html in {html}/, "
                         f"found none (run the book build first)")
    out = html / BUNDLE
    out.parent.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in html.rglob("*") if p.is_file()
                   and p.relative_to(html).as_posix() != BUNDLE.as_posix()
                   and p.name not in SKIP)
    tmp = out.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for path in files:
            info = zipfile.ZipInfo(f"{NAME}/{path.relative_to(html).as_posix()}", EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            data = path.read_bytes()
            zf.writestr(info, offline_page(data) if path.suffix == ".html" else data)
    tmp.replace(out)
    print(f"bundle_html: {len(files)} files -> {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return out


if __name__ == "__main__":
    if len(sys.argv) > 2:
        raise SystemExit(f"usage: {sys.argv[0]} [built site folder]; got {sys.argv[1:]}")
    bundle(pathlib.Path(sys.argv[1] if len(sys.argv) == 2 else "_build/html"))
