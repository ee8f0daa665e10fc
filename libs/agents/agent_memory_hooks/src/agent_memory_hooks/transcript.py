"""Read a session's JSONL transcript incrementally: each call sees only what was appended.

The byte offset reached is remembered per (runtime, session) under
``$AGENT_MEMORY_HOME/hooks/transcripts/``, and moved forward only after the events read from it
were posted or spooled (``commit``), so a crash in between means the lines are read again, and
their ids (from the transcript's own line ids) make that harmless. Only whole lines are taken:
a line the agent is still writing is left for the next call. Two hooks of one session (tool
hooks may run in parallel) take turns on an ``flock`` of the state file; one that cannot get it
within a few milliseconds skips the transcript this time rather than keep the agent waiting.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time

from agent_memory_hooks import lite
from agent_memory_hooks.digest import sha256_hex

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES_PER_CALL = 512 * 1024
LOCK_WAIT_S = 0.02
MAX_STATE_BYTES = 1024 * 1024


class TranscriptCursor:
    """Holds the session's state lock from ``open`` until ``close``."""

    def __init__(self, state_dir: str, runtime: str, session_id: str) -> None:
        digest = sha256_hex(f"{runtime}\x1f{session_id}")[:32]
        self.dir = os.path.join(state_dir, "transcripts")
        self.path = os.path.join(self.dir, f"{runtime}-{digest}.json")
        self._fd: int | None = None
        self.transcript: str | None = None
        self.offset = 0
        self._new_offset: int | None = None
        # what the runtime's reader keeps between reads (pending tool calls, latest time...)
        self.state: dict[str, Any] = {}

    def open(self, deadline: float) -> bool:
        os.makedirs(self.dir, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        wait_until = min(deadline, time.monotonic() + LOCK_WAIT_S)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= wait_until:
                    os.close(fd)
                    return False
                time.sleep(0.002)
        self._fd = fd
        raw = os.read(fd, MAX_STATE_BYTES)
        try:
            state = lite.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
        except ValueError:
            state = {}
        if isinstance(state, dict):
            path = state.get("transcript")
            self.transcript = path if isinstance(path, str) else None
            offset = state.get("offset")
            self.offset = offset if isinstance(offset, int) and offset >= 0 else 0
            extra = state.get("state")
            self.state = extra if isinstance(extra, dict) else {}
        return True

    def read(self, transcript: str | None) -> list[tuple[dict[str, Any], int]]:
        """New whole lines of ``transcript`` (or of the remembered one), parsed, with offsets."""
        path = transcript or self.transcript
        if not path:
            return []
        start = self.offset if path == self.transcript else 0
        self.transcript = path
        try:
            size = os.path.getsize(path)
        except OSError:
            return []
        if start == 0 or size < start:  # new, rewritten or truncated: start over; ids keep
            start = 0  # repeats harmless
            self.state = {}
        if size == start:
            self._new_offset = start
            return []
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read(min(size - start, MAX_BYTES_PER_CALL))
        end = data.rfind(b"\n")
        if end < 0:
            if len(data) == MAX_BYTES_PER_CALL:  # one giant line: skip it rather than stall
                self._new_offset = start + len(data)
            return []
        lines: list[tuple[dict[str, Any], int]] = []
        pos = start
        for raw in data[: end + 1].split(b"\n")[:-1]:
            line_start = pos
            pos += len(raw) + 1
            if not raw.strip():
                continue
            try:
                item = lite.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                continue
            if isinstance(item, dict):
                lines.append((item, line_start))
        self._new_offset = start + end + 1
        return lines

    def commit(self) -> None:
        """Remember how far we read; call once the events are posted or spooled."""
        if self._fd is None or self._new_offset is None:
            return
        state = lite.dumps(
            {"transcript": self.transcript, "offset": self._new_offset, "state": self.state}
        ).encode()
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.ftruncate(self._fd, 0)
        os.write(self._fd, state)
        self.offset = self._new_offset

    @property
    def position(self) -> int:
        """How far the transcript has been read, in bytes (after ``read``)."""
        return self._new_offset if self._new_offset is not None else self.offset

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
