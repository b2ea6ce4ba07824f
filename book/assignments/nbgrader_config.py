"""nbgrader's configuration for the book's problem sets: copy this file into your course folder
(beside nbgrader's ``source/``), set your course's id, and run nbgrader from the repository's
environment -- ``.venv/bin/nbgrader generate_assignment ps1`` -- without activating it.

* nbgrader creates a gradebook by running the ``alembic`` program of its own environment,
  found on the PATH (``FileNotFoundError: 'alembic'`` when ``.venv/bin`` is not on it): the
  folder of the Python that runs nbgrader is put first on the PATH here, so the venv's
  ``alembic`` is the one found, activated or not;
* the student version's answer cells hold ``# YOUR CODE HERE`` (nbgrader's default stub raises
  ``NotImplementedError``, so a blank notebook would not run), as in the book's student
  notebooks -- with this file, nbgrader's ``generate_assignment`` releases exactly the book's
  student notebook (``tests/test_nbgrader.py`` checks it cell by cell).
"""
import os
import sys

c = get_config()  # noqa: F821 -- defined by nbgrader when it reads this file
# c.CourseDirectory.course_id = "your-course"

os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE"}
c.ExecutePreprocessor.timeout = 600
