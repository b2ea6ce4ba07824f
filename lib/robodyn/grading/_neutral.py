"""Neutral copies of the files the sandbox mounts (private; issue 41 point 3).

The sandbox mounts the Python installation, the virtual environment's packages and the
robodyn package at neutral paths (:mod:`robodyn.grading.jail`), but their files still name
the host's folders: every compiled module (``__pycache__/*.pyc``) holds the path it was
compiled at in each code object's ``co_filename`` (``marshal.loads`` of the file shows it),
and ``_sysconfigdata*.py``, ``Makefile``, ``*.pc`` and scripts hold the installation's
prefix.

:func:`layer` builds, once per state of a mounted folder, a *layer* of replacements: a
folder mirroring the host folder that holds, for every file naming a host path, a copy that
names the path inside instead (:func:`rules`) --

* a compiled module: its code objects rebuilt with ``co_filename`` (and any text constant)
  rewritten, under the same 16-byte header, so the interpreter still finds it valid for its
  source (a file of another Python's magic number that names a host path: emptied, which
  the interpreter reads as stale);
* a text file: rewritten; a rewritten ``.py`` gets its compiled module rebuilt to match;
* a symbolic link whose target names a host path: the same link to the path inside.

A **binary** file (one with a NUL byte that is not a compiled module) is left as it is: a
Python installation built in its own folder (pyenv's, in the user's home) carries that
folder as the run path of its interpreter and extension modules and as ``libpython``'s
built-in prefix, and these cannot be rewritten safely -- the linker shares the tails of
equal strings (in this ``libpython`` the version ``3.11.7`` *is* the tail of the prefix:
rewriting the prefix blanked ``sys.version``). Those files name the installation's folder
only; the system's Python, or a relocatable build, names none. So for a virtual environment of
such an installation the sandbox runs the system's interpreter of the same version
(:func:`robodyn.grading.jail._twin`) and does not mount the installation at all; only where the
system has none are those binaries seen inside.

:mod:`robodyn.grading.jail` mounts the layer above the host folder in the same read-only
overlay (``lowerdir=n<i>:h<i>:e``), so inside only the neutral copies are seen. Layers live
in a private cache folder of the user (``robodyn-sandbox-<uid>``, 0700) named for the
folder's state (every file's path, size and modification time), so a changed folder gets a
new layer and an unchanged one is built once.
"""
from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import py_compile
import re
import secrets
import shutil
import stat
import sys
import tempfile
import time
import types

MAX_FILE = 512 * 2**20
"""Files larger than this are not read (none of the mounted trees has one that names a
host path; the hostile scan in ``tests/test_sandbox_isolation.py`` reads them all)."""
_SHARED = re.compile(r"\.so(\.[0-9.]+)?\Z")
RECHECK_SECONDS = 300
"""How long a process trusts a folder's layer before it looks at the folder's state again
(listing the virtual environment takes seconds)."""
_MEMO = {}


def rules(pairs, hidden=()):
    """``[(host bytes, inside bytes or None)]`` from ``[(host folder, path inside)]``: each
    host folder under its given and its real spelling, longest first (so a folder inside
    another is rewritten by its own rule); the folders of ``hidden`` (a checkout an editable
    install names) with None: a file still naming one is emptied in the layer.

    >>> rules([("/a/venv", "/opt/venv")], hidden=["/a/src"])
    [(b'/a/venv', b'/opt/venv'), (b'/a/src', None)]
    """
    out = {}
    for host, inside in list(pairs) + [(h, None) for h in hidden]:
        for h in (host, os.path.realpath(host)):
            if len(h) > 1 and h != inside:
                out.setdefault(os.fsencode(h), None if inside is None else
                               os.fsencode(inside))
    return sorted(out.items(), key=lambda kv: -len(kv[0]))


def _rewrite(data, table):
    for h, n in table:
        if n is not None:
            data = data.replace(h, n)
    return data


def _names_host(data, table):
    return any(h in data for h, _ in table)


