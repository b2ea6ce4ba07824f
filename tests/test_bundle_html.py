"""scripts/bundle_html.py on a small site: every file in one top folder, deterministic bytes,
and inside the zip the intro page's link to the zip itself replaced by a note."""
import importlib.util
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bundle_html", ROOT / "scripts" / "bundle_html.py")
bh = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bh)

LINK = ('<a class="reference download" href="../_downloads/robot-dynamics-interactively-html.zip"'
        ' download>Download the whole HTML book</a>')


def site(tmp_path):
    html = tmp_path / "html"
    (html / "book").mkdir(parents=True)
    (html / "index.html").write_text('<meta http-equiv="refresh" content="0; url=book/intro.html">')
    (html / "book" / "intro.html").write_text(f"<p>Offline copy. {LINK} (one zip file)</p>\n"
                                              f'<p><a href="part1.html">Part I</a></p>')
    (html / "_static").mkdir()
    (html / "_static" / "x.js").write_text("var a = 1;")
    (html / ".built").write_text("")
    return html


def test_bundle_replaces_the_self_link_and_keeps_the_rest(tmp_path):
    html = site(tmp_path)
    out = bh.bundle(html)
    with zipfile.ZipFile(out) as zf:
        names = zf.namelist()
        intro = zf.read(f"{bh.NAME}/book/intro.html").decode()
        assert zf.read(f"{bh.NAME}/_static/x.js") == b"var a = 1;"
    assert sorted(names) == [f"{bh.NAME}/{n}" for n in
                             ("README.txt", "_static/x.js", "book/intro.html", "index.html")]
    assert ".zip" not in intro and "This is the offline copy" in intro
    assert '<a href="part1.html">Part I</a>' in intro and "(one zip file)" in intro
    assert LINK in (html / "book" / "intro.html").read_text()       # the served site keeps it
    first = out.read_bytes()
    assert bh.bundle(html).read_bytes() == first                     # deterministic


def test_bundle_needs_a_built_site(tmp_path):
    with pytest.raises(SystemExit, match="expected a built site with index.html"):
        bh.bundle(tmp_path)


MENU = ('<ul class="dropdown-menu"><li><a href="../../_downloads/robot-dynamics-interactively.pdf"'
        ' class="btn">Whole book (.pdf)</a></li><li><a href="../../_downloads/'
        'robot-dynamics-interactively-html.zip" class="btn">Whole book (.zip)</a></li></ul>')
PDF_LINK = ('<a class="reference external" href="../_downloads/robot-dynamics-interactively.pdf">'
            'Download the PDF</a>')


def test_bundle_links_the_online_pdf_and_zip_and_leaves_out_the_404_page(tmp_path):
    """In the zip the whole-book links that would point into it (the PDF is not in it, nor is
    the zip itself) point at the online book's copies; the 404 page and the PDF stay out."""
    html = site(tmp_path)
    (html / "book" / "intro.html").write_text(f"<p>{PDF_LINK}</p><p>{LINK}</p>{MENU}")
    (html / "book" / "part1").mkdir()
    (html / "book" / "part1" / "ch.html").write_text(MENU)
    (html / "404.html").write_text('<head><base href="/r/"></head>')
    (html / "_downloads").mkdir()
    (html / "_downloads" / "robot-dynamics-interactively.pdf").write_bytes(b"%PDF-1.5")
    site_url = "https://o.github.io/r/"
    with zipfile.ZipFile(bh.bundle(html, site_url)) as zf:
        names = {n.split("/", 1)[1] for n in zf.namelist()}
        intro = zf.read(f"{bh.NAME}/book/intro.html").decode()
        chapter = zf.read(f"{bh.NAME}/book/part1/ch.html").decode()
    assert names == {"README.txt", "_static/x.js", "book/intro.html", "book/part1/ch.html",
                     "index.html"}
    online = f"{site_url}_downloads/"
    for page in (intro, chapter):
        assert f'href="{online}robot-dynamics-interactively.pdf"' in page
        assert f'href="{online}robot-dynamics-interactively-html.zip"' in page
        assert 'href="../' not in page
    assert "This is the offline copy" in intro and f'<a href="{site_url}">' in intro
    assert "Download the PDF" in intro and "Whole book (.zip)" in chapter


def test_the_bundles_readme_line_serves_it(tmp_path):
    """The zip's README.txt gives one line that serves the unpacked folder (search shows its
    snippets only from a server): run as written (with a free port), it serves the pages."""
    import re
    import shlex
    import socket
    import subprocess
    import sys
    import time
    import urllib.request
    out = bh.bundle(site(tmp_path))
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(out) as zf:
        zf.extractall(unpacked)
        readme = zf.read(f"{bh.NAME}/README.txt").decode()
    lines = [line.strip() for line in readme.splitlines() if line.strip().startswith("python3 ")]
    assert lines == [bh.SERVE], readme
    assert "http://127.0.0.1:8000/" in readme and bh.SERVE.endswith(" 8000")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = shlex.split(re.sub(r" 8000$", f" {port}", bh.SERVE))
    assert cmd[0] == "python3"
    proc = subprocess.Popen([sys.executable, *cmd[1:]], cwd=unpacked,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/book/intro.html",
                                            timeout=2) as r:
                    body = r.read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "no server"
                time.sleep(0.2)
        assert "This is the offline copy" in body
    finally:
        proc.terminate()
        proc.wait(10)
