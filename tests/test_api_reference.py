"""The API reference in the book (book/api/, issue 37) documents every public callable.

The pages are written by Sphinx's autodoc from the docstrings while the book builds (with
warnings as errors and nitpicky references, so a broken cross-reference in a docstring fails
the build); this test reads the built site's inventory (``_build/html/objects.inv``, made by
``make book`` before ``make test``) and fails for any public function, class or method of the
library -- found by the API fuzzer's introspection, so a new one cannot escape -- that the
reference does not document, and for a public module that no API page names.
"""
import re
from pathlib import Path

import pytest

import _fuzz_api_support as fz  # the fuzzer's introspection of the public API

ROOT = Path(__file__).resolve().parent.parent
INVENTORY = ROOT / "_build" / "html" / "objects.inv"
API = ROOT / "book" / "api"


def documented_modules():
    """The modules the API pages document with ``automodule``."""
    return {m for page in API.glob("*.md")
            for m in re.findall(r"^\.\. automodule:: (\S+)", page.read_text(), re.M)}


def test_every_public_module_has_a_section():
    missing = sorted(set(fz.public_modules()) - documented_modules())
    assert not missing, f"public modules with no section in book/api/: {missing}"


def _inventory():
    from sphinx.util.inventory import InventoryFile
    with INVENTORY.open("rb") as f:
        inv = InventoryFile.load(f, "", lambda base, uri: uri)
    return {name for kind, entries in inv.items() if kind.startswith("py:") for name in entries}


@pytest.mark.skipif(not INVENTORY.exists(), reason="the book is not built (make book)")
def test_every_public_callable_is_documented():
    names = _inventory()
    missing = []
    for qual, (kind, obj, owner) in fz.public_callables().items():
        target = obj if owner is None else owner
        home = f"{target.__module__}.{target.__qualname__}"
        if owner is not None:
            home = f"{home}.{qual.rsplit('.', 1)[1]}"
        if qual not in names and home not in names:
            missing.append(qual)
    assert not missing, f"{len(missing)} public callables not in the API reference: {missing[:20]}"
