"""The grader's own bounds (issue 41 point 6, issue 39 item 7): the memory its parsing of a
submitted notebook takes, measured in a process of its own, is a small multiple of the file's
size; the table and the pages it writes are readable as an instructor expects.
"""
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MB = 2**20

_MEASURE = r"""
import json, sys
from robodyn.grading import grader


def peak():                                  # the process's peak resident set (VmHWM), bytes
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024


def current():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024


path, what = sys.argv[1], sys.argv[2]
data = open(path, "rb").read() if what == "depth" else None
with open("/proc/self/clear_refs", "w") as f:   # the peak starts again from here
    f.write("5")
before = current()
if what == "depth":
    depth = grader.json_depth(data)
    assert depth < 20, depth
else:
    nb, raw = grader._read_submission(path)
    assert len(nb["cells"]) == 2
print(json.dumps({"before": before, "after": peak()}))
"""


def _big_notebook(path, size):
    """An honest notebook of ``size`` bytes: a saved figure (base64, no escapes) and a long
    text output full of escaped quotes and backslashes (the strings the depth check skips)."""
    text = ('say "[[[" \\ ' * 9)[:100]
    figure = "A" * (size // 2)
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": "a", "metadata": {}, "source": "plot()", "execution_count": 1,
         "outputs": [{"output_type": "display_data", "metadata": {},
                      "data": {"image/png": figure}}]},
        {"cell_type": "code", "id": "b", "metadata": {}, "source": "print(x)",
         "execution_count": 2, "outputs": [{"output_type": "stream", "name": "stdout",
                                            "text": ""}]}]}
    head = json.dumps(nb).encode()
    lines = (size - len(head)) // (len(json.dumps(text)) - 2)
    nb["cells"][1]["outputs"][0]["text"] = text * lines
    path.write_text(json.dumps(nb))
    return path.stat().st_size


@pytest.mark.parametrize("what", ["depth", "read"])
def test_parsing_a_large_notebook_costs_a_small_multiple_of_its_size(tmp_path, what):
    """A 17.5 MB honest notebook: the depth check alone, and the whole reading of a
    submission (the depth check, then ``json.loads``), raise the peak memory of a fresh
    process by at most 3 (depth) and 8 (reading) times the file's size (before issue 41: the
    depth check's regex alone took 2.2 GiB)."""
    size = _big_notebook(tmp_path / "big.ipynb", 17_500_000)
    assert abs(size - 17_500_000) < 1000
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", _MEASURE, str(tmp_path / "big.ipynb"), what],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    m = json.loads(r.stdout.strip().splitlines()[-1])
    grew = m["after"] - m["before"]
    bound = (3 if what == "depth" else 8) * size
    print(f"{what}: peak RSS grew by {grew / MB:.1f} MiB for a {size / MB:.1f} MB notebook")
    assert grew <= bound, f"{grew / MB:.0f} MiB for a {size / MB:.1f} MB notebook"


def test_table_and_pages_are_written_readable_and_whole(tmp_path):
    """The CSV and the feedback pages get the mode of an ordinary new file (0o666 less the
    umask: 0644 under umask 022, 0640 under 027), still replaced atomically (no temporary
    file left behind, the old content or the new)."""
    from robodyn.grading import gradebook
    for mask in (0o022, 0o027):
        old = os.umask(mask)
        try:
            p = tmp_path / f"scores{mask:o}.csv"
            gradebook.write_atomic(p, "a,b\n")
            gradebook.write_atomic(p, "a,b\n1,2\n")
        finally:
            os.umask(old)
        assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~mask
        assert p.read_text() == "a,b\n1,2\n"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["scores22.csv", "scores27.csv"]
