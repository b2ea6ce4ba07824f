"""The built site as its readers' tools see it, offline: every launch link names a notebook that
is in the repository at that path (on the branch the site is published from, see
tests/test_publishing.py); canonical URLs, social cards and the sitemap use the one public
address of _config.yml; the footer says which version, date and commit it shows; the PDF and the
offline zip are linked from the introduction and from every page's download menu, and the
browser follows them; a missing address gets the 404 page, which leads back into the book; the
offline search finds the right chapters first."""
from __future__ import annotations

import functools
import html as htmllib
import http.server
import re
import subprocess
import threading
import tomllib
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from urllib.parse import urljoin, urlparse

import pytest

from test_pages import (ADDRESS, HTML, NOTEBOOK_PAGES, PAGES, ROOT, _load,  # noqa: F401
                        browser, open_page, server, watch)

site_info = _load("site_info", ROOT / "book" / "_ext" / "site_info.py")
HREF = re.compile(r'\bhref="([^"]+)"')


def page_html(page):
    return (HTML / f"{page}.html").read_text(encoding="utf-8")


def meta(text, key):
    """The content of ``<meta property|name="key" content="...">`` in a page, or None."""
    m = re.search(r'<meta (?:property|name)="' + re.escape(key) + r'" content="([^"]*)"', text)
    return htmllib.unescape(m.group(1)) if m else None


@functools.cache
def tracked_files():
    """The files of the commit being built (the site is published from ADDRESS.branch only)."""
    out = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return set(out.splitlines())


# --------------------------------------------------------------------------
# launch links
# --------------------------------------------------------------------------

BINDER = re.compile(r"^https://mybinder\.org/v2/gh/(?P<repo>[^/]+/[^/]+)/(?P<branch>[^?]+)"
                    r"\?urlpath=lab/tree/(?P<path>.+)$")
COLAB = re.compile(r"^https://colab\.research\.google\.com/github/(?P<repo>[^/]+/[^/]+)/blob/"
                   r"(?P<branch>[^/]+)/(?P<path>.+)$")


def test_every_launch_link_names_a_notebook_of_the_repository():
    """On every built page, each Binder and Colab link names this repository and branch and a
    notebook that git tracks at that path: the page's own notebook."""
    problems, seen = [], 0
    for page in PAGES:
        links = [htmllib.unescape(h) for h in HREF.findall(page_html(page))
                 if "mybinder.org" in h or "colab.research.google.com" in h]
        kinds = set()
        for link in links:
            m = BINDER.match(link) or COLAB.match(link)
            if not m:
                problems.append(f"{page}: a launch link of unknown form: {link}")
                continue
            kinds.add("binder" if m.re is BINDER else "colab")
            seen += 1
            if m["repo"] != ADDRESS.repository or m["branch"] != ADDRESS.branch:
                problems.append(f"{page}: {link} names {m['repo']}@{m['branch']}, the book is "
                                f"{ADDRESS.repository}@{ADDRESS.branch}")
            if m["path"] not in tracked_files():
                problems.append(f"{page}: {link}: {m['path']} is not in the repository")
            if m["path"] != f"{page}.ipynb":
                problems.append(f"{page}: {link} opens {m['path']}, not the page's notebook")
        if page in NOTEBOOK_PAGES and kinds != {"binder", "colab"}:
            problems.append(f"{page}: launch links {sorted(kinds)}, expected Binder and Colab")
    assert seen >= 2 * len(NOTEBOOK_PAGES)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------
# canonical URLs, social cards, sitemap, robots.txt, footer
# --------------------------------------------------------------------------

