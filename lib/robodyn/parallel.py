"""One function over many independent items: local processes, or a Dask cluster.

The book's sweeps (a walker's basin of attraction: tens of thousands of simulations) and the
grader (one sandboxed run per submission) share this one helper, :func:`map_tasks`:

* **where it runs**: in this process (``workers=1``), on a pool of local processes (the
  default, one per core), or on a Dask cluster (``scheduler``: the scheduler's address, or a
  ``distributed.Client``). The results do not depend on where: they come back in the order of
  the items, and a deterministic ``func`` gives the same list on 1, 2 or 200 workers.
* **resume**: with ``cache_dir`` each finished result is written to its own file (atomically:
  a temporary file renamed into place) as soon as it arrives, and a later call with the same
  keys loads it instead of computing it again. A sweep killed half-way goes on from where it
  stopped.
* **faults**: a worker process that dies (killed, out of memory) has its unfinished items run
  again elsewhere, at most ``retries`` more times; ``on_result`` is still called exactly once
  per key. An item may therefore be *computed* more than once (a worker can die after
  finishing), so ``func`` must not count on running once: it should only return a value.
* **progress**: ``progress=True`` draws a text bar on standard error (also in a notebook), or
  give a callable ``progress(done, total)``.

An exception raised by ``func`` for one item stops the call with a :class:`TaskError` naming
the item's key (what had finished is in the cache). Callers that want one item's failure to be
that item's result only (the grader) catch it inside ``func``.
"""
from __future__ import annotations

import concurrent.futures as cf
import hashlib
import multiprocessing
import os
import pickle
import re
import sys
import time
import uuid
from pathlib import Path

from . import _boundary, _value_checks, _files
from . import errors as _errors
from .errors import RobodynError

__all__ = ["map_tasks", "TaskError", "ItemValueError", "ItemTypeError", "MAX_TASKS"]

MAX_TASKS = 10_000_000
"""At most this many items in one call (a bound, so that a wrong argument cannot make the
bookkeeping itself run out of memory)."""

MAX_KEY_LENGTH = 200
"""Keys are short strings: they name files in ``cache_dir`` (through a hash) and tasks."""

_FNAME = "map_tasks"


class TaskError(RobodynError, RuntimeError):
    """``func`` raised for one item (its key is ``key``; the original error is the cause).

    When ``func`` refused the item with a ``ValueError`` or ``TypeError`` (the item is outside
    func's domain), the error is also that class (:class:`ItemValueError`,
    :class:`ItemTypeError`) and its message names the argument ``items``: items are opaque to
    :func:`map_tasks` (any picklable values: tuples, paths, states), so func alone says which
    are valid, and its refusal is a refusal of the argument."""

    def __init__(self, key, message):
        super().__init__(message)
        self.key = key


class ItemValueError(TaskError, ValueError):
    """``func`` refused an item with a ValueError."""


class ItemTypeError(TaskError, TypeError):
    """``func`` refused an item with a TypeError."""


def _task_error(key, exc, fname):
    """The TaskError for ``func`` raising ``exc`` on the item named ``key``."""
    if isinstance(exc, (ValueError, TypeError)):
        cls = ItemValueError if isinstance(exc, ValueError) else ItemTypeError
        return cls(key, f"{fname}: items: expected items that func accepts, got item {key!r} "
                        f"refused by func: {exc!r}"[:2000])
    return TaskError(key, f"{fname}: item {key!r} failed: {exc!r}"[:2000])


# ----------------------------------------------------------------------------- the arguments

def _check_keys(keys, n, fname=_FNAME):
    if keys is None:
        return [str(i) for i in range(n)]
    if isinstance(keys, (str, bytes)) or not hasattr(keys, "__iter__"):
        raise _value_checks.error(f"{fname}: keys", "a sequence of strings, one per item", keys,
                            exc=TypeError)
    keys = list(keys)
    if len(keys) != n:
        raise _value_checks.error(f"{fname}: keys, items", f"{n} keys (one per item)",
                            f"{len(keys)} keys")
    for k in keys:
        if not isinstance(k, str):
            raise _value_checks.error(f"{fname}: keys", "strings", k, exc=TypeError)
        if not 0 < len(k) <= MAX_KEY_LENGTH:
            raise _value_checks.error(f"{fname}: keys", f"strings of 1 to {MAX_KEY_LENGTH} characters",
                                f"one of {len(k)} characters")
    if len(set(keys)) != n:
        seen, dup = set(), None
        for k in keys:
            if k in seen:
                dup = k
                break
            seen.add(k)
        raise _value_checks.error(f"{fname}: keys", "distinct keys", f"{dup!r} twice")
    return keys


