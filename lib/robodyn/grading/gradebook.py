"""What the grader writes from its rows: nbgrader's gradebook, the score table, the pages.

Each submission's row is written **as it arrives** (:class:`Records`):

1. into nbgrader's gradebook (``nbgrader.api``: its SQLAlchemy database -- a SQLite file by
   default, a server database such as ``postgresql://…`` for a cluster), in **one
   transaction**: the submission, one ``Grade`` per graded cell (one per problem: the
   problem's points in ``auto_score``; a hand-graded answer with ``needs_manual_grade``), one
   ``Comment`` per answer cell (the feedback), and the whole row (notes, feedback, the
   student's text of hand-graded answers) in a table of ours, ``robodyn_graded``, keyed by
   (assignment, notebook, file). A kill between two transactions loses nothing that was
   committed, and a half-written submission cannot exist;
2. into the score table (CSV), rewritten whole into a temporary file that then replaces it
   (``os.replace``), so a reader sees the old table or the new one, never a torn one;
3. into the student's feedback page ``<student id>.html`` (HTML, written the same way).

Only checked student ids are written (:mod:`robodyn.grading._identity`; :meth:`Records.add`
refuses another), one file per id (a second file for an id is refused, never written over
the first).

A rerun reads ``robodyn_graded`` and grades only the files not in it (**resume**); a row is
written at most once (the key is the primary key: a second delivery of the same file is
ignored). The gradebook is the record; the CSV and the pages are rebuilt from it at every run.

Answers graded by hand (nbgrader's *manual* cells: ``grade`` and ``solution`` both set, such
as problem set I's ``p7_argument``) are listed in the table as awaiting a grade, and their
text is shown in the feedback page; in the gradebook they wait with ``needs_manual_grade``
for nbgrader's formgrader.
"""
from __future__ import annotations

import csv
import html
import io
import json
import os
import time
import unicodedata
from pathlib import Path

from .. import _value_checks, _files
from . import _args, _identity

__all__ = ["manual_cells", "manual_answers", "console_text", "gradebook_url", "write_atomic",
           "open_gradebook", "Records", "MAX_MANUAL_CHARS"]

MAX_MANUAL_CHARS = 20_000
"""The longest text of a hand-graded answer kept (the rest is cut, and says so)."""

AWAITING = "awaiting a grade by hand"


# --------------------------------------------------------------------------
# hand-graded answers
# --------------------------------------------------------------------------

def _nbgrader_meta(cell):
    md = cell.get("metadata") if isinstance(cell, dict) else None
    m = md.get("nbgrader") if isinstance(md, dict) else None
    return m if isinstance(m, dict) else None


def _source(cell):
    src = cell.get("source", "")
    return "".join(map(str, src)) if isinstance(src, list) else str(src)


def manual_cells(release):
    """The answers graded by hand in a (student) notebook: ``[(grade_id, points, cell_type)]``
    for every cell with nbgrader's ``grade`` and ``solution`` both set (nbgrader's rule for a
    manually graded answer), in the notebook's order.

    >>> import nbformat
    >>> from robodyn.grading import markup
    >>> text = nbformat.v4.new_markdown_cell("YOUR ANSWER HERE")
    >>> text.metadata["nbgrader"] = markup.nbgrader_metadata("m", grade=True, solution=True,
    ...                                                      points=2)
    >>> manual_cells(nbformat.v4.new_notebook(cells=[text]))
    [('m', 2.0, 'markdown')]
    """
    return _manual_cells(_args.notebook(release, "manual_cells: release", node=False))


def _manual_cells(release):
    out = []
    for c in release["cells"]:
        m = _nbgrader_meta(c)
        if m and m.get("grade") and m.get("solution") and isinstance(m.get("grade_id"), str):
            out.append((m["grade_id"], float(m.get("points") or 0.0),
                        "markdown" if c.get("cell_type") == "markdown" else "code"))
    return out