def test_canonical_urls_and_social_cards():
    """Every page names its public URL as canonical and og:url, and has a title, a description
    without TeX, and an image (a chapter's figure or its card) that is in the built site."""
    problems = []
    for page in PAGES:
        text = page_html(page)
        url = ADDRESS.page_url(page)
        canonical = re.search(r'<link rel="canonical" href="([^"]+)"', text)
        if not canonical or canonical.group(1) != url:
            problems.append(f"{page}: canonical {canonical and canonical.group(1)}, not {url}")
        if meta(text, "og:url") != url:
            problems.append(f"{page}: og:url {meta(text, 'og:url')}")
        for key in ("og:title", "og:description", "description", "og:image:alt"):
            if not (meta(text, key) or "").strip():
                problems.append(f"{page}: no {key}")
        description = meta(text, "og:description") or ""
        if "\\" in description or "$" in description:
            problems.append(f"{page}: TeX in the description: {description[:80]}")
        image = meta(text, "og:image") or ""
        if not image.startswith(ADDRESS.site_url) or not image.endswith(".png"):
            problems.append(f"{page}: og:image {image!r} is not a PNG of the site")
        elif not (HTML / image[len(ADDRESS.site_url):]).is_file():
            problems.append(f"{page}: og:image {image} is not in the built site")
    assert not problems, "\n".join(problems)


def test_sitemap_lists_every_page():
    """sitemap.xml lists the public URL of every page of the table of contents (and of the
    equation-label index pages Sphinx adds), and robots.txt points at it."""
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [e.text for e in ET.parse(HTML / "sitemap.xml").getroot().findall("s:url/s:loc", ns)]
    missing = {ADDRESS.page_url(p) for p in PAGES} - set(locs)
    assert not missing, f"pages missing from the sitemap: {sorted(missing)[:5]}"
    for loc in locs:
        assert loc.startswith(ADDRESS.site_url), loc
        assert (HTML / loc[len(ADDRESS.site_url):]).is_file(), f"sitemap names a missing {loc}"
        assert not loc.endswith(("404.html", "search.html", "genindex.html")), loc
    robots = (HTML / "robots.txt").read_text()
    assert f"Sitemap: {ADDRESS.site_url}sitemap.xml" in robots


def test_footer_names_version_date_and_commit():
    """Every page's footer: "Version X, built YYYY-MM-DD from commit abcdef0" (robodyn's version;
    a commit of this repository, linked in the public repository)."""
    with open(ROOT / "lib" / "pyproject.toml", "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    footer = re.compile(r'<p class="robodyn-build">Version (?P<v>[^,]+), built '
                        r'(?P<date>\d{4}-\d{2}-\d{2}) from commit <a href="(?P<href>[^"]+)">'
                        r'(?P<short>[0-9a-f]{7})</a>\.</p>')
    commits = set()
    for page in PAGES + ["404"]:
        m = footer.search(page_html(page))
        assert m, f"{page}: no version line in the footer"
        assert m["v"] == version, (page, m["v"])
        assert m["href"] == f"{ADDRESS.repository_url}/commit/{m['href'].rsplit('/', 1)[1]}"
        assert m["href"].rsplit("/", 1)[1].startswith(m["short"])
        commits.add(m["href"].rsplit("/", 1)[1])
    assert len(commits) == 1
    sha = commits.pop()
    found = subprocess.run(["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=ROOT,
                           timeout=30).returncode
    assert found == 0, f"the footer's commit {sha} is not in this repository"


# --------------------------------------------------------------------------
# the whole book: PDF and offline zip
# --------------------------------------------------------------------------

def whole_book_links(page, base):
    """The download menu's links to the whole book on ``page``, resolved against ``base``."""
    text = page_html(page)
    menu = text.split("dropdown-download-buttons", 1)
    hrefs = HREF.findall(menu[1].split("</ul>", 1)[0]) if len(menu) == 2 else []
    return {urljoin(f"{base}/{page}.html", h) for h in hrefs
            if h.endswith((site_info.WHOLE_PDF, site_info.WHOLE_ZIP))}


def test_every_download_menu_offers_the_whole_book():
    base = "http://site"
    want = {f"{base}/{site_info.WHOLE_PDF}", f"{base}/{site_info.WHOLE_ZIP}"}
    wrong = {p: whole_book_links(p, base) for p in PAGES}
    wrong = {p: links for p, links in wrong.items() if links != want}
    assert not wrong, f"download menus without the whole book: {wrong}"


def follow(url, size_of=None):
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10) as r:
        assert r.status == 200, f"{url}: HTTP {r.status}"
        if size_of is not None:
            assert int(r.headers["Content-Length"]) == size_of.stat().st_size, url


