"""One simulated Claude Code session: its transcript lines and the events our hook makes of them.

Every event is made by the product's own Claude Code hook code (``normalize`` for the hook
payloads, ``transcript_events`` for the assistant's text), so the corpus has exactly the shape
that capture produces today: user prompts from ``UserPromptSubmit``, assistant prose from the
transcript, a tool use as a ``tool_call`` event and a ``tool_result`` event from
``PostToolUse`` (``PostToolUseFailure`` with ``Exit code N`` for a failed command), the
session's start and end. The hook's ids are kept (hashes of the session and the prompt id,
transcript line uuid or tool-use id); only the clock is simulated.
"""

from __future__ import annotations

import difflib
import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from agent_memory_hooks import claude_code
from agent_memory_hooks.events import HookContext

MODEL = "claude-sonnet-4-5"
CLI_VERSION = "2.0.14"


def _iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def _ms(ts: datetime) -> int:
    return int(ts.timestamp() * 1000)


@dataclass
class SessionLog:
    project_id: str
    cwd: str
    session_id: str
    title: str
    start: datetime
    rng: random.Random
    branch: str = "main"
    now: datetime = field(init=False)
    events: list[dict[str, Any]] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    tags: dict[str, list[str]] = field(default_factory=dict)  # fact key -> event ids
    _parent: str | None = None

    def __post_init__(self) -> None:
        self.now = self.start
        self._emit_hook("SessionStart", {"source": "startup", "model": MODEL})

    # -- plumbing ----------------------------------------------------------------------------

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _tick(self, low: float, high: float) -> None:
        self.now += timedelta(seconds=self.rng.uniform(low, high))

    def _ctx(self) -> HookContext:
        project = self.project_id
        return HookContext(
            runtime="claude-code", now_ms=_ms(self.now), project_of=lambda _cwd: project
        )

    def _payload(self, name: str, extra: dict[str, Any]) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": f"/home/dev/.claude/projects/-home-dev-{self.project_id}/"
            f"{self.session_id}.jsonl",
            "cwd": self.cwd,
            "permission_mode": "default",
            "hook_event_name": name,
            **extra,
        }

    def _emit_hook(self, name: str, extra: dict[str, Any]) -> list[dict[str, Any]]:
        made = claude_code.normalize(self._payload(name, extra), self._ctx())
        self.events.extend(made)
        return made

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        line = {
            "parentUuid": self._parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": CLI_VERSION,
            "gitBranch": self.branch,
            "type": kind,
            "message": message,
            **extra,
            "uuid": self._uuid(),
            "timestamp": _iso(self.now),
        }
        self._parent = line["uuid"]
        self.transcript.append(line)
        return line

    def _tag(self, tags: tuple[str, ...], events: list[dict[str, Any]]) -> None:
        for tag in tags:
            self.tags.setdefault(tag, []).extend(e["event_id"] for e in events)

    # -- what happens in a session --------------------------------------------------------------

    def user(self, text: str, *tags: str) -> None:
        self._tick(20, 240)
        self._line("user", {"role": "user", "content": text})
        made = self._emit_hook("UserPromptSubmit", {"prompt": text, "prompt_id": self._uuid()})
        self._tag(tags, made)

    def say(self, text: str, *tags: str) -> None:
        self._tick(4, 40)
        line = self._line(
            "assistant",
            {
                "id": f"msg_{self.rng.getrandbits(80):020x}",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": self.rng.randint(800, 40000), "output_tokens": 180},
            },
            requestId=f"req_{self.rng.getrandbits(64):016x}",
        )
        made = claude_code.transcript_events([(line, 0)], self._payload("Stop", {}), self._ctx())
        self.events.extend(made)
        self._tag(tags, made)

    def _tool(
        self,
        name: str,
        tool_input: dict[str, Any],
        response: Any,
        result_text: str,
        failed: bool = False,
    ) -> list[dict[str, Any]]:
        self._tick(3, 25)
        use_id = f"toolu_01{self.rng.getrandbits(96):024x}"
        self._line(
            "assistant",
            {
                "id": f"msg_{self.rng.getrandbits(80):020x}",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [{"type": "tool_use", "id": use_id, "name": name, "input": tool_input}],
                "stop_reason": "tool_use",
            },
        )
        self._tick(1, 30)
        self._line(
            "user",
            {
                "role": "user",
                "content": [
                    {
                        "tool_use_id": use_id,
                        "type": "tool_result",
                        "content": result_text,
                        "is_error": failed,
                    }
                ],
            },
            toolUseResult=response,
        )
        extra: dict[str, Any] = {"tool_name": name, "tool_input": tool_input, "tool_use_id": use_id}
        if failed:
            return self._emit_hook("PostToolUseFailure", {**extra, "error": result_text})
        return self._emit_hook("PostToolUse", {**extra, "tool_response": response})

    def bash(
        self,
        command: str,
        output: str,
        code: int = 0,
        description: str = "",
        tags: tuple[str, ...] = (),
    ) -> None:
        """A command and its output; ``tags``: facts it answers (its call and its result)."""
        tool_input = {"command": command, "description": description or command.split()[0]}
        if code:
            text = f"Exit code {code}\n{output}"
            made = self._tool("Bash", tool_input, text, text, True)
        else:
            response = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
            made = self._tool("Bash", tool_input, response, output)
        self._tag(tags, made)

    def read(self, path: str, content: str) -> None:
        lines = content.splitlines()
        response = {
            "type": "text",
            "file": {
                "filePath": f"{self.cwd}/{path}",
                "content": content,
                "numLines": len(lines),
                "startLine": 1,
                "totalLines": len(lines),
            },
        }
        shown = "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, 1))
        self._tool("Read", {"file_path": f"{self.cwd}/{path}"}, response, shown)

    def edit(self, path: str, old: str, new: str, tags: tuple[str, ...] = ()) -> None:
        """An edit of ``path``; ``tags``: facts it answers (its call and its result)."""
        full = f"{self.cwd}/{path}"
        diff = [
            line
            for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
            if not line.startswith(("---", "+++", "@@"))
        ]
        start = self.rng.randint(5, 120)
        response = {
            "filePath": full,
            "oldString": old,
            "newString": new,
            "originalFile": None,
            "structuredPatch": [
                {
                    "oldStart": start,
                    "oldLines": len(old.splitlines()),
                    "newStart": start,
                    "newLines": len(new.splitlines()),
                    "lines": diff,
                }
            ],
            "userModified": False,
            "replaceAll": False,
        }
        made = self._tool(
            "Edit",
            {"file_path": full, "old_string": old, "new_string": new},
            response,
            f"The file {full} has been updated. Here's the result of running `cat -n` on a "
            f"snippet of the edited file:\n"
            + "\n".join(f"{start + i:>6}\t{line}" for i, line in enumerate(new.splitlines())),
        )
        self._tag(tags, made)

    def end(self) -> None:
        self._tick(30, 300)
        self._emit_hook("SessionEnd", {"reason": "prompt_input_exit"})

    def transcript_jsonl(self) -> str:
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.transcript)