def manual_answers(submission, release):
    """The student's text of each hand-graded answer: ``{grade_id: text}`` (at most
    :data:`MAX_MANUAL_CHARS` characters each; ``""`` where the cell is missing or still holds
    the release's text). ``submission`` is the submitted notebook as a dict.

    >>> import nbformat
    >>> from robodyn.grading import markup
    >>> text = nbformat.v4.new_markdown_cell("YOUR ANSWER HERE")
    >>> text.metadata["nbgrader"] = markup.nbgrader_metadata("m", grade=True, solution=True,
    ...                                                      points=2)
    >>> release = nbformat.v4.new_notebook(cells=[text])
    >>> done = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("Because.")])
    >>> done.cells[0].metadata["nbgrader"] = dict(text.metadata["nbgrader"])
    >>> manual_answers(done, release), manual_answers({"cells": []}, release)
    ({'m': 'Because.'}, {'m': ''})
    """
    _args.notebook(submission, "manual_answers: submission", submission=True, node=False)
    _args.notebook(release, "manual_answers: release", node=False)
    ids = {gid for gid, _, _ in _manual_cells(release)}
    blank = {(_nbgrader_meta(c) or {}).get("grade_id"): _source(c).strip()
             for c in release["cells"]}
    cells = submission["cells"]
    out = {gid: "" for gid in sorted(ids)}
    for c in cells:
        m = _nbgrader_meta(c) if isinstance(c, dict) else None
        gid = m.get("grade_id") if m else None
        if not isinstance(gid, str) or gid not in ids or out[gid]:
            continue
        text = _source(c).strip()
        if text == blank.get(gid):
            continue
        if len(text) > MAX_MANUAL_CHARS:
            text = text[:MAX_MANUAL_CHARS] + f"\n[… cut at {MAX_MANUAL_CHARS} characters]"
        out[gid] = text
    return out


# --------------------------------------------------------------------------
# text for the console, files written whole
# --------------------------------------------------------------------------

def console_text(text, limit=200, *, escape=True):
    """``text`` safe for the instructor's console, a CSV cell and a feedback page: control and
    format characters (newlines, escape sequences, bidirectional overrides, lone surrogates)
    and separators other than the space made harmless, and at most ``limit`` characters.

    ``escape`` (the console): each shown as ``\\xNN``/``\\uNNNN``, and a cut text ends in
    ``…``; not ``escape`` (the table and the pages): whitespace becomes a space and the rest
    ``?``, cut silently. Anything not ``str`` is shown by ``str()`` first.

    >>> console_text("a\\x1b[2Jb\\nc")
    'a\\\\x1b[2Jb\\\\x0ac'
    >>> console_text("a\\x1b]0;x\\x07b\\r\\nc\\u202ed", 2000, escape=False)
    'a?]0;x?b  c?d'
    """
    limit = _value_checks.size(limit, "console_text: limit", low=0, high=10**7)
    escape = _value_checks.flag(escape, "console_text: escape")
    if not isinstance(text, str):
        text = str(text)
    out = []
    for ch in text[:limit]:
        kind = unicodedata.category(ch)
        if kind[0] not in "CZ" or ch == " ":
            out.append(ch)
        elif escape:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}")
        else:
            out.append(" " if ch in "\t\n\r\x0b\x0c" or kind[0] == "Z" else "?")
    return "".join(out) + ("…" if escape and len(text) > limit else "")


def write_atomic(path, data):
    """Write ``data`` (str or bytes) to ``path`` through a temporary file in the same folder
    that then replaces it: readers see the old file or the new one, never a part. The file
    gets the mode an ordinary new file of the instructor's gets (``0o666`` less the umask:
    ``rw-r--r--`` under the usual umask 022), not the temporary file's private ``0o600``
    (widened just after the replacement: the owner reads it throughout).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> write_atomic(p, "one"); write_atomic(p, "two"); p.read_text()
    'two'
    >>> oct(p.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    True
    """
    _args.path(path, "write_atomic: path")
    if not isinstance(data, (str, bytes)):
        raise _value_checks.error("write_atomic: data", "str or bytes",
                            _value_checks.describe(data), exc=TypeError)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _files.replace_atomic(path, data.encode("utf-8") if isinstance(data, str) else data,
                          prefix=f".{path.name[:40]}.")
    os.chmod(path, 0o666 & ~_umask())        # the temporary file's private mode, widened


