"""Files written whole (private): one atomic write for the whole package.

A file is written into a temporary file in the same folder, synced, then renamed over the
target (``os.replace``): a reader sees the old file or the new one, never a part; a crash
leaves at most a ``.part`` file, never a torn target. Used by :mod:`robodyn.parallel`'s cache
and by :func:`robodyn.grading.gradebook.write_atomic` (the score table, the feedback pages).
"""
from __future__ import annotations

import os
import tempfile


def replace_atomic(path, data: bytes, prefix: str = ".part-") -> None:
    """Write ``data`` (bytes) to ``path`` (an existing folder's file) through a synced
    temporary file ``prefix…`` beside it that then replaces it; the temporary file is removed
    when anything fails. Arguments are the caller's to check.

    >>> import pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.bin"
    >>> replace_atomic(p, b"one"); replace_atomic(p, b"two"); p.read_bytes()
    b'two'
    """
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.fspath(path)) or ".", prefix=prefix,
                               suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
