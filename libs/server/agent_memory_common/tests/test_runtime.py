"""Process tuning: background services lower their own CPU priority, every thread included, and
their session's autogroup when they lead one."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from agent_memory_common.core.runtime import autogroup_nice, autogroup_scheduling

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux niceness")

SCRIPT = textwrap.dedent(
    """
    import os, threading
    from agent_memory_common.core.runtime import lower_priority

    started = threading.Event()
    stop = threading.Event()
    def early():  # a thread a library started before the service lowered its priority
        started.set()
        stop.wait()
    t = threading.Thread(target=early, daemon=True)
    t.start()
    started.wait()
    result = lower_priority(int(os.environ["NICE"]))
    late = {}
    def later():
        late["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    t2 = threading.Thread(target=later)
    t2.start()
    t2.join()
    niceness = []
    for tid in (threading.get_native_id(), t.native_id):
        stat = open(f"/proc/self/task/{tid}/stat").read()
        niceness.append(int(stat[stat.rfind(")") + 2 :].split()[16]))
    stop.set()
    t.join()
    print(result, late["nice"], *niceness)
    """
)


def _python(script: str, nice: int, *, own_session: bool = False) -> str:
    """What ``script`` prints, run in a fresh interpreter told to lower itself to ``nice``."""
    return subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "NICE": str(nice)},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        start_new_session=own_session,
    ).stdout.strip()


def _run(nice: int) -> list[int]:
    return [int(v) for v in _python(SCRIPT, nice).split()]


@linux_only
def test_every_thread_and_later_ones_run_at_the_lower_priority() -> None:
    base = os.getpriority(os.PRIO_PROCESS, 0)
    target = min(base + 5, 19)
    result, later, *threads = _run(target)
    assert result == target
    assert later == target
    assert threads == [target, target]  # the main thread and the one started before


@linux_only
def test_zero_or_a_priority_already_lower_is_left_alone() -> None:
    base = os.getpriority(os.PRIO_PROCESS, 0)
    result, later, *threads = _run(0)
    assert (result, later, threads) == (base, base, [base, base])
    if base > 0:  # never raised back: a lower number needs privileges anyway
        result, _, *threads = _run(base - 1)
        assert result == base


AUTOGROUP = textwrap.dedent(
    """
    import os
    from agent_memory_common.core.runtime import autogroup_nice, lower_priority
    lower_priority(int(os.environ["NICE"]))
    print(autogroup_nice())
    """
)


def _autogroup_after_lowering(nice: int, *, own_session: bool) -> int | None:
    out = _python(AUTOGROUP, nice, own_session=own_session)
    return None if out == "None" else int(out)


@linux_only
def test_a_session_leader_also_lowers_its_autogroup_and_a_shell_child_does_not() -> None:
    # As agent-memory up starts a service: in a session of its own, whose autogroup weighs
    # against the other sessions' (thread niceness alone would not count there).
    if not autogroup_scheduling():  # nothing to lower, and no failure for trying
        assert _autogroup_after_lowering(5, own_session=True) is None
        return
    # None when this test's session has no autogroup of its own: a process descended from init
    # without a setsid (as in a CI container, where /proc/self/autogroup is empty) shares the
    # root group, which weighs as niceness 0. A new session gets its own autogroup either way.
    base = autogroup_nice()
    target = min((base or 0) + 5, 19)
    assert _autogroup_after_lowering(target, own_session=True) == target
    # the test's own session is left as it was
    assert _autogroup_after_lowering(target, own_session=False) == base
    assert autogroup_nice() == base


CAP_SYS_ADMIN = 21
PR_CAPBSET_DROP = 24
# resolved before any fork: the child between fork and exec should only make the call
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def _without_sys_admin() -> None:
    """Run in the child before exec: root keeps only the capabilities in its bounding set, so
    the service runs without CAP_SYS_ADMIN, as it does for an ordinary user."""
    if _prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN)")


@linux_only
def test_services_started_together_each_lower_their_autogroup() -> None:
    # The kernel takes one unprivileged autogroup change per 100 ms machine-wide and refuses the
    # rest with EAGAIN; the supervisor starts every service at once, and each must get through.
    children = [
        subprocess.Popen(
            [sys.executable, "-c", AUTOGROUP],
            env={**os.environ, "NICE": "5"},
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=_without_sys_admin if os.geteuid() == 0 else None,
        )
        for _ in range(4)
    ]
    printed = [child.communicate(timeout=60)[0].strip() for child in children]
    assert printed == ["5" if autogroup_scheduling() else "None"] * 4


BLAS_SCRIPT = textwrap.dedent(
    """
    import json
    import numpy  # loads OpenBLAS, as the query and topics services do
    from threadpoolctl import threadpool_info, threadpool_limits
    from agent_memory_common.core.runtime import one_blas_thread

    threadpool_limits(limits=2, user_api="blas")  # as on a machine of two cores or more
    before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    did = one_blas_thread()
    after = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    print(json.dumps({"did": did, "before": before, "after": after}))
    """
)


def _blas(**env: str) -> dict[str, Any]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    }
    out = subprocess.run(
        [sys.executable, "-c", BLAS_SCRIPT],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def test_blas_runs_on_one_thread_unless_the_operator_says_otherwise() -> None:
    """OpenBLAS's idle threads spin: a service keeps one (see ``one_blas_thread``)."""
    default = _blas()
    assert default["did"] is True
    assert default["before"] and set(default["before"]) == {2}
    assert set(default["after"]) == {1}
    chosen = _blas(OPENBLAS_NUM_THREADS="2")
    assert chosen["did"] is False
    assert set(chosen["after"]) == {2}