def _umask():
    """The process's umask, read without changing it (``/proc/self/status``; where that is
    missing, set and restored at once).

    >>> 0 <= _umask() <= 0o777
    True
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def gradebook_url(where):
    """A database URL for nbgrader's gradebook: a URL (``sqlite:///…``,
    ``postgresql://user@host/db``…) as it is, a file path as a SQLite URL.

    >>> gradebook_url("/tmp/course/gradebook.db")
    'sqlite:////tmp/course/gradebook.db'
    >>> gradebook_url("postgresql://grader@db/course")
    'postgresql://grader@db/course'
    """
    return _url(where, "gradebook_url: where")


def _url(where, name):
    if not isinstance(where, (str, os.PathLike)) or isinstance(where, bytes) or \
            not isinstance(os.fspath(where), str):
        raise _value_checks.error(name, "a database URL or a file path",
                            _value_checks.describe(where), exc=TypeError)
    where = os.fspath(where)
    if not where or len(where) > _args.MAX_PATH or "\n" in where or "\x00" in where:
        raise _value_checks.error(name, "a database URL or a file path", _value_checks.describe(where))
    if "://" in where:
        return where
    return "sqlite:///" + str(Path(where).resolve())


# --------------------------------------------------------------------------
# the records
# --------------------------------------------------------------------------

def _alembic_head():
    """The schema version nbgrader stamps on a new gradebook (its alembic head), read with
    alembic's API (nbgrader runs the ``alembic`` program, which need not be on the PATH)."""
    import nbgrader
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    cfg = Config()
    cfg.set_main_option("script_location",
                        os.path.join(os.path.dirname(nbgrader.__file__), "alembic"))
    return ScriptDirectory.from_config(cfg).get_current_head()


def open_gradebook(url):
    """nbgrader's ``Gradebook`` on the database ``url`` (see :func:`gradebook_url`), created
    as nbgrader creates it (its tables, stamped with its schema version) when empty."""
    return _open(_url(url, "open_gradebook: url"), "open_gradebook: url")


def _open(url, name):
    """:func:`open_gradebook` of a checked URL; a database that cannot be opened or is not a
    gradebook is refused naming ``name``."""
    import sqlalchemy as sa
    try:
        return _open_gradebook(url)
    except (sa.exc.SQLAlchemyError, OSError) as exc:
        raise _value_checks.refusal(
            ValueError, f"{name}: expected a gradebook database that can be opened, got "
                        f"{url[:200]!r} ({type(exc).__name__}: {str(exc)[:160]})") from exc