@pytest.mark.parametrize("page", [PAGES[0], NOTEBOOK_PAGES[0], PAGES[-1]])
def test_whole_book_links_in_the_browser(server, browser, page):
    """The introduction's article and every page's download menu link the PDF and the zip; the
    browser's resolved links are followed. The PDF is in the site once `make site` has copied
    it (the published site); before that, its link must name exactly that path."""
    problems = []
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    watch(tab, server, problems)
    open_page(tab, f"{server}/{page}.html")
    tab.locator(".dropdown-download-buttons > button").click()
    menu = tab.locator(".dropdown-download-buttons a")
    hrefs = menu.evaluate_all("as => as.map(a => a.href)")
    visible = [menu.nth(i).is_visible() for i in range(menu.count())
               if menu.nth(i).get_attribute("href", timeout=1000).endswith((".pdf", ".zip"))]
    scope = ["article.bd-article a"] if page == PAGES[0] else []
    for sel in scope:
        hrefs += tab.locator(sel).evaluate_all("as => as.map(a => a.href)")
    context.close()
    assert visible == [True, True], f"{page}: whole-book entries of the menu shown: {visible}"
    pdf = f"{server}/{site_info.WHOLE_PDF}"
    zip_ = f"{server}/{site_info.WHOLE_ZIP}"
    need = 2 if page == PAGES[0] else 1
    assert hrefs.count(pdf) == need and hrefs.count(zip_) == need, (page, hrefs)
    follow(zip_, HTML / site_info.WHOLE_ZIP)
    if (HTML / site_info.WHOLE_PDF).exists():
        follow(pdf, HTML / site_info.WHOLE_PDF)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------
