"""``python -m robodyn.grading``: generate student notebooks, or grade a folder of submissions.

    python -m robodyn.grading generate book/assignments/instructor/*.ipynb --out book/assignments
    python -m robodyn.grading grade book/assignments/instructor/part1_rigid_motion.ipynb \\
        submissions/part1/ --csv scores_part1.csv --feedback feedback_part1/
    python -m robodyn.grading grade … --scheduler tcp://scheduler:8786 \\
        --gradebook postgresql://grader@db/course      # on a Dask cluster

Every submission's row goes to nbgrader's gradebook (``--gradebook``: a database URL or a
SQLite file, default ``gradebook.db`` beside the CSV), the CSV and its feedback page as it
finishes; run the same command again after a crash or a kill and it grades only the rest.

Exit status of ``grade``: 0 when graded; 2 when the sandbox failed for every submission
(the table is still written, with the reason in its notes); 3 when there is no sandbox here
and ``--unsafe`` was not given.
"""
import argparse
import sys

from . import grader


def _say(msg):
    print(msg, file=sys.stderr, flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m robodyn.grading",
                                 description="Problem sets: student notebooks and grading.")
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="refresh the answer keys and write student notebooks")
    g.add_argument("instructor", nargs="+", help="instructor notebooks (.ipynb)")
    g.add_argument("--out", required=True, help="folder for the student notebooks")
    r = sub.add_parser("grade", help="grade a folder of submitted notebooks into a CSV table")
    r.add_argument("instructor", help="the set's instructor notebook (.ipynb)")
    r.add_argument("submissions", help="folder of submitted notebooks (*.ipynb)")
    r.add_argument("--csv", required=True, help="the score table to write")
    r.add_argument("--cell-timeout", type=float, default=30.0, help="s per cell (30)")
    r.add_argument("--total-timeout", type=float, default=300.0,
                   help="s of wall clock per submission (300)")
    r.add_argument("--memory-mb", type=int, default=3072, help="memory per submission (3072)")
    r.add_argument("--seed", type=int, default=None, help="seed of the random test points")
    r.add_argument("--jobs", type=int, default=1,
                   help="local processes grading at a time (1: in this process)")
    r.add_argument("--scheduler", help="a Dask scheduler's address (tcp://host:8786): each "
                   "submission is a task on the cluster's workers, which must see the "
                   "submissions folder at the same path")
    r.add_argument("--gradebook", help="nbgrader's gradebook: a database URL (sqlite:///…, "
                   "postgresql://…) or a SQLite file (default: gradebook.db beside the CSV)")
    r.add_argument("--assignment", help="the assignment's name in the gradebook (default: "
                   "the instructor notebook's name)")
    r.add_argument("--roster", help="CSV with columns file, student: the ids in the table")
    r.add_argument("--feedback", help="folder for one HTML feedback page per student")
    r.add_argument("--unsafe", action="store_true",
                   help="grade without the namespace sandbox: " + grader.UNSAFE_NOTE)
    args = ap.parse_args(argv)
    if args.command == "generate":
        for path in args.instructor:
            grader.generate(path, args.out, progress=_say)
        return 0
    limits = grader.Limits(cell_timeout=args.cell_timeout, total_timeout=args.total_timeout,
                           memory_mb=args.memory_mb)
    try:
        rows = grader.grade(args.instructor, args.submissions, args.csv, limits=limits,
                            seed=args.seed, progress=_say, jobs=args.jobs, unsafe=args.unsafe,
                            roster=args.roster, feedback_dir=args.feedback,
                            scheduler=args.scheduler, gradebook_db=args.gradebook,
                            assignment=args.assignment)
    except grader.SandboxUnavailable as exc:
        _say(f"error: {exc}")
        return 3
    return 2 if rows and all(r["sandbox_failed"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
