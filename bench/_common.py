"""Helpers shared by the benchmark scripts: timing a function in a forked child process.

Each measurement runs in a fresh child forked from the same parent, so both tools of a
comparison start from the same state (modules imported, sympy's caches as the parent left them)
and a run that does not finish within its timeout is stopped and reported, never waited for.
"""
import multiprocessing as mp
import time


def _child(conn, fn, args, setup):
    if setup is not None:                 # untimed: e.g. building the input data
        args = (setup(*args),)
    t = time.perf_counter()
    fn(*args)
    conn.send(time.perf_counter() - t)


def time_in_child(fn, args=(), timeout=60.0, setup=None):
    """Seconds ``fn(*args)`` takes in a forked child process (``fn(setup(*args))`` when a
    ``setup`` is given, which is not timed), or None when it did not finish within ``timeout``
    seconds (the child is then terminated) or failed."""
    ctx = mp.get_context("fork")
    a, b = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(b, fn, args, setup))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None
    return a.recv() if a.poll() else None


def best_time(fn, args=(), timeout=60.0, repeat=3, long=5.0, setup=None):
    """The best of ``repeat`` runs of :func:`time_in_child` (one run when the first takes more
    than ``long`` seconds); None when the first run timed out."""
    best = time_in_child(fn, args, timeout, setup)
    if best is None:
        return None
    for _ in range(repeat - 1):
        if best > long:
            break
        t = time_in_child(fn, args, timeout, setup)
        if t is not None:
            best = min(best, t)
    return best
