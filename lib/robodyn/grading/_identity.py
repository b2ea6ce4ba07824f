"""Who handed in a file: a student's id, decided in one place and checked once (private).

A submission's **student id** comes from one place: the roster when the instructor gives one
(a file listed there, by its exact name, gets the roster's id; a file not listed is refused,
never matched to a roster id by a look-alike name), else the file's name less ``.ipynb``.
Either way the id is checked once, by :func:`student_id`:

1. Unicode-normalised (NFKC) and case-folded, *before* anything is compared: ids are
   case-insensitive (``Alice`` and ``alice`` are one student; a full-width ``ａｌｉｃｅ`` or a
   no-break space is the same id as its plain twin), and the normalised form is the id;
2. then held to a safe set: ASCII letters (lower case after folding), digits, ``_`` and
   ``-``, with single spaces and dots inside (never first or last, never two in a row), 1 to
   :data:`MAX_ID` characters, starting with a letter or a digit. So no ``.``, ``..``, path
   separator, control, invisible or format character, quote, comma or formula sign
   (``= + - @``) can begin or be in an id, and non-ASCII letters (look-alikes of ASCII ones:
   Cyrillic ``а``) are refused rather than guessed.

Then uniqueness is decided on the normalised ids (:func:`assign`): two files that map to one id
are **both held back**, with the reason, for the instructor to settle (rename, or a roster);
neither replaces the other. Everything the grader writes -- the CSV, nbgrader's gradebook,
the feedback pages (``<id>.html``), and so what ``nbgrader export`` reads -- gets only ids
that passed this check.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from ..errors import ArgumentError, ArgumentTypeError

MAX_ID = 64
"""The longest student id (characters)."""
SUFFIX = ".ipynb"
_ID = re.compile(r"[a-z0-9](?:[a-z0-9_-]|[ .](?=[a-z0-9_-]))*\Z")
RULE = (f"1 to {MAX_ID} characters: ASCII letters, digits, '_' and '-', with single spaces "
        "and dots inside, beginning and ending with a letter or a digit (compared after "
        "Unicode NFKC normalisation and case folding)")


def _describe(ch):
    name = unicodedata.name(ch, "unnamed")
    return f"U+{ord(ch):04X} {name}"


def student_id(text):
    """The student id of ``text`` (a roster's entry, or a file's name less ``.ipynb``):
    NFKC-normalised, case-folded, and checked against :data:`RULE`; ValueError with the
    reason (the offending character named by its code point) when it is not one.

    >>> student_id("Alice_Smith"), student_id("ｓ１００１"), student_id("v\\u00a0victim3")
    ('alice_smith', 's1001', 'v victim3')
    >>> student_id("..")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: not a student id: it must begin with an ASCII letter or a digit, got '..'
    """
    if not isinstance(text, str):
        raise ArgumentTypeError(f"student_id: text: expected text (str), got {type(text).__name__}")
    norm = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    shown = repr(text[:80])
    if not norm:
        raise ArgumentError("not a student id: it is empty")
    if len(norm) > MAX_ID:
        raise ArgumentError(f"not a student id: longer than {MAX_ID} characters, got {shown}")
    bad = next((ch for ch in norm if not (ch.isascii() and (ch.isalnum() or ch in " ._-"))),
               None)
    if bad is not None:
        kind = "a separator" if bad in "/\\" else \
            "an invisible or control character" if unicodedata.category(bad)[0] in "CZ" \
            else "not an ASCII letter, digit, '_', '-', space or dot"
        raise ArgumentError(f"not a student id: it holds {_describe(bad)} ({kind}), got {shown}")
    if not (norm[0].isalnum()):
        raise ArgumentError(f"not a student id: it must begin with an ASCII letter or a digit, "
                         f"got {shown}")
    if not _ID.match(norm):
        raise ArgumentError(f"not a student id: spaces and dots only singly and inside (not at "
                         f"the end, never two in a row), got {shown}")
    return norm


def is_student_id(text):
    """True when ``text`` is a student id as :func:`student_id` returns it (normalised)."""
    try:
        return isinstance(text, str) and student_id(text) == text
    except ValueError:
        return False


@dataclass
class Assignment:
    """:func:`assign`'s result: ``accepted`` ``{file key: (path, student id)}``; ``held``
    ``[(file key, reason)]`` -- files not graded, each with the reason, for the instructor."""
    accepted: dict = field(default_factory=dict)
    held: list = field(default_factory=list)


def assign(files, roster=None, *, key=str, taken=None):
    """The student id of each file, decided once: ``files`` are ``(file name, path)`` pairs
    (the name exactly as the folder holds it), ``roster`` None or ``{file name: student id}``
    (ids already checked, :func:`student_id`); ``key(name)``: a file's key in the result;
    ``taken`` ``{student id: file key}`` of submissions already recorded (a rerun): a new
    file for such an id is held back, not added beside it.

    A file not in the roster is held back (never matched to a roster id); a name that is not
    an id is held back with the reason; files whose ids coincide after normalisation are all
    held back, each naming the others.
    """
    out = Assignment()
    by_id = {}
    for name, path in files:
        k = key(name)
        if roster is not None:
            if name not in roster:
                out.held.append((k, "not in the roster (its exact file name is not listed "
                                    "there): add it to the roster, or rename the file as "
                                    "listed"))
                continue
            sid = roster[name]
        else:
            stem = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else name
            try:
                sid = student_id(stem)
            except ValueError as exc:
                out.held.append((k, f"its name gives no student id ({exc}); rename it "
                                    f"(the id: {RULE}) or give a roster"))
                continue
        by_id.setdefault(sid, []).append((k, path))
    taken = taken or {}
    for sid, items in by_id.items():
        if len(items) > 1:
            names = [k for k, _ in items]
            for k, _ in items:
                others = ", ".join(repr(o) for o in names if o != k)
                out.held.append((k, f"it maps to the student id {sid!r}, as does {others}: "
                                    f"both held back, neither graded (rename the files, or "
                                    f"give a roster)"))
        elif sid in taken and taken[sid] != items[0][0]:
            out.held.append((items[0][0], f"the student id {sid!r} already has a graded "
                                          f"submission, {taken[sid]!r}, in the gradebook: "
                                          f"held back, not added beside it"))
        else:
            out.accepted[items[0][0]] = (items[0][1], sid)
    out.held.sort()
    return out
