"""Throughput of the grader: local processes against a Dask cluster, 1 and 2 workers.

    .venv/bin/python bench/bench_grading.py [--n 200] [--tasks 200] [--rows 2000]

Three measurements, all in one run:

1. **Grading** ``--n`` tiny submissions (a set of two automatic problems and one argument
   graded by hand; each submission in its own sandbox, then judged) with
   :func:`robodyn.grading.grader.grade`: on 1 and 2 local processes, and on a local Dask
   cluster (``distributed.LocalCluster``) of 1 and 2 worker processes. Submissions per second,
   seconds per submission, and the speed-up of 2 workers over 1. Before it times anything it
   checks that every route gave every submission the same marks.
2. **Dispatch overhead** of a task: ``--tasks`` calls through
   :func:`robodyn.parallel.map_tasks` of a task that takes the grader's real payload (the
   release, the references, the limits) and returns a row of the real size without running
   anything: in this process, and on the Dask cluster of 1 worker. The difference per task is
   what the distributed path adds to each submission.
3. **Recording**: ``--rows`` rows written by :class:`robodyn.grading.gradebook.Records`
   (nbgrader's gradebook in SQLite, one transaction each, and the CSV rewritten atomically):
   milliseconds per row, the part of a run that happens in the one grading process whatever
   the size of the cluster.

The cost of a course (README, grading section) follows from these: with ``s`` seconds per
submission on one core, ``W`` worker cores in all, ``d`` the dispatch overhead and ``r`` the
recording time per row, ``n`` submissions take about ``max(n (s + d) / W, n r)`` seconds plus
one reference run of the instructor notebook. Speed is measured here only, never asserted.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from robodyn import parallel
from robodyn.grading import grader, gradebook, markup

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_grading_dask import ANSWERS, _instructor  # noqa: E402  (the tests' tiny set)

LIMITS = grader.Limits(cell_timeout=60.0, total_timeout=120.0, memory_mb=2048)


def make_course(root, n):
    """The tiny set's instructor notebook and ``n`` submissions (the tests' answers, round
    robin; the slow one without its sleep)."""
    nbformat.write(_instructor(), root / "tiny.ipynb")
    release = markup.student_version(_instructor())
    subs = root / "submitted"
    subs.mkdir()
    kinds = [k for k in ANSWERS if k != "slow"]
    for i in range(n):
        a, b, text = ANSWERS[kinds[i % len(kinds)]]
        nb = nbformat.from_dict(json.loads(nbformat.writes(release)))
        for c in nb.cells:
            gid = c.metadata["nbgrader"]["grade_id"]
            new = {"p1_answer": a, "p2_answer": b, "p2_argument": text}.get(gid)
            if new:
                c.source = new
        nbformat.write(nb, subs / f"s{i:05d}.ipynb")
    return root / "tiny.ipynb", subs


def run(instructor, subs, out, **kw):
    unsafe = not grader.sandbox_status()[0]
    t = time.perf_counter()
    rows = grader.grade(instructor, subs, out / "scores.csv", limits=LIMITS, seed=3,
                        unsafe=unsafe, **kw)
    return time.perf_counter() - t, {r["file"]: (r["total"], r["p1"], r["p2"]) for r in rows}


def _payload_task(job, item):
    """What a grading task carries and returns, without the grading."""
    return {"file": item[0], "student": "x" * 20, "notes": "", "total": 0.0,
            **{p.key: 0.0 for p in job.ref.problems},
            **{f"{p.key} feedback": "✔ correct (equal at 24 random points)." * 3
               for p in job.ref.problems}}


def dispatch(instructor, client, tasks):
    """Seconds per task of map_tasks with the grader's payload: serial, and on ``client``."""
    nb = nbformat.read(instructor, as_version=4)
    ref = grader.reference(nb, seed=3)
    job = grader._Job(markup.student_version(nb), ref, LIMITS, 3, True)
    func = functools.partial(_payload_task, job)
    items = [(f"s{i:05d}.ipynb", None) for i in range(tasks)]
    out = {}
    for name, sched in (("serial", None), ("dask", client)):
        t = time.perf_counter()
        parallel.map_tasks(func, items, keys=[i[0] for i in items], scheduler=sched,
                           workers=1, on_result=lambda k, r: None)
        out[name] = (time.perf_counter() - t) / tasks
    import pickle
    out["payload_bytes"] = len(pickle.dumps(func))
    return out


