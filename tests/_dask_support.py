"""A local Dask cluster for the tests: two worker processes of one thread each, and a client.

Its start is tried twice. On a loaded machine distributed's own handshake sometimes fails
while the client connects (``assert len(msg) == 1`` in ``Client._ensure_connected``, a
timeout, a refused port): that is the cluster not starting, not the code under test, so it is
started once more. Anything that fails after the start is the test's.
"""
from __future__ import annotations

import contextlib

START_ATTEMPTS = 2


@contextlib.contextmanager
def local_cluster():
    """``(cluster, client)`` of a fresh ``LocalCluster``; both closed on leaving."""
    from distributed import Client, LocalCluster
    for attempt in range(1, START_ATTEMPTS + 1):
        stack = contextlib.ExitStack()
        try:
            cluster = stack.enter_context(LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"))
            client = stack.enter_context(Client(cluster))
        except (AssertionError, OSError, TimeoutError):
            stack.close()
            if attempt == START_ATTEMPTS:
                raise
            continue
        with stack:
            yield cluster, client
        return
