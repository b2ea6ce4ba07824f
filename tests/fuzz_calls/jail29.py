"""Valid calls of the grading sandbox's public helpers, for the API fuzzer (issue 28)."""
CALLS = {
    "robodyn.grading.grader.json_depth": lambda: ((b'{"a": [1]}',), {}),
    "robodyn.grading.grader.load_json": lambda: ((b'{"a": [1]}',),
                                                  {"max_bytes": 100, "max_depth": 5}),
    "robodyn.grading.grader.parse_result": lambda: (
        (b'{"cells": [], "answers": {}}', ["p1"], 0), {}),
    "robodyn.grading.seccomp.program": lambda: (("x86_64",), {}),
    "robodyn.grading.seccomp.numbers": lambda: (("x86_64",), {}),
}
