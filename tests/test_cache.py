"""The compiled-module cache heals (issue 8). Every case runs in fresh Python processes with a
temporary ``ROBODYN_CACHE``: a truncated, empty or garbage module, a garbage module whose
recorded hash was forged to match, a read-only or non-directory cache, four processes building
the same modules at once, and no compiler at all. Each must end with the right numbers, at most
a warning, and never a crash (a truncated shared object used to kill the process with SIGBUS).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import codegen, dynamics, models

pytestmark = pytest.mark.timeout(600)

# The child computes one mass matrix with the compiled engine and one with a compiled
# pendulum, and reports the numbers, the warnings and which backends ran.
CHILD = textwrap.dedent(r"""
    import json, sys, warnings
    import numpy as np
    import sympy as sp
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        import robodyn as rd
        from robodyn import codegen, dynamics, lagrange, models
        M = rd.crba(models.planar_rr(), [0.3, 0.2])
        engine = dynamics._recursions._engine() is not None
        q1, u1 = sp.symbols("q1 u1")
        try:
            mod = codegen.compile_equations(sp.Matrix([[2]]), sp.Matrix([[0]]),
                                            sp.Matrix([9.81 * sp.sin(q1)]), [q1], [u1])
            fd = mod.forward_dynamics([0.5], [0.0], [0.0]).tolist()
            compiled = True
        except codegen.CompileError as err:
            fd, compiled = [-9.81 * np.sin(0.5) / 2], str(err)
        if len(sys.argv) > 1:              # also the equations of motion of the RR arm
            eom = lagrange.equations_of_motion(models.planar_rr(1, 1, 1, 1),
                                               gravity=[0, -9.81, 0])
            num = eom.numeric()
            M2, backend = num.M([0.3, 0.2]).tolist(), num.backend
        else:
            M2, backend = M.tolist(), "c" if compiled is True else "lambdify"
    print(json.dumps(dict(M=M.tolist(), fd=fd, M2=M2, engine=engine, compiled=compiled,
                          backend=backend,
                          warnings=[f"{w.category.__name__}: {w.message}" for w in caught])))
""")

_c = np.cos(0.2)        # the RR arm (unit rods) at q = (0.3, 0.2), in closed form
M_RIGHT = [[5 / 3 + _c, 1 / 3 + _c / 2], [1 / 3 + _c / 2, 1 / 3]]
FD_RIGHT = -9.81 * np.sin(0.5) / 2


def _env(cache, **extra):
    env = dict(os.environ, ROBODYN_CACHE=str(cache), ROBODYN_ENGINE="auto")
    env.pop("CC", None)
    env.update(extra)
    return env


def _start(cache, preexec=None, full=False, **extra):
    return subprocess.Popen([sys.executable, "-c", CHILD] + (["full"] if full else []),
                            env=_env(cache, **extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=preexec)


def _finish(proc):
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, f"child died with {proc.returncode}:\n{err[-3000:]}"
    return json.loads(out.strip().splitlines()[-1])


def _run(cache, preexec=None, full=False, **extra):
    """The child's report; ``full`` also builds the RR arm's equations (a slower build)."""
    return _finish(_start(cache, preexec, full, **extra))


def _right(r):
    np.testing.assert_allclose(r["M"], M_RIGHT, rtol=1e-12)
    np.testing.assert_allclose(r["M2"], M_RIGHT, rtol=1e-9)
    np.testing.assert_allclose(r["fd"], [FD_RIGHT], rtol=1e-12)


def _modules(cache):
    return sorted((Path(cache) / "codegen").glob("*.so"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A cache built once by a child process (a copy is damaged in each test)."""
    cache = tmp_path_factory.mktemp("cache")
    r = _run(cache, full=True)
    _right(r)
    assert r["engine"] and r["compiled"] is True and r["backend"] == "c", r
    assert r["warnings"] == [], r["warnings"]
    # the engine, the pendulum, the RR equations (M, C, G) and the RR arm's recursion (its
    # forward and inverse dynamics written out in C: robodyn.recursive_codegen)
    assert len(_modules(cache)) == 4, _modules(cache)
    return cache


def _copy(built, tmp_path):
    import shutil
    dest = tmp_path / "cache"
    shutil.copytree(built, dest)
    return dest


