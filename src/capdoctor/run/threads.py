"""Fan-out inside a check: run a few blocking calls at once, each in a daemon thread, under a time budget.

Why not `concurrent.futures.ThreadPoolExecutor`: its worker threads are joined when the interpreter exits,
so one call stuck where it cannot be interrupted (a `getaddrinfo` against a DNS server that never answers, a
server that drips its body) keeps the whole process alive long after the verdict is printed. Threads here are
daemons and nobody joins them past the budget: what did not finish in time is left behind and reported as
missing. A job's exception is re-raised in the caller (as `pool.map` would), never printed by the thread.

It must not be used for work that has to complete (writes): an abandoned job is never waited for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
V = TypeVar("V")


def run_parallel(jobs: Sequence[tuple[K, Callable[[], V]]], budget: float, name: str = "job") -> dict[K, V]:
    """Run every job in its own daemon thread; the results of those that finished within `budget` seconds.

    The first exception a finished job raised is re-raised once every job has finished or the budget is spent.
    """
    out: dict[K, V] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def wrap(key: K, fn: Callable[[], V]) -> None:
        try:
            value = fn()
        except BaseException as exc:  # handed to the caller, never printed by the thread
            with lock:
                errors.append(exc)
            return
        with lock:
            out[key] = value

    threads = [
        threading.Thread(target=wrap, args=(k, fn), daemon=True, name=f"{name}-{i}") for i, (k, fn) in enumerate(jobs)
    ]
    for t in threads:
        t.start()
    end = time.monotonic() + max(0.0, budget)
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    with lock:
        if errors:
            raise errors[0]
        return dict(out)


def map_parallel(fn: Callable[[T], V], items: Sequence[T], budget: float, default: V, name: str = "job") -> list[V]:
    """`fn` over `items` at once, in order; an item whose call did not finish within `budget` gets `default`."""
    done = run_parallel([(i, partial(fn, item)) for i, item in enumerate(items)], budget, name)
    return [done.get(i, default) for i in range(len(items))]