def _check_items(items, fname=_FNAME):
    if isinstance(items, (str, bytes, dict)) or not hasattr(items, "__iter__"):
        raise _value_checks.error(f"{fname}: items", "a sequence of items (a list, tuple, range...)",
                            items, exc=TypeError)
    if hasattr(items, "__len__") and len(items) > MAX_TASKS:
        raise _value_checks.error(f"{fname}: items", f"at most {MAX_TASKS} items",
                            f"{len(items)} items", hint="split the sweep into several calls")
    out = []
    for x in items:
        out.append(x)
        if len(out) > MAX_TASKS:
            raise _value_checks.error(f"{fname}: items", f"at most {MAX_TASKS} items",
                                "more", hint="split the sweep into several calls")
    return out


def _check_callable(f, name, optional=True, fname=_FNAME):
    if f is None and optional:
        return None
    if not callable(f):
        raise _value_checks.error(f"{fname}: {name}", "a callable" + (" or None" if optional else ""),
                            f, exc=TypeError)
    return f


_ADDRESS = re.compile(r"(?:[a-z][a-z0-9+]*://)?[A-Za-z0-9._\-\[\]:%]+(?::[0-9]{1,5})?(?:/\S*)?")
"""What a Dask scheduler address looks like (``tcp://127.0.0.1:8786``, ``host:8786``): no
quotes, parentheses or spaces."""


def _check_scheduler(scheduler, fname=_FNAME):
    if scheduler is None:
        return None
    if isinstance(scheduler, str):
        if len(scheduler) > 500 or not _ADDRESS.fullmatch(scheduler):
            raise _value_checks.error(f"{fname}: scheduler", "a Dask scheduler address such as "
                                "'tcp://127.0.0.1:8786'", scheduler)
        return scheduler
    if type(scheduler).__name__ == "Client" and hasattr(scheduler, "submit"):
        return scheduler
    raise _value_checks.error(f"{fname}: scheduler", "None (local processes), a Dask scheduler "
                        "address, or a distributed.Client", scheduler, exc=TypeError)


def _check_progress(progress, fname=_FNAME):
    if progress is None or isinstance(progress, bool):
        return progress
    return _check_callable(progress, "progress", fname=fname)


def _check_cache_dir(cache_dir, fname=_FNAME):
    if cache_dir is None:
        return None
    if not isinstance(cache_dir, (str, os.PathLike)):
        raise _value_checks.error(f"{fname}: cache_dir", "a folder path or None", cache_dir,
                            exc=TypeError)
    path = Path(cache_dir)
    if path.exists() and not path.is_dir():
        raise _value_checks.error(f"{fname}: cache_dir", "a folder", f"the file {str(path)!r}")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _check_description(description, fname=_FNAME):
    if not isinstance(description, str):
        raise _value_checks.error(f"{fname}: description", "a string", description, exc=TypeError)
    if len(description) > 200 or any(ord(c) < 32 for c in description):
        raise _value_checks.error(f"{fname}: description", "one line of at most 200 characters",
                            f"{len(description)} characters")
    return description


# ----------------------------------------------------------------------------- the cache

def _cache_file(cache_dir, key):
    return cache_dir / (hashlib.sha256(key.encode()).hexdigest()[:40] + ".pkl")


def _cache_load(cache_dir, key):
    """(True, result) when ``key`` finished in an earlier call, else (False, None)."""
    path = _cache_file(cache_dir, key)
    try:
        with open(path, "rb") as f:
            stored_key, result = pickle.load(f)
    except FileNotFoundError:
        return False, None
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
        return False, None          # a torn or foreign file: compute again
    return (True, result) if stored_key == key else (False, None)


def _cache_store(cache_dir, key, result):
    _files.replace_atomic(_cache_file(cache_dir, key),
                          pickle.dumps((key, result), protocol=pickle.HIGHEST_PROTOCOL))