@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage", "garbage-same-size"])
def test_damaged_modules_are_rebuilt(built, tmp_path, damage):
    cache = _copy(built, tmp_path)
    rng = np.random.default_rng(0)
    for so in _modules(cache):
        data = so.read_bytes()
        new = {"truncated": data[: len(data) // 3], "empty": b"",
               "garbage": rng.bytes(4096),
               "garbage-same-size": rng.bytes(len(data))}[damage]
        so.write_bytes(new)
    r = _run(cache)
    _right(r)
    assert r["engine"] and r["compiled"] is True and r["backend"] == "c", r
    assert r["warnings"] == [], r["warnings"]
    # healed on disk: the engine and the pendulum (the quick child does not load the third)
    assert sum(codegen._verified(so) for so in _modules(cache)) >= 2
    _right(_run(cache))                                             # and the next run is fine


def test_garbage_with_a_forged_record_is_rebuilt(built, tmp_path):
    """A file that matches its recorded hash but does not load is rebuilt once and loaded from
    a fresh copy."""
    cache = _copy(built, tmp_path)
    for so in _modules(cache):
        so.write_bytes(b"\x7fELF this is not a shared object" * 10)
        size, digest = codegen._file_digest(so)
        codegen._meta_path(so).write_text(f"{size} {digest}\n")
    r = _run(cache)
    _right(r)
    assert r["engine"] and r["compiled"] is True and r["backend"] == "c", r
    assert sum(codegen._verified(so) for so in _modules(cache)) >= 2


def test_missing_records_are_rebuilt(built, tmp_path):
    """Modules from an older cache (no size/hash record) are verified by rebuilding them."""
    cache = _copy(built, tmp_path)
    for so in _modules(cache):
        codegen._meta_path(so).unlink()
    _right(_run(cache))
    assert sum(codegen._verified(so) for so in _modules(cache)) >= 2


def test_cache_that_is_a_file_falls_back_with_a_warning(tmp_path):
    cache = tmp_path / "not-a-folder"
    cache.write_text("I am a file")
    r = _run(cache)
    _right(r)
    assert r["engine"] and r["compiled"] is True, r
    assert any("cache folder" in w and "not usable" in w for w in r["warnings"]), r["warnings"]
    assert cache.read_text() == "I am a file"


def test_read_only_cache_falls_back_with_a_warning(tmp_path):
    """A read-only cache folder (a shared, read-only installation). Root ignores file modes,
    so as root the child runs in a private mount namespace with a read-only file system
    mounted on the cache folder; otherwise the folder's write bits are removed."""
    root = tmp_path / "ro"
    (root / "codegen").mkdir(parents=True)
    if os.geteuid() == 0:
        import shutil
        if not shutil.which("unshare"):
            pytest.skip("running as root without unshare: cannot make a read-only folder")
        cmd = ["unshare", "-m", "sh", "-c",
               'mount -t tmpfs -o ro,size=1m tmpfs "$0" && exec "$@"', str(root / "codegen"),
               sys.executable, "-c", CHILD]
        probe = subprocess.run(cmd[:4] + ['mount -t tmpfs -o ro tmpfs "$0"', str(root)],
                               capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"cannot mount a read-only file system here: {probe.stderr[-300:]}")
    else:
        os.chmod(root / "codegen", 0o555)
        cmd = [sys.executable, "-c", CHILD]
    proc = subprocess.Popen(cmd, env=_env(root), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    r = _finish(proc)
    _right(r)
    assert r["engine"] and r["compiled"] is True, r
    assert any("not usable" in w and ("Read-only" in w or "ermission" in w)
               for w in r["warnings"]), r["warnings"]
    assert not list((root / "codegen").iterdir())


def test_four_processes_build_the_same_modules_at_once(tmp_path):
    cache = tmp_path / "shared"
    procs = [_start(cache) for _ in range(4)]
    results = [_finish(p) for p in procs]
    for r in results:
        _right(r)
        assert r["engine"] and r["compiled"] is True and r["backend"] == "c", r
        assert r["warnings"] == [], r["warnings"]
    mods = _modules(cache)
    assert len(mods) == 2 and all(codegen._verified(so) for so in mods)
    index = [p for p in (cache / "codegen").iterdir() if p.name.startswith("eom-")]
    assert len(index) == 1 and index[0].suffix == ".txt"      # symbolic key -> module name
    assert any(so.name.startswith(index[0].read_text().strip()) for so in mods)
    leftovers = [p for p in (cache / "codegen").iterdir()
                 if not p.name.endswith((".so", ".sha256", ".lock")) and p not in index]
    assert not leftovers, leftovers


def test_no_compiler_at_all(tmp_path):
    """No cc/gcc on PATH and no $CC: the numpy engine and lambdify run, with warnings."""
    r = _run(tmp_path / "c", full=True, PATH=str(tmp_path / "empty-bin"))
    _right(r)
    assert not r["engine"] and r["backend"] == "lambdify", r
    assert "no C compiler found" in r["compiled"]
    assert any("compiled engine is unavailable" in w for w in r["warnings"]), r["warnings"]
    assert any("using lambdify" in w for w in r["warnings"]), r["warnings"]


def test_cc_that_does_not_exist_is_reported(tmp_path):
    r = _run(tmp_path / "c", full=True, CC="/nonexistent")
    _right(r)
    assert not r["engine"] and r["backend"] == "lambdify", r
    assert "$CC = '/nonexistent' is not an executable C compiler" in r["compiled"]
    assert any("/nonexistent" in w for w in r["warnings"]), r["warnings"]


def test_prefix_cannot_leave_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path / "c"))
    for prefix in ("../x", "a/b", "/abs", "x" * 65, ".hidden", "a b"):
        with pytest.raises(ValueError, match="compiled_module: prefix"):
            codegen.compiled_module("/* MODNAME */", prefix)
    assert not (tmp_path / "x").exists()


def test_verification_refuses_mismatches(tmp_path):
    so = tmp_path / "m.so"
    so.write_bytes(b"abc")
    assert not codegen._verified(so)                       # no record
    codegen._meta_path(so).write_text("3 " + "0" * 64 + "\n")
    assert not codegen._verified(so)                       # wrong hash
    size, digest = codegen._file_digest(so)
    codegen._meta_path(so).write_text(f"{size} {digest}\n")
    assert codegen._verified(so)
    so.write_bytes(b"ab")
    assert not codegen._verified(so)                       # wrong size
    codegen._meta_path(so).write_text("garbage")
    assert not codegen._verified(so)                       # unreadable record


def test_in_process_numbers_match_the_children():
    np.testing.assert_allclose(rd.crba(models.planar_rr(), [0.3, 0.2]), M_RIGHT, rtol=1e-12)
    assert dynamics._recursions.ENGINE in ("auto", "numpy")