def _recode(obj, table):
    """``obj`` (a code object or constant) with every host path in its file names and text
    constants rewritten."""
    if isinstance(obj, types.CodeType):
        return obj.replace(co_filename=_recode(obj.co_filename, table),
                           co_consts=tuple(_recode(c, table) for c in obj.co_consts))
    if isinstance(obj, str):                  # (lone surrogates pass: unicodedata tables)
        b = obj.encode("utf-8", "surrogatepass")
        return _rewrite(b, table).decode("utf-8", "surrogatepass") if \
            _names_host(b, table) else obj
    if isinstance(obj, bytes):
        return _rewrite(obj, table)
    if isinstance(obj, (tuple, frozenset)):
        return type(obj)(_recode(c, table) for c in obj)
    return obj


def _pyc(data, table):
    """A compiled module's neutral bytes (the same header; empty when it cannot be read)."""
    if data[:4] == importlib.util.MAGIC_NUMBER and len(data) > 16:
        try:
            out = data[:16] + marshal.dumps(_recode(marshal.loads(data[16:]), table))
        except (ValueError, EOFError, TypeError):
            return b""
        return b"" if _names_host(out, table) else out
    return b""


def _state(host):
    """A digest of the folder's state: every folder's relative path and modification time
    (which changes when an entry is added, removed or replaced, as installers and the
    interpreter replace files) and every entry's name, kind, and target (a symbolic link) or
    size and modification time (a file)."""
    h, todo = hashlib.sha256(), [host]
    while todo:
        d = todo.pop()
        try:
            st = os.lstat(d)
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            continue
        h.update(f"{os.path.relpath(d, host)}\0{st.st_mtime_ns}\0{st.st_mode}\n".encode(
            "utf-8", "surrogateescape"))
        for e in entries:
            kind = "l" if e.is_symlink() else "d" if e.is_dir() else "f"
            extra = ""
            try:
                if kind == "l":
                    extra = os.readlink(e.path)
                elif kind == "f":
                    est = e.stat(follow_symlinks=False)
                    extra = f"{est.st_size}:{est.st_mtime_ns}"
            except OSError:
                pass
            h.update(f"{e.name}\0{kind}\0{extra}\n".encode("utf-8", "surrogateescape"))
            if kind == "d":
                todo.append(e.path)
    return h.hexdigest()[:20]


def cache_root():
    """The user's private folder of layers (created 0700; one that is not a real folder of
    this user's with no access for others is never used), or None."""
    uid = os.geteuid()
    bases = [os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                              ".cache"),
             "/var/tmp", tempfile.gettempdir()]
    for base in bases:
        path = os.path.join(base, f"robodyn-sandbox-{uid}")
        try:
            os.makedirs(base, exist_ok=True) if base.endswith(".cache") else None
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == uid and st.st_mode & 0o077 == 0:
            return path
    return None


def layer(host, inside, table):
    """The folder of neutral replacements for the host folder ``host`` mounted at
    ``inside``, given the rewriting ``table`` (:func:`rules`); built once per state of the
    folder (cached), None when there is no private cache folder."""
    key = hashlib.sha256(repr((os.path.realpath(host), inside, table, sys.version,
                               5)).encode()).hexdigest()[:16]
    hit = _MEMO.get(key)
    if hit is not None and time.monotonic() - hit[0] < RECHECK_SECONDS:
        return hit[1]
    state = _state(host)
    root = cache_root()
    if root is None:
        return None
    final = os.path.join(root, f"{key}-{state}")
    done = os.path.join(final, "done")                 # beside the layer, never inside it
    if not os.path.isfile(done):
        build = os.path.join(root, f".build-{key}-{secrets.token_hex(6)}")
        try:
            os.mkdir(build, 0o700)
            _build(host, inside, os.path.join(build, "tree"), table)
            with open(os.path.join(build, "done"), "w") as f:
                f.write(f"{host} -> {inside}\n")
            os.rename(build, final)
        except OSError:
            shutil.rmtree(build, ignore_errors=True)
            if not os.path.isfile(done):
                raise
        _prune(root, key, final)
    final = os.path.join(final, "tree")
    _MEMO[key] = (time.monotonic(), final)
    return final