# ----------------------------------------------------------------------------- progress

class _Progress:
    def __init__(self, progress, total, description):
        self.fn = progress if callable(progress) else None
        self.bar = progress is True
        self.total, self.done = total, 0
        self.label = description or "tasks"
        self.start = time.monotonic()
        self.last = 0.0

    def step(self, n=1, final=False):
        self.done += n
        if self.fn is not None:
            self.fn(self.done, self.total)
        if self.bar:
            now = time.monotonic()
            if final or self.done == self.total or now - self.last > 0.2:
                self.last = now
                width = 30
                filled = width * self.done // max(self.total, 1)
                sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                                 f"{self.done}/{self.total}  {now - self.start:.1f} s")
                if self.done == self.total:
                    sys.stderr.write("\n")
                sys.stderr.flush()


# ----------------------------------------------------------------------------- the engines

def _run_serial(func, todo, deliver, fname=_FNAME):
    token = _errors.CALL.set(_errors.OPEN)      # func is the reader's code: its robodyn calls
    try:                                        # are checked as in a worker process
        for i, key, item in todo:
            try:
                result = func(item)
            except Exception as exc:
                raise _task_error(key, exc, fname) from exc
            deliver(i, key, result)
    finally:
        _errors.CALL.reset(token)


def _pool_context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _run_local(func, todo, deliver, workers, retries, fname=_FNAME):
    """A process pool; a pool broken by a dead worker is replaced and what was unfinished
    is submitted again (at most ``retries`` times)."""
    pending = {i: (key, item) for i, key, item in todo}
    for attempt in range(retries + 1):
        broken = False
        with cf.ProcessPoolExecutor(max_workers=min(workers, len(pending)),
                                    mp_context=_pool_context()) as pool:
            futures = {pool.submit(func, item): i for i, (key, item) in pending.items()}
            for fut in cf.as_completed(futures):
                i = futures[fut]
                key = pending[i][0]
                try:
                    result = fut.result()
                except cf.process.BrokenProcessPool:
                    broken = True
                    continue
                except Exception as exc:
                    for other in futures:
                        other.cancel()
                    raise _task_error(key, exc, fname) from exc
                deliver(i, key, result)
                del pending[i]
        if not broken or not pending:
            return
    first = pending[min(pending)][0]
    raise RuntimeError(f"{fname}: worker processes died {retries + 1} times; "
                       f"{len(pending)} items unfinished (first: {first!r}); "
                       "finished ones are kept in cache_dir when one is given")


def _client(scheduler):
    try:
        from distributed import Client
    except ImportError as exc:          # pragma: no cover - dask is in requirements.txt
        raise RuntimeError(f"{_FNAME}: scheduler given but the 'distributed' package is "
                           "missing (pip install 'dask[distributed]')") from exc
    if isinstance(scheduler, str):
        return Client(scheduler, set_as_default=False, timeout="30s"), True
    return scheduler, False


def _run_dask(func, todo, deliver, scheduler, retries, fname=_FNAME):
    from distributed import as_completed
    client, own = _client(scheduler)
    try:
        token = uuid.uuid4().hex[:12]
        futures = client.map(func, [item for _, _, item in todo],
                             key=[f"robodyn-{token}-{i}" for i, _, _ in todo],
                             retries=retries, pure=False)
        where = {f.key: (i, key) for f, (i, key, _) in zip(futures, todo)}
        try:
            for fut in as_completed(futures, loop=client.loop):   # not the default client
                i, key = where[fut.key]
                if fut.status == "error":
                    exc = fut.exception()
                    raise _task_error(key, exc, fname) from exc
                deliver(i, key, fut.result())
                fut.release()
        finally:
            client.cancel(futures)
    finally:
        if own:
            client.close()


# ----------------------------------------------------------------------------- the helper

