"""How `make test` shares its work between pytest-xdist workers.

``--dist loadgroup`` with the scheduler below: a *group* of tests runs whole, in collection order,
on one worker.

- A notebook under nbval is one group: its cells share one kernel and run in order.
- By default a test file is one group, so its module-scoped fixtures (a built course, a graded
  folder, a browser) are set up once.
- The long files of independent, slow tests are cut finer: the browser's page tests in a few
  buckets of pages, each nbgrader round trip, each planted-break test, the sandbox's hostile
  run. With one group per file (``--dist loadfile``) the page tests of the browser were one unit
  of work of several minutes.

The groups are sent slowest first (``--no-loadscope-reorder`` keeps the collection's order), so
the run does not end with one worker finishing a long group alone.

pytest-xdist's own ``loadgroup`` (``xdist_group`` marks) cannot be used: it renames the items'
``_nodeid``, which pytest 9 no longer reads, so every test became a group of its own and the
cells of one notebook ran on different workers. Groups are therefore computed from the test's
id alone, here, in the controller's scheduler.
"""
import zlib

import pytest

collect_ignore = ["book/assignments/nbgrader_config.py"]
"""nbgrader's configuration file: nbgrader runs it with ``get_config`` defined (imported by
``--doctest-modules`` it would fail); tests/test_nbgrader.py runs nbgrader on it."""

PAGE_BUCKETS = 4
"""Buckets of pages for each parametrized page test of tests/browser/test_pages.py."""

SPLIT_BY_TEST = ("tests/test_nbgrader.py", "tests/test_check_cells.py")
"""Files whose every test (every parameter) is a group of its own: each runs a whole notebook
or a whole nbgrader course and shares no fixture with the others."""

ALONE = ("tests/test_sandbox.py::test_attacks_beside_honest_submissions",
         "tests/test_sandbox.py::test_attacks_as_an_ordinary_user")
"""Single slow tests that are a group of their own."""

PAGE_TESTS = ("tests/browser/test_pages.py::test_page[",)
"""Parametrized browser tests cut into ``PAGE_BUCKETS`` groups each."""

SLOW_FIRST = ("tests/browser/test_pages.py", "tests/test_nbgrader.py", "tests/test_sandbox.py",
              "tests/test_grading.py", "tests/test_grading_identity.py", "tests/test_check_cells.py",
              "tests/browser/test_site.py", "tests/browser/test_lab.py",
              "tests/test_grading_dask.py", "tests/test_grading_keysearch.py",
              "tests/test_reader_install.py", "tests/test_cache.py", "tests/test_stability.py",
              "tests/test_fuzz_api.py")
"""Tests from these files are sent before the others, in this order (the longest first)."""


def group_of(nodeid: str) -> str:
    """The group of a test id (``path::name[param]``).

    >>> group_of("book/part1/01_rotations.ipynb::Cell 3")
    'book/part1/01_rotations.ipynb'
    >>> group_of("tests/test_nbgrader.py::test_nbgrader_round_trip[part1_rigid_motion]")
    'tests/test_nbgrader.py::test_nbgrader_round_trip[part1_rigid_motion]'
    >>> group_of("tests/browser/test_pages.py::test_page[book/intro]") in [
    ...     f"tests/browser/test_pages.py::test_page[{i}]" for i in range(PAGE_BUCKETS)]
    True
    """
    path = nodeid.split("::", 1)[0]
    if path in SPLIT_BY_TEST or nodeid in ALONE:
        return nodeid
    for prefix in PAGE_TESTS:
        if nodeid.startswith(prefix):
            return f"{prefix}{zlib.crc32(nodeid.encode()) % PAGE_BUCKETS}]"
    return path


def _rank(nodeid: str) -> int:
    for i, prefix in enumerate(SLOW_FIRST):
        if nodeid.startswith(prefix):
            return i
    return len(SLOW_FIRST)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Put the slow files first; a stable sort keeps every group's own order (a notebook's cells
    stay in order). Runs in every worker, on the same collection, so all agree."""
    if getattr(config.option, "loadgroup", False):
        items.sort(key=lambda item: _rank(item.nodeid))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadgroup``: the scheduler of ``group_of``'s groups."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return group_of(nodeid)

    return GroupScheduling(config, log)