def _prune(root, key, keep):
    """Remove this folder's older layers, keeping the two newest (a run may still use
    one), and builds left an hour ago."""
    old = sorted((os.path.join(root, n) for n in os.listdir(root) if n.startswith(key + "-")
                  and os.path.join(root, n) != keep), key=os.path.getmtime)
    for path in old[:-1]:
        shutil.rmtree(path, ignore_errors=True)
    for n in os.listdir(root):                   # a builder killed half-way: after an hour
        path = os.path.join(root, n)
        if n.startswith(f".build-{key}-"):
            try:
                if time.time() - os.path.getmtime(path) > 3600:
                    shutil.rmtree(path, ignore_errors=True)
            except OSError:
                pass


def _folders(host, build, rel):
    """Make the folders of ``rel`` in ``build`` with the modes of the host's (an overlay
    shows a merged folder with its topmost layer's mode)."""
    parts = [p for p in os.path.dirname(rel).split(os.sep) if p]
    for i in range(1, len(parts) + 1):
        d = os.path.join(build, *parts[:i])
        if not os.path.isdir(d):
            os.mkdir(d)
            try:
                mode = stat.S_IMODE(os.stat(os.path.join(host, *parts[:i])).st_mode)
            except OSError:                           # a __pycache__ the host has not
                mode = 0o755
            os.chmod(d, mode)
    return os.path.join(build, rel)


def _put(host, build, rel, data, mode):
    dest = _folders(host, build, rel)
    with open(dest, "wb") as f:
        f.write(data)
    os.chmod(dest, stat.S_IMODE(mode))
    return dest


def _build(host, inside, build, table):
    """Write the replacements of ``host`` (mounted at ``inside``) into the new folder
    ``build``."""
    os.mkdir(build)
    os.chmod(build, stat.S_IMODE(os.stat(host).st_mode))
    sources = []
    for top, dirs, files in os.walk(host):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, host)
            try:
                st = os.lstat(path)
                if stat.S_ISLNK(st.st_mode):
                    target = os.fsencode(os.readlink(path))
                    if _names_host(target, table):
                        target = _rewrite(target, table)
                        if _names_host(target, table):          # a hidden folder: emptied
                            _put(host, build, rel, b"", 0o644)
                        else:
                            os.symlink(target, _folders(host, build, rel))
                    continue
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE or \
                        _SHARED.search(name):                    # binaries: left as they are
                    continue
                with open(path, "rb") as f:
                    data = f.read(8192)
                    if b"\0" in data and not name.endswith(".pyc"):
                        continue                    # a binary: left as it is, unread
                    data += f.read()
            except OSError:
                continue
            if not _names_host(data, table):
                continue
            if name.endswith(".pyc"):
                new = _pyc(data, table)
            elif b"\0" in data:          # a binary: left as it is (see the module's note)
                continue
            else:
                new = _rewrite(data, table)
                if _names_host(new, table):                     # a hidden folder: emptied
                    new = b""
                elif name.endswith(".py"):
                    sources.append((rel, st))
            _put(host, build, rel, new, st.st_mode)
    for rel, st in sources:                  # a rewritten source: its compiled module anew
        src = os.path.join(build, rel)
        os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
        stem = os.path.splitext(os.path.basename(src))[0]
        cfile = os.path.join(os.path.dirname(src), "__pycache__",
                             f"{stem}.{sys.implementation.cache_tag}.pyc")
        _folders(host, build, os.path.relpath(cfile, build))
        try:
            py_compile.compile(src, cfile=cfile, dfile=os.path.join(inside, rel),
                               doraise=True)
            os.chmod(cfile, 0o644)
        except (py_compile.PyCompileError, OSError, SyntaxError):
            pass

