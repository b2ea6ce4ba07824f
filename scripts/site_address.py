"""The book's public address, as ``_config.yml`` writes it (the one place it is written): the site
(``html.baseurl``) and the repository (``repository.url``, ``.branch``, and ``.release``: the git
tag of the library version that every notebook's Colab install cell installs). Read by the offline
bundle (scripts/bundle_html.py), the Colab cell (scripts/colab_cell.py) and the tests; Sphinx
reads the same keys through Jupyter Book.

>>> import tempfile, pathlib
>>> cfg = pathlib.Path(tempfile.mkdtemp()) / "_config.yml"
>>> _ = cfg.write_text("repository:\\n  url: https://github.com/o/r\\n  branch: main\\n"
...                    "  release: v1.2.0\\nhtml:\\n  baseurl: https://o.github.io/r/\\n")
>>> a = site_address(cfg)
>>> a.site_url, a.repository, a.branch, a.release
('https://o.github.io/r/', 'o/r', 'main', 'v1.2.0')
>>> a.page_url("book/intro")
'https://o.github.io/r/book/intro.html'
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlparse

import yaml

CONFIG = Path(__file__).resolve().parents[1] / "_config.yml"


class SiteAddress(NamedTuple):
    site_url: str            # where the built site is served, ending in "/"
    repository_url: str      # https://github.com/<owner>/<name>
    branch: str              # the branch the site and the launch buttons are built from
    release: str             # the git tag of the library version the Colab cell installs

    @property
    def repository(self) -> str:
        """``owner/name`` of the GitHub repository."""
        return urlparse(self.repository_url).path.strip("/")

    def page_url(self, page: str) -> str:
        """The public URL of a page of the book (``book/intro`` -> ``.../book/intro.html``)."""
        return f"{self.site_url}{page}.html"


def site_address(config_path=CONFIG) -> SiteAddress:
    """The public address that ``config_path`` (the book's ``_config.yml``) writes."""
    config = yaml.safe_load(Path(config_path).read_text(encoding="utf-8"))
    try:
        site = config["html"]["baseurl"]
        repo = config["repository"]["url"]
        branch = config["repository"]["branch"]
        release = config["repository"]["release"]
    except (KeyError, TypeError) as e:
        raise SystemExit(f"site_address: {config_path}: expected html.baseurl, repository.url, "
                         f"repository.branch and repository.release, missing {e}") from None
    return SiteAddress(site.rstrip("/") + "/", repo.rstrip("/"), branch, str(release))