def _open_gradebook(url):
    import sqlalchemy as sa
    from nbgrader import api
    if url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        Path(url[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, future=True)
    try:
        if not sa.inspect(engine).get_table_names():
            head = _alembic_head()
            with engine.begin() as conn:
                api.Base.metadata.create_all(conn)
                conn.execute(sa.text("CREATE TABLE alembic_version "
                                     "(version_num VARCHAR(32) NOT NULL)"))
                conn.execute(sa.text("INSERT INTO alembic_version (version_num) VALUES (:v)"),
                             {"v": head})
    finally:
        engine.dispose()
    gb = api.Gradebook(url)
    if url.startswith("sqlite:"):
        sa.event.listen(gb.engine, "connect", _sqlite_pragmas)
        gb.db.remove()
        gb.engine.dispose()                     # the connections from now on have them
    return gb


def _sqlite_pragmas(conn, _record):
    """SQLite in write-ahead-log mode, synchronised at checkpoints: a commit survives a crash
    or a kill of the grader (not necessarily a power cut of the machine), at a fraction of the
    cost of a full sync per submission; waits for a lock instead of failing at once."""
    cur = conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


def _tables():
    import sqlalchemy as sa
    meta = sa.MetaData()
    rows = sa.Table("robodyn_graded", meta,
                    sa.Column("assignment", sa.String(128), primary_key=True),
                    sa.Column("notebook", sa.String(128), primary_key=True),
                    sa.Column("file", sa.String(255), primary_key=True),
                    sa.Column("student", sa.String(128), nullable=False),
                    sa.Column("graded_at", sa.Float, nullable=False),
                    sa.Column("row", sa.Text, nullable=False))
    runs = sa.Table("robodyn_grading_run", meta,
                    sa.Column("assignment", sa.String(128), primary_key=True),
                    sa.Column("notebook", sa.String(128), primary_key=True),
                    sa.Column("seed", sa.BigInteger, nullable=False))
    return meta, rows, runs


def _key(row):
    """A row's identity: the submission's file name (``id``; ``file`` is what is shown)."""
    return row.get("id") or row["file"]


def _same(v):
    """The default ``field`` of :class:`Records`: a value as it is."""
    return v


class Records:
    """The gradebook, score table and feedback pages of one graded set (see the module).

    ``url``: the gradebook's database; ``assignment``, ``notebook``: nbgrader's names;
    ``release``: the student notebook (its nbgrader cells become the gradebook's cells, with
    :meth:`define`); ``csv_path``;
    ``feedback_dir`` (or None); ``page``: ``page(row) -> html`` of a feedback page;
    ``field``: ``field(value) -> value`` of a CSV field (what keeps formulas out).
    """

    def __init__(self, url, assignment, notebook, release, csv_path, *,
                 feedback_dir=None, page=None, field=None):
        for name, v in (("assignment", assignment), ("notebook", notebook)):
            _args.label(v, f"Records: {name}")
        url = _url(url, "Records: url")
        _args.path(csv_path, "Records: csv_path")
        _args.path(feedback_dir, "Records: feedback_dir", none=True)
        release = _args.notebook(release, "Records: release")
        for name, f in (("page", page), ("field", field)):
            if f is not None and not callable(f):
                raise _value_checks.error(f"Records: {name}", "a callable or None",
                                    _value_checks.describe(f), exc=TypeError)
        self.assignment, self.notebook = assignment, notebook
        self.problems, self.cell_of = [], {}
        self.release = release
        self.manual = _manual_cells(release)
        self.csv_path = Path(csv_path)
        self.feedback_dir = Path(feedback_dir) if feedback_dir is not None else None
        self.page = page
        self.field = field or _same
        self._url = url
        self.gb = _open(url, "Records: url")
        self._meta, self._rows, self._runs = _tables()
        self._meta.create_all(self.gb.engine)
        self.rows = {}
        self._file_of = {}                     # student id -> the file key of its row
        self._csv_cost, self._csv_at, self._csv_dirty = 0.0, 0.0, False

    _OPEN_STATE = ("gb", "_meta", "_rows", "_runs")
    """The open database and its tables: not pickled, opened again from the url on loading."""

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in self._OPEN_STATE}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.gb = _open(self._url, "Records: url")
        self._meta, self._rows, self._runs = _tables()
        self._meta.create_all(self.gb.engine)

    def define(self, problems):
        """The set in nbgrader's terms: the assignment, its notebook, a grade cell per
        problem (``problems``: ``[(key, points)]`` of the automatically graded ones; named by
        its test cell ``<key>_check`` where the notebook has one) and per hand-graded answer,
        a solution cell per answer cell."""
        if isinstance(problems, (str, bytes, dict)) or not hasattr(problems, "__iter__"):
            raise _value_checks.error("Records.define: problems", "a list of (key, points)",
                                _value_checks.describe(problems), exc=TypeError)
        checked = []
        for item in problems:
            if not (isinstance(item, (tuple, list)) and len(item) == 2
                    and isinstance(item[0], str) and 0 < len(item[0]) <= 100):
                raise _value_checks.error("Records.define: problems", "(key, points) pairs",
                                    _value_checks.describe(item),
                                    exc=TypeError)
            checked.append((item[0], _value_checks.nonnegative(item[1], "Records.define: points",
                                                         high=1e9)))
        self.problems = [(k, float(p)) for k, p in checked]
        gb, a, nb, release = self.gb, self.assignment, self.notebook, self.release
        gb.update_or_create_assignment(a)
        gb.update_or_create_notebook(nb, a)
        grade_ids = set()
        for c in release["cells"]:
            m = _nbgrader_meta(c) or {}
            gid = m.get("grade_id")
            if m.get("solution") and isinstance(gid, str):
                gb.update_or_create_solution_cell(gid, nb, a)
            if m.get("grade") and isinstance(gid, str):
                grade_ids.add(gid)
        for key, p in self.problems:
            name = f"{key}_check" if f"{key}_check" in grade_ids else key
            self.cell_of[key] = name
            gb.update_or_create_grade_cell(name, nb, a, max_score=p, cell_type="code")
        for gid, p, kind in self.manual:
            gb.update_or_create_grade_cell(gid, nb, a, max_score=p, cell_type=kind)

    def seed(self, seed):
        """The run's seed: ``seed`` when given (and stored), else the one stored by an earlier
        run of this set, else a new one (stored)."""
        if seed is not None:
            seed = _value_checks.size(seed, "Records.seed: seed", low=0, high=2**62)
        import numpy as np
        import sqlalchemy as sa
        key = (self._runs.c.assignment == self.assignment) & \
              (self._runs.c.notebook == self.notebook)
        with self.gb.engine.begin() as conn:
            old = conn.execute(sa.select(self._runs.c.seed).where(key)).scalar()
            if seed is None:
                seed = int(old) if old is not None else \
                    int(np.random.default_rng().integers(2**31))
            if old is None:
                conn.execute(self._runs.insert().values(assignment=self.assignment,
                                                        notebook=self.notebook, seed=seed))
            elif int(old) != seed:
                conn.execute(self._runs.update().where(key).values(seed=seed))
        return int(seed)

    def graded(self):
        """``{file name: row}`` of the submissions of this set already in the gradebook (the
        file name is the row's ``id``, else its ``file``)."""
        import sqlalchemy as sa
        t = self._rows
        q = sa.select(t.c.file, t.c.row).where((t.c.assignment == self.assignment) &
                                               (t.c.notebook == self.notebook))
        with self.gb.engine.connect() as conn:
            return {f: json.loads(r) for f, r in conn.execute(q)}

    def _write_gradebook(self, row):
        """One transaction: the submission, its grades and comments, and the row. False when
        the file was recorded already (the row is then not written again)."""
        import sqlalchemy as sa
        from nbgrader import api
        from sqlalchemy.exc import IntegrityError
        db = self.gb.db
        t = self._rows
        mine = (t.c.assignment == self.assignment) & (t.c.notebook == self.notebook) & \
               (t.c.file == _key(row))
        if db.execute(sa.select(t.c.file).where(mine)).first() is not None:
            db.rollback()
            return False
        student = str(row["student"])[:128]
        assignment = self.gb.find_assignment(self.assignment)
        st = db.query(api.Student).filter(api.Student.id == student).one_or_none()
        if st is None:
            st = api.Student(id=student)
            db.add(st)
        exists = db.query(api.SubmittedAssignment).filter(
            api.SubmittedAssignment.assignment == assignment,
            api.SubmittedAssignment.student == st).one_or_none()
        if exists is not None:
            row = {**row, "notes": (row.get("notes", "") + " | gradebook: this student already "
                                    "has a submission of the assignment there; this file's "
                                    "grades are only in the table").strip(" |")}
        else:
            with db.no_autoflush:
                self._submission(assignment, st, row)
        db.execute(t.insert().values(assignment=self.assignment, notebook=self.notebook,
                                     file=_key(row), student=student, graded_at=time.time(),
                                     row=json.dumps(row, default=str)))
        try:
            db.commit()
        except IntegrityError:                 # recorded meanwhile by another run
            db.rollback()
            return False
        return row

    def _submission(self, assignment, st, row):
        from nbgrader import api
        sub = api.SubmittedAssignment(assignment=assignment, student=st)
        auto = {self.cell_of[k]: row.get(k, 0.0) for k, _ in self.problems}
        manual = {gid for gid, _, _ in self.manual}
        comments = {f"{k}_answer": row.get(f"{k} feedback", "") for k, _ in self.problems}
        for notebook in assignment.notebooks:
            nb = api.SubmittedNotebook(notebook=notebook, assignment=sub)
            for cell in notebook.grade_cells:
                g = api.Grade(cell_id=cell.id, notebook=nb)
                if notebook.name == self.notebook and cell.name in auto:
                    g.auto_score = float(auto[cell.name])
                    g.needs_manual_grade = False
                else:
                    g.needs_manual_grade = True        # by hand (or not ours)
            for cell in notebook.solution_cells:
                cm = api.Comment(cell_id=cell.id, notebook=nb)
                if notebook.name == self.notebook and cell.name in comments:
                    cm.auto_comment = str(comments[cell.name])[:10_000]
                elif cell.name in manual:
                    cm.auto_comment = AWAITING
            for cell in notebook.task_cells:
                api.Comment(cell_id=cell.id, notebook=nb)
                api.Grade(cell_id=cell.id, notebook=nb)
        self.gb.db.add(sub)

    # -- the table and the pages
    def columns(self):
        keys = [k for k, _ in self.problems] + [gid for gid, _, _ in self.manual]
        return ["student", "file", "total", "max", "awaiting"] + keys + \
            [f"{k} feedback" for k in keys] + ["notes", "seconds"]

    def table_row(self, row):
        """The CSV's fields of a row: hand-graded answers empty, awaiting their grade."""
        _args.row(row, "Records.table_row: row", keys=("file",))
        out = dict(row)
        out["max"] = sum(p for _, p in self.problems)
        out["awaiting"] = sum(p for _, p, _ in self.manual)
        for gid, p, _ in self.manual:
            out[gid] = ""
            said = (row.get("manual") or {}).get(gid)
            out[f"{gid} feedback"] = f"{AWAITING} ({p:g} points)" + \
                ("" if said else "; the cell holds no answer")
        return out

    def add(self, row, *, record=True):
        """Write one submission's row: the gradebook (when ``record``; a row that only says
        its task died is not recorded, so that a rerun grades it), the table, its page.
        Returns False when the file was in the gradebook already (nothing written)."""
        _args.row(row, "Records.add: row", keys=("file", "student"))
        record = _value_checks.flag(record, "Records.add: record")
        if not _identity.is_student_id(row["student"]):
            raise _value_checks.error("Records.add: row", f"a row whose 'student' is a checked "
                                f"student id ({_identity.RULE}, as "
                                f"_identity.student_id returns it)",
                                repr(console_text(row["student"], 80)))
        other = self._file_of.get(row["student"])
        if other is not None and other != _key(row):
            raise _value_checks.error("Records.add: row", "one file per student id (two files of "
                                "one id are held back, never one written over the other)",
                                f"a second file for {row['student']!r}")
        if record:
            written = self._write_gradebook(row)
            if written is False:
                return False
            row = written
        self.rows[_key(row)] = row
        self._file_of[row["student"]] = _key(row)
        self._csv_dirty = True
        self.flush(force=False)
        if self.feedback_dir is not None and self.page is not None:
            page = self.feedback_dir / f"{row['student']}.html"     # a checked id: a name
            if record or not page.exists():          # a row from the gradebook: its page
                write_atomic(page, self.page(row))
        return True

    def flush(self, force=True):
        """Rewrite the table (atomically). Unforced, at most as often as keeps the rewriting
        under a sixth of the time (a class of 10,000 is not rewritten 10,000 times)."""
        force = _value_checks.flag(force, "Records.flush: force")
        if not self._csv_dirty:
            return
        now = time.monotonic()
        if not force and now - self._csv_at < 5 * self._csv_cost:
            return
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns(), extrasaction="ignore")
        w.writeheader()
        for f in sorted(self.rows):
            w.writerow({k: self.field(v) for k, v in self.table_row(self.rows[f]).items()})
        write_atomic(self.csv_path, buf.getvalue())
        self._csv_at = time.monotonic()
        self._csv_cost, self._csv_dirty = self._csv_at - now, False

    def close(self):
        """The last table; the database closed."""
        self.flush(force=True)
        self.gb.close()


def manual_html(row, manual):
    """The feedback page's section of hand-graded answers: each with its points awaiting a
    grade and the student's text (escaped)."""
    if not manual:
        return ""
    said = row.get("manual") or {}
    items = []
    for gid, p, _ in manual:
        text = said.get(gid) or ""
        body = f"<pre>{html.escape(text)}</pre>" if text else "<p><i>(no answer)</i></p>"
        items.append(f"<h3>{html.escape(gid)} &mdash; {p:g} points, {AWAITING}</h3>{body}")
    return "<h2>Answers graded by hand</h2>" + "".join(items)

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}})
