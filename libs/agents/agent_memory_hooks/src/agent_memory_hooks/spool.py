"""The local spool: events the gateway did not take yet, kept on disk until it does.

Layout under ``$AGENT_MEMORY_HOME/spool``:

- ``pending.jsonl``: one event per line. Hooks append under an exclusive ``flock`` and
  ``fsync`` before they exit, so an event the hook reported as spooled survives a power cut.
- ``inflight.jsonl``: what a flusher claimed (``pending.jsonl`` renamed in one step). Only the
  holder of ``flush.lock`` reads or rewrites it; a flusher that died leaves it behind and the
  next one finishes the job.
- ``rejected.jsonl``: events the gateway refused for good (400/413/422), kept for a human.

Re-sending is harmless (every event carries its id and the gateway de-duplicates), so the
spool never needs to know whether a timed-out post was in fact stored: it simply tries again.
An appender re-checks, after taking the lock, that ``pending.jsonl`` is still the file it
opened, so a line is never written into a file a flusher has just claimed and read.
"""

from __future__ import annotations

import fcntl
import os
import time

from agent_memory_hooks import lite
from agent_memory_hooks.post import OK, REJECTED, PostResult

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    PostFn = Callable[[list[dict[str, Any]], float], PostResult]

BATCH_EVENTS = 200
BATCH_BYTES = 4 * 1024 * 1024


class FlushReport:
    def __init__(self) -> None:
        self.sent = 0
        self.rejected = 0
        self.remaining = 0
        self.busy = False  # another process was flushing
        self.last_error: str | None = None


class Spool:
    def __init__(self, directory: str) -> None:
        self.dir = directory
        self.pending = os.path.join(directory, "pending.jsonl")
        self.inflight = os.path.join(directory, "inflight.jsonl")
        self.rejected = os.path.join(directory, "rejected.jsonl")
        self.lock_path = os.path.join(directory, "flush.lock")

    # -- writing ------------------------------------------------------------------------------

    def append(self, events: list[dict[str, Any]]) -> None:
        if not events:
            return
        data = "".join(_line(e) for e in events).encode()
        os.makedirs(self.dir, exist_ok=True)
        while True:
            fd = os.open(self.pending, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                if not _same_file(fd, self.pending):
                    continue  # a flusher renamed it away while we waited: use the new one
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    # a writer was killed mid-line: end that line, so ours stay whole
                    data = b"\n" + data
                _write_all(fd, data)
                os.fsync(fd)
                return
            finally:
                os.close(fd)

    # -- reading ------------------------------------------------------------------------------

    def waiting(self) -> bool:
        """Cheap check (two ``stat`` calls) for whether anything is spooled."""
        return _size(self.pending) > 0 or _size(self.inflight) > 0

    def count(self) -> int:
        return sum(_count_lines(p) for p in (self.pending, self.inflight))

    def rejected_count(self) -> int:
        return _count_lines(self.rejected)

    # -- flushing -----------------------------------------------------------------------------

    def flush(self, post: PostFn, deadline: float) -> FlushReport:
        """Send spooled events in batches until done, the gateway fails, or ``deadline``."""
        report = FlushReport()
        if not self.waiting():
            return report
        os.makedirs(self.dir, exist_ok=True)
        lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                report.busy = True
                report.remaining = self.count()
                return report
            while time.monotonic() < deadline:
                if _size(self.inflight) == 0 and not self._claim():
                    break
                if not self._send_inflight(post, deadline, report):
                    break
            report.remaining = self.count()
            return report
        finally:
            os.close(lock_fd)

    def _claim(self) -> bool:
        """Move ``pending.jsonl`` to ``inflight.jsonl``; False when there is nothing to claim."""
        try:
            fd = os.open(self.pending, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_size == 0 or not _same_file(fd, self.pending):
                return False
            os.replace(self.pending, self.inflight)
            _fsync_dir(self.dir)
            return True
        finally:
            os.close(fd)

    def _send_inflight(self, post: PostFn, deadline: float, report: FlushReport) -> bool:
        """Send ``inflight.jsonl``; True when it was emptied (so the caller may claim more)."""
        events: list[dict[str, Any]] = []
        broken: list[str] = []
        with open(self.inflight, encoding="utf-8", errors="replace") as f:
            for raw in f:
                if not raw.strip():
                    continue
                try:
                    item = lite.loads(raw)
                except ValueError:
                    broken.append(raw if raw.endswith("\n") else raw + "\n")
                    continue
                if isinstance(item, dict):
                    events.append(item)
        if broken:
            self._reject_lines(broken)
            report.rejected += len(broken)
        done = 0
        refused: list[dict[str, Any]] = []
        while done < len(events) and time.monotonic() < deadline:
            batch = _batch(events, done)
            result = post(batch, deadline)
            if result.outcome == OK:
                done += len(batch)
                report.sent += len(batch)
                continue
            report.last_error = (
                f"HTTP {result.status}: {result.detail}" if result.status else result.detail
            )
            if result.outcome != REJECTED:
                break
            # One bad event must not hold the others hostage: find it by sending one at a time.
            stuck = False
            for event in batch:
                single = post([event], deadline)
                if single.outcome == OK:
                    report.sent += 1
                elif single.outcome == REJECTED:
                    refused.append({**event, "_rejected": f"{single.status}: {single.detail}"})
                    report.rejected += 1
                else:
                    stuck = True
                    break
                done += 1
            if stuck:
                break
        if refused:
            self._reject_lines([_line(e) for e in refused])
        rest = events[done:]
        if rest:
            _rewrite(self.inflight, "".join(_line(e) for e in rest))
            return False
        os.unlink(self.inflight)
        _fsync_dir(self.dir)
        return True

    def _reject_lines(self, lines: list[str]) -> None:
        fd = os.open(self.rejected, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            _write_all(fd, "".join(lines).encode())
            os.fsync(fd)
        finally:
            os.close(fd)


def _line(event: dict[str, Any]) -> str:
    return lite.dumps(event) + "\n"


def _batch(events: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    batch: list[dict[str, Any]] = []
    size = 0
    for event in events[start : start + BATCH_EVENTS]:
        size += len(_line(event))
        if batch and size > BATCH_BYTES:
            break
        batch.append(event)
    return batch


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _same_file(fd: int, path: str) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def _count_lines(path: str) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for line in f if line.strip())
    except FileNotFoundError:
        return 0


def _rewrite(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(os.path.dirname(path))


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
