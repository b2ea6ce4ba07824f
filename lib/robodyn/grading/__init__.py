"""Problem sets for courses: student notebooks from instructor notebooks, and safe grading.

* :mod:`robodyn.grading.markup` -- nbgrader's markup (solution regions, hidden tests, locked
  cells), read and written without nbgrader; the student version; format checks
* :mod:`robodyn.grading.grader` -- runs the instructor notebook for the references, generates
  the student notebooks with their (one-way) answer keys, grades a folder of submissions (each
  in its own sandbox) into a CSV table and HTML feedback pages
* :mod:`robodyn.grading.jail` -- the sandbox: Linux namespaces through bubblewrap, never
  root, limits of a submission as a unit (a cgroup per submission, or the fallback)
* :mod:`robodyn.grading.seccomp` -- the sandbox's seccomp filter (classic BPF, built here)
* :mod:`robodyn.grading.sandbox` -- the process that runs one notebook's code
* :mod:`robodyn.grading.judge` -- the process that compares answers, with a time budget
* :mod:`robodyn.grading.gradebook` -- what is written from the rows as each submission
  finishes: nbgrader's gradebook (resume: a rerun grades only what it lacks), the CSV, the
  feedback pages; hand-graded answers awaiting their grade

The command line: ``python -m robodyn.grading generate|grade …`` (``--help`` for each).
Answer checking itself lives in :mod:`robodyn.answers`.
"""

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
