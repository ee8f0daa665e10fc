"""Process-level tuning every service shares: the event loop, the CPU priority of background
work, BLAS threads, and the garbage collector after startup."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import os
import random
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any


def run(main: Coroutine[Any, Any, None]) -> None:
    """Run a service's main coroutine on uvloop: measured 10-15% less CPU per message than
    asyncio's default loop in the recorder, and the HTTP services already run on it through
    uvicorn."""
    try:
        import uvloop
    except ImportError:  # platforms without uvloop (Windows) use the default loop
        asyncio.run(main)
        return
    uvloop.run(main)


BLAS_THREAD_SETTINGS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> bool:
    """Let the BLAS libraries loaded so far (numpy's OpenBLAS) use one thread; returns whether
    it did. Called at startup by the services that load numpy; an operator who sets
    ``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``) keeps that count.

    OpenBLAS starts a thread per core, and a thread that has worked keeps spinning, waiting
    for more. The products here are small (a question against topic centroids, hdbscan's
    distances): a second thread gains nothing, and the spinning one competes for the cores
    with the work itself. In the query service on the 1,000,000-event bench-scale store
    (2 cores) it took 9.3 ms of CPU per search, a quarter of the process's (one OpenBLAS
    thread: 40 -> 35 ms of CPU per search)."""
    if any(os.environ.get(name) for name in BLAS_THREAD_SETTINGS):
        return False
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    return True


def lower_priority(nice: int) -> int:
    """Run this whole process at CPU niceness ``nice`` or lower priority; returns the result.

    Background consumers (recorder, indexers) call this so that, on a machine short of cores,
    the scheduler lets capture (the gateway) and queries run first; they still get every idle
    cycle. Never raises priority (that needs privileges). On Linux niceness belongs to each
    thread, so every thread that already exists is lowered too (a library may have started
    some at import); threads started later inherit it.

    With autogroup scheduling (the Linux default on desktops and many servers) the kernel
    first shares the CPU between sessions, and a thread's niceness only counts inside its own
    session. ``agent-memory up`` starts each service in a session of its own, so a service that
    leads its session also lowers the session's autogroup niceness; one started from a shell
    (sharing the shell's session) leaves the session alone.
    """
    if nice <= 0 or not hasattr(os, "setpriority"):
        return os.getpriority(os.PRIO_PROCESS, 0) if hasattr(os, "getpriority") else 0
    tasks = Path("/proc/self/task")
    tids = [int(t.name) for t in tasks.iterdir()] if tasks.is_dir() else [0]
    for tid in tids:
        with contextlib.suppress(OSError):  # a thread that just ended
            if os.getpriority(os.PRIO_PROCESS, tid) < nice:
                os.setpriority(os.PRIO_PROCESS, tid, nice)
    if os.getsid(0) == os.getpid():
        _lower_autogroup(nice)
    return os.getpriority(os.PRIO_PROCESS, 0)


def autogroup_scheduling() -> bool:
    """Whether the kernel shares the CPU between sessions first (each session that a setsid
    starts gets an autogroup of its own)."""
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return False


def autogroup_nice() -> int | None:
    """This session's autogroup niceness, or None without one: autogroup scheduling is off, or
    the session never got an autogroup (init's session, as for processes a container starts
    without a setsid: the kernel then leaves /proc/self/autogroup empty)."""
    if not autogroup_scheduling():
        return None
    try:
        # "/autogroup-42 nice 0"
        return int(Path("/proc/self/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


AUTOGROUP_RETRY_S = 3.0


def _lower_autogroup(nice: int) -> None:
    """Without CAP_SYS_ADMIN the kernel accepts one autogroup niceness change per 100 ms on the
    whole machine and answers EAGAIN to the rest, so of the services ``agent-memory up`` starts
    together only the first would get through: the others retry at random intervals until they
    do (about a second for all of them) or ``AUTOGROUP_RETRY_S`` has passed."""
    current = autogroup_nice()
    if current is None or current >= nice:
        return
    deadline = time.monotonic() + AUTOGROUP_RETRY_S
    while True:
        try:
            Path("/proc/self/autogroup").write_text(str(nice))
            return
        except OSError as exc:
            if exc.errno != errno.EAGAIN or time.monotonic() >= deadline:
                return  # not allowed here, or too busy: the thread niceness still holds
        time.sleep(random.uniform(0.02, 0.12))


def freeze_startup_objects() -> None:
    """Move everything allocated during startup (modules, models, settings) out of the
    collector's reach. A full collection of a service otherwise walks every one of those
    objects again: 28-38 ms measured in the recorder (0.1 ms once frozen), on a core that
    capture may need. Call once the service is set up, before it takes work."""
    gc.collect()
    gc.freeze()
