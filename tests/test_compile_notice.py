"""The first compiled call says why it pauses (issue 39, item 7): one line on stderr when a
module is compiled, none when it comes from the cache, none while the book is built
(``ROBODYN_STATIC=1``: a page must not depend on the machine's cache). Each case in a fresh
process with its own cache folder, as a reader's first session."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

FIRST_CALL = """
import numpy as np
from robodyn import dynamics
from robodyn.models import planar_rr
assert dynamics._recursions._engine() is not None, "no compiled engine"
print(dynamics.forward_dynamics(planar_rr(), np.zeros(2), np.zeros(2), np.zeros(2),
                                gravity=[0, -9.81, 0]))
"""


def _first_call(cache, **env):
    environ = {k: v for k, v in os.environ.items()
               if k not in ("ROBODYN_STATIC", "ROBODYN_ENGINE")}
    environ.update(ROBODYN_CACHE=str(cache), PYTHONPATH=str(ROOT / "lib"), **env)
    out = subprocess.run([sys.executable, "-c", FIRST_CALL], env=environ, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return [line for line in out.stderr.splitlines() if line.startswith("robodyn: compiling")]


@pytest.mark.slow
def test_a_compile_is_announced_once(tmp_path):
    lines = _first_call(tmp_path / "cache")
    assert len(lines) == 1, lines
    assert lines[0].startswith("robodyn: compiling the dynamics engine with the C compiler, "
                               "once"), lines
    assert str(tmp_path / "cache") in lines[0]
    assert _first_call(tmp_path / "cache") == []            # cached: no pause, no word
    assert _first_call(tmp_path / "book", ROBODYN_STATIC="1") == []