# 404
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pages_server():
    """The built site served like GitHub Pages serves it: under the site's path, and a missing
    address answered with 404.html (status 404)."""
    prefix = site_info.site_path(ADDRESS.site_url)

    class Pages(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def translate_path(self, path):
            path = urlparse(path).path
            if not path.startswith(prefix):
                return str(HTML / "no such file")
            return super().translate_path("/" + path[len(prefix):])

        def send_error(self, code, message=None, explain=None):
            if code != 404:
                return super().send_error(code, message, explain)
            body = (HTML / "404.html").read_bytes()
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    handler = functools.partial(Pages, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", prefix
    httpd.shutdown()


@pytest.mark.parametrize("missing", ["no-such-page.html", "book/part9/01_gone.html"])
def test_404_page_leads_back_into_the_book(pages_server, browser, missing):
    """A missing address, at the top or deep down, shows the book's 404 page with its styles,
    and its first link opens the introduction."""
    origin, prefix = pages_server
    problems = []
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    watch(tab, origin, problems)
    response = tab.goto(f"{origin}{prefix}{missing}", wait_until="load")
    assert response.status == 404
    # the page's own 404 (reported twice: as a response and on the console) is what it is for;
    # any other failed request still shows as its own "HTTP ..." line
    problems = [p for p in problems if not p.startswith(f"HTTP 404: {origin}{prefix}{missing}")]
    own = "console: Failed to load resource: the server responded with a status of 404"
    if any(p.startswith(own) for p in problems):
        problems.remove(next(p for p in problems if p.startswith(own)))
    assert tab.locator("#page-not-found h1").inner_text().strip().startswith("Page not found")
    # the theme's stylesheet applies: the sidebar is laid out beside the article
    assert tab.locator(".bd-sidebar-primary").first.is_visible()
    assert tab.evaluate("() => [...document.styleSheets].filter(s => s.cssRules.length).length") > 3
    tab.locator("#page-not-found a").first.click()
    tab.wait_for_url(f"{origin}{prefix}{PAGES[0]}.html", timeout=10000)
    open_page(tab, tab.url)
    assert "Robot Dynamics" in tab.title()
    context.close()
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------
# search, offline
# --------------------------------------------------------------------------

SEARCHES = {
    "Christoffel": {"book/part2/01_euler_lagrange", "book/part2/04_geometry"},
    "Udwadia": {"book/part3/05_udwadia_kalaba"},
    "heel strike": {"book/part4/06_walking", "book/part4/07_walking_stability"},
}


@pytest.mark.parametrize("query", sorted(SEARCHES))
def test_search_finds_the_right_chapter_first(server, browser, query):
    """Sphinx's offline search (search.html + searchindex.js, no network) puts the chapter about
    the term first."""
    problems = []
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    watch(tab, server, problems)
    tab.goto(f"{server}/search.html?q={urllib.parse.quote(query)}", wait_until="load")
    tab.wait_for_function("() => { const s = document.querySelector('#search-results p');"
                          " return s && /found|did not match/i.test(s.textContent); }",
                          timeout=30000)
    hrefs = tab.locator("#search-results ul.search li > a").evaluate_all(
        "as => as.map(a => a.getAttribute('href'))")
    context.close()
    pages = [h.split("?")[0].split("#")[0].removesuffix(".html") for h in hrefs]
    assert pages, f"{query}: no results"
    assert pages[0] in SEARCHES[query], f"{query}: first results {pages[:5]}"
    assert not problems, "\n".join(problems)


def _sidebar_math(tab):
    """(raw TeX left in the sidebar's titles, typeset formulas there) once MathJax is done."""
    if tab.evaluate("() => !!(window.MathJax && MathJax.startup && MathJax.startup.promise)"):
        tab.evaluate("() => MathJax.startup.promise")       # after load: MathJax has started
    nav = tab.locator("nav.bd-links").first
    return re.findall(r"\\\(.*?\\\)", nav.inner_text()), nav.locator("mjx-container").count()


@pytest.mark.parametrize("page", ["search.html?q=mass%20matrix", "genindex.html"])
def test_offline_copy_from_file_typesets_the_sidebar(browser, page):
    """Opened from file:// as the offline copy is: the search finds pages, and on the search
    page and the index (pages without equations of their own) the sidebar's chapter titles show
    typeset math, not "\\(M\\)" (book/_ext/site_info.py loads MathJax on every page). The
    snippets under the results need a server (browsers refuse fetch on file://): the zip's
    README.txt gives the line (tests/test_bundle_html.py runs it)."""
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book at {HTML}: run `make book` first")
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    tab.goto(f"{HTML.as_uri()}/{page}", wait_until="load")
    if page.startswith("search"):
        tab.wait_for_function("() => { const s = document.querySelector('#search-results p');"
                              " return s && /found|did not match/i.test(s.textContent); }",
                              timeout=30000)
        assert tab.locator("#search-results ul.search li").count() > 0, "no results"
    raw, typeset = _sidebar_math(tab)
    context.close()
    assert not raw, f"{page}: raw TeX in the sidebar: {raw[:3]}"
    assert typeset > 0, f"{page}: no typeset math in the sidebar"


def test_offline_zip_says_how_to_serve_it():
    """The offline zip carries README.txt with the one line that serves the folder."""
    import zipfile
    bundle = HTML / "_downloads" / "robot-dynamics-interactively-html.zip"
    with zipfile.ZipFile(bundle) as zf:
        readme = zf.read("robot-dynamics-interactively-html/README.txt").decode()
    assert "python3 -m http.server" in readme and "file://" in readme


# --------------------------------------------------------------------------
# old addresses of renamed pages (book/_ext/redirects.py)
# --------------------------------------------------------------------------

def _redirects():
    import yaml
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return config["sphinx"]["config"]["book_redirects"]


@pytest.mark.parametrize("old", sorted(_redirects()))
def test_old_address_leads_to_the_renamed_page(server, browser, old):
    """The old address of a renamed chapter is a page that names the new one as canonical and
    sends the browser on to it, keeping the #anchor of the old link."""
    new = _redirects()[old]
    text = (HTML / f"{old}.html").read_text(encoding="utf-8")
    assert f'<link rel="canonical" href="{ADDRESS.page_url(new)}">' in text, text
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{server}/{old}.html#learning", wait_until="load")
    page.wait_for_url(f"{server}/{new}.html#learning", timeout=10000)
    assert page.locator("article.bd-article h1").count() == 1
    context.close()