def recording(instructor, root, rows):
    """Milliseconds per row written by Records (gradebook transaction + CSV), ``rows`` rows."""
    nb = nbformat.read(instructor, as_version=4)
    release = markup.student_version(nb)
    rec = gradebook.Records(root / "rec" / "gradebook.db", "tiny", "tiny", release,
                            root / "rec" / "scores.csv")
    rec.define([("p1", 1.0), ("p2", 2.0)])
    t = time.perf_counter()
    for i in range(rows):
        rec.add({"file": f"s{i:05d}.ipynb", "student": f"s{i:05d}", "total": 3.0, "p1": 1.0,
                 "p2": 2.0, "p1 feedback": "✔ correct" * 10, "p2 feedback": "✔ correct" * 10,
                 "notes": "", "seconds": 1.0, "manual": {"p2_argument": "Because." * 20}})
    rec.close()
    return (time.perf_counter() - t) / rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200,
                    help="submissions graded per route (200; 0: only the dispatch and "
                         "recording measurements)")
    ap.add_argument("--tasks", type=int, default=200, help="tasks of the dispatch test (200)")
    ap.add_argument("--rows", type=int, default=2000, help="rows of the recording test (2000)")
    args = ap.parse_args(argv)
    from distributed import Client, LocalCluster
    n = args.n
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        root = Path(tmp)
        instructor, subs = make_course(root, max(n, 1))
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
        per_row = recording(instructor, root, args.rows)
        print(f"recording (gradebook transaction + CSV) of {args.rows} rows: "
              f"{per_row * 1000:.2f} ms per row", flush=True)
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            d = dispatch(instructor, client, args.tasks)
        print(f"dispatch of one task ({d['payload_bytes'] / 1024:.0f} KiB payload): "
              f"serial {d['serial'] * 1000:.2f} ms, Dask {d['dask'] * 1000:.2f} ms, "
              f"overhead {(d['dask'] - d['serial']) * 1000:.2f} ms per task", flush=True)
        if n == 0:
            return
        print(f"grading {n} submissions of a tiny set "
              f"({'bubblewrap sandbox' if grader.sandbox_status()[0] else 'UNSAFE: no sandbox'})",
              flush=True)
        times, marks = {}, {}
        for jobs in (1, 2):
            times[f"local {jobs}"], marks[f"local {jobs}"] = run(
                instructor, subs, root / f"local{jobs}", jobs=jobs)
            print(f"  local processes, {jobs}: {times[f'local {jobs}']:.1f} s", flush=True)
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=":0") as cluster, Client(cluster) as client:
                key = f"dask {workers}"
                times[key], marks[key] = run(instructor, subs, root / f"dask{workers}",
                                             scheduler=client)
                print(f"  Dask workers, {workers}: {times[key]:.1f} s", flush=True)
        first = marks["local 1"]
        for k, m in marks.items():
            if m != first:
                raise SystemExit(f"FAILED: {k} gave other marks than local 1")
    print(f"\nsame marks on every route ({n} submissions; load average now "
          f"{os.getloadavg()[0]:.1f})\n")
    print("| route | workers | seconds | submissions/s | s per submission | speed-up 2/1 |")
    print("|---|---|---|---|---|---|")
    for kind in ("local", "dask"):
        for w in (1, 2):
            t = times[f"{kind} {w}"]
            up = f"{times[f'{kind} 1'] / t:.2f}" if w == 2 else ""
            print(f"| {kind} | {w} | {t:.1f} | {n / t:.2f} | {t / n:.2f} | {up} |")
    print(f"\nDask / local, 1 worker: {times['dask 1'] / times['local 1']:.2f}; per submission "
          f"{(times['dask 1'] - times['local 1']) / n * 1000:+.0f} ms")

if __name__ == "__main__":
    main()
