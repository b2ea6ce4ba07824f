r"""Forgiving answer checking for the book's problem sets (the Assignments part): problems,
problem sets, comparison of a student's answer with the reference, their encoding.

Its rooms (private modules, named by concept; import from here):

* ``_problems`` -- problems, problem sets, comparison and feedback, encoding
* ``_values`` -- what an answer's value is: numbers, arrays, expressions, functions
* ``_problem_checks`` -- the checks of a problem's definition
* ``_key_hash`` -- the one-way answer keys
"""

from ._problems import (parse_expression, UnsafeExpressionError, Feedback, Problem, ProblemSet,
                        compare, equivalent, encode, decode, fingerprint)

__all__ = ["parse_expression", "UnsafeExpressionError", "Feedback", "Problem", "ProblemSet",
           "compare", "equivalent", "encode", "decode", "fingerprint"]

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary: last, over the finished module
_seal(globals())