def map_tasks(func, items, *, keys=None, scheduler=None, workers=None, cache_dir=None,
              on_result=None, progress=None, retries=2, description=""):
    """Apply ``func`` to every item, in parallel; the results in the order of ``items``.

    Parameters
    ----------
    func : callable
        ``func(item)`` -> result. For processes and Dask it must be picklable (a function
        defined at the top level of a module; with local processes started by fork, one
        defined in a notebook works too) and so must items and results.
    items : sequence
        The independent inputs (at most :data:`MAX_TASKS`).
    keys : sequence of str, optional
        One distinct name per item (default ``"0"``, ``"1"``, ...): what the cache, the
        callbacks and error messages call it. Give keys that identify the item itself (e.g.
        ``"slope=0.010,theta=0.2"``) when a cache is reused across calls.
    scheduler : None, str or distributed.Client
        None: local processes. A string: the address of a Dask scheduler
        (``"tcp://host:8786"``). A ``distributed.Client``: that cluster.
    workers : int, optional
        Local processes (default: the number of cores; 1 runs in this process). Ignored with
        a scheduler (the cluster has its own).
    cache_dir : path, optional
        Folder of finished results; a rerun loads them instead of computing them (resume).
    on_result : callable, optional
        ``on_result(key, result)``, called in this process once per key computed in this call,
        as it arrives (in the order of completion, not of the items).
    progress : None, bool or callable
        True: a text bar on standard error; a callable: ``progress(done, total)``.
    retries : int
        How many more times an item whose worker died is run (0 to 10).
    description : str
        A label for the bar.

    Returns
    -------
    list
        ``[func(item) for item in items]``, wherever each was computed.

    Raises
    ------
    TaskError
        ``func`` raised for an item (the message names its key).
    RuntimeError
        Local workers kept dying after ``retries`` new pools.

    Examples
    --------
    >>> map_tasks(abs, [-3, 1, -2], workers=1)
    [3, 1, 2]
    >>> map_tasks(abs, [-1, -2], keys=["a", "a"], workers=1)
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: map_tasks: keys: expected distinct keys, got 'a' twice
    """
    return _map(_FNAME, func, items, keys, scheduler, workers, cache_dir, on_result, progress,
                retries, description)


def _map(fname, func, items, keys=None, scheduler=None, workers=None, cache_dir=None,
         on_result=None, progress=None, retries=2, description=""):
    """:func:`map_tasks` for a caller named ``fname`` (its messages name that function)."""
    func = _check_callable(func, "func", optional=False, fname=fname)
    items = _check_items(items, fname)
    keys = _check_keys(keys, len(items), fname)
    scheduler = _check_scheduler(scheduler, fname)
    if workers is not None:
        workers = _value_checks.size(workers, f"{fname}: workers", low=1, high=1024)
    on_result = _check_callable(on_result, "on_result", fname=fname)
    progress = _check_progress(progress, fname)
    retries = _value_checks.size(retries, f"{fname}: retries", low=0, high=10)
    description = _check_description(description, fname)
    cache_dir = _check_cache_dir(cache_dir, fname)        # last: it may create the folder

    results = [None] * len(items)
    todo = []
    for i, (key, item) in enumerate(zip(keys, items)):
        found, value = _cache_load(cache_dir, key) if cache_dir is not None else (False, None)
        if found:
            results[i] = value
        else:
            todo.append((i, key, item))
    bar = _Progress(progress, len(items), description)
    if len(items) - len(todo):
        bar.step(len(items) - len(todo))
    delivered = set()

    def deliver(i, key, result):
        if key in delivered:        # a task run twice (its first worker died after finishing)
            return
        bad = _boundary.nonfinite(result)        # refused before it is stored or handed on
        if bad:
            raise _errors.ResultError(f"{fname}: result: expected finite results, got {bad} "
                                      f"for item {key!r} (nothing was cached or handed to "
                                      "on_result for it)")
        delivered.add(key)
        results[i] = result
        if cache_dir is not None:
            _cache_store(cache_dir, key, result)
        if on_result is not None:
            on_result(key, result)
        bar.step()

    if todo:
        if scheduler is not None:
            _run_dask(func, todo, deliver, scheduler, retries, fname)
        else:
            n = workers if workers is not None else (os.cpu_count() or 1)
            if n == 1 or len(todo) == 1:
                _run_serial(func, todo, deliver, fname)
            else:
                _run_local(func, todo, deliver, n, retries, fname)
    return results

from ._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"map_tasks": {"open": True, "raw": ["items", "keys"]}})  # items: func judges them
