"""Problem sets for courses: student notebooks from instructor notebooks, and safe grading.

* :mod:`robodyn.grading.markup` -- nbgrader's markup (solution regions, hidden tests, locked
  cells), read and written without nbgrader; the student version; format checks
* :mod:`robodyn.grading.grader` -- runs the instructor notebook for the references, generates
  the student notebooks with their answer keys, grades a folder of submissions (each in its own
  limited process) into a CSV table
* :mod:`robodyn.grading.sandbox` -- the process that runs one notebook's code

The command line: ``python -m robodyn.grading generate|grade …`` (``--help`` for each).
Answer checking itself lives in :mod:`robodyn.answers`.
"""
