"""What a tool use is stored as: what a reader needs, not everything the tool returned.

The rule (documented in ``docs/integrations/README.md``), the same for every runtime:

- **shell** (``Bash``, ``run_shell_command``, ``bash``, ``shell``...): the call is ``$ command``
  (and its description); the result is the command again, ``exit N`` (or ``failed`` /
  ``interrupted`` when the runtime gives no status), then the output cut to its first
  ``HEAD_LINES`` and last ``TAIL_LINES`` lines, at most ``MAX_OUTPUT_CHARS`` characters, with a
  ``[... k lines omitted ...]`` marker where lines were left out.
- **edit** (``Edit``, ``MultiEdit``, ``replace``, ``edit``, ``str_replace``...): the call is the
  file path and a compact unified diff of ``old_string`` -> ``new_string`` (common leading and
  trailing lines dropped, at most ``MAX_DIFF_CHARS``); the result is one line (``applied``, or the
  error). Never the original file, which some runtimes return in full.
- **write** (``Write``, ``write_file``, ``create``): the path, the line count and the head of
  the content (``WRITE_HEAD_LINES`` lines).
- **read** (``Read``, ``read_file``, ``view``): the path and the head of what was read
  (``READ_HEAD_LINES`` lines, ``READ_MAX_CHARS`` characters).
- **anything else**: the tool name and its arguments (``INPUT_CHARS`` at most); the output cut
  like a shell command's.

The tool's name and a summary of its input (every argument, long strings clipped) stay in the
events' ``metadata``, with the exit code and how much was left out. Standard library only, and
nothing imported at module level beyond it: this runs in the hook.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs import time on the hook path; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

HEAD_LINES = 40
TAIL_LINES = 40
MAX_OUTPUT_CHARS = 8_000
MAX_DIFF_CHARS = 6_000
DIFF_CONTEXT = 2
READ_HEAD_LINES = 20
READ_MAX_CHARS = 2_000
WRITE_HEAD_LINES = 30
INPUT_CHARS = 2_000
SUMMARY_VALUE_CHARS = 200
OMITTED_LINES = "[... {n} lines omitted ...]"
OMITTED_CHARS = "[... {n} characters omitted ...]"

SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "run_shell_command",
        "exec_command",
        "local_shell",
        "shell_command",
        "powershell",
        "run_in_terminal",
    }
)
EDIT_TOOLS = frozenset(
    {"edit", "multiedit", "replace", "str_replace", "edit_file", "str_replace_editor"}
)
WRITE_TOOLS = frozenset({"write", "write_file", "create", "create_file"})
READ_TOOLS = frozenset({"read", "read_file", "view", "read_many_files"})

_PATH_KEYS = ("file_path", "filePath", "path", "absolute_path", "notebook_path")
_OLD_KEYS = ("old_string", "oldString", "old_str")
_NEW_KEYS = ("new_string", "newString", "new_str")
_CONTENT_KEYS = ("content", "file_text", "fileText")


def kind_of(tool_name: str) -> str:
    name = tool_name.lower().rsplit("__", 1)[-1]  # MCP tools: mcp__server__tool
    if name in SHELL_TOOLS:
        return "shell"
    if name in EDIT_TOOLS:
        return "edit"
    if name in WRITE_TOOLS:
        return "write"
    if name in READ_TOOLS:
        return "read"
    return "other"


def head_tail(
    text: str,
    head: int = HEAD_LINES,
    tail: int = TAIL_LINES,
    max_chars: int = MAX_OUTPUT_CHARS,
) -> tuple[str, int]:
    """``text`` cut to its first ``head`` and last ``tail`` lines and ``max_chars`` characters.

    Returns the text and how many lines were left out (a character cut inside long lines is
    marked too, but not counted as lines).
    """
    lines = text.splitlines()
    omitted = 0
    if len(lines) > head + tail:
        omitted = len(lines) - head - tail
        kept = [*lines[:head], OMITTED_LINES.format(n=omitted), *(lines[-tail:] if tail else [])]
        text = "\n".join(kept)
    else:
        text = "\n".join(lines)
    if len(text) > max_chars:
        cut = len(text) - max_chars
        if tail:
            half = max_chars // 2
            marker = OMITTED_CHARS.format(n=cut)
            text = f"{text[:half]}\n{marker}\n{text[-(max_chars - half) :]}"
        else:
            text = text[:max_chars] + "\n" + OMITTED_CHARS.format(n=cut)
    return text, omitted


def _field(data: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(data, dict):
        return None
    for key in keys:
        value = data.get(key)
        if value is not None:
            return value
    return None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def path_of(tool_input: Any) -> str:
    return _str(_field(tool_input, _PATH_KEYS))


def command_of(tool_input: Any) -> str:
    if isinstance(tool_input, str):
        return tool_input
    command = _field(tool_input, ("command", "cmd", "commandLine"))
    if isinstance(command, list):  # Codex: ["bash", "-lc", "pytest -q"]
        parts = [str(p) for p in command]
        if len(parts) == 3 and parts[1] in ("-c", "-lc"):
            return parts[2]
        return " ".join(parts)
    return _str(command)


def summary(tool_input: Any) -> Any:
    """The tool's arguments for ``metadata``: every key, long strings clipped."""
    if isinstance(tool_input, str):
        return _clip(tool_input, SUMMARY_VALUE_CHARS)
    if isinstance(tool_input, dict):
        return {str(k): summary(v) for k, v in list(tool_input.items())[:30]}
    if isinstance(tool_input, list):
        items = [summary(v) for v in tool_input[:10]]
        if len(tool_input) > 10:
            items.append(f"... {len(tool_input) - 10} more")
        return items
    return tool_input


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more]"


def diff(old: str, new: str, context: int = DIFF_CONTEXT) -> tuple[str, int, int]:
    """A one-hunk unified diff of ``old`` -> ``new`` (a replaced snippet, not a whole file).

    Lines both sides share at the start and the end are dropped but for ``context`` of them, so
    a one-line change in a 200-line snippet is a few lines. Returns the diff, lines added and
    lines removed. No ``difflib``: it imports ``re`` and more, and one hunk is all an edit is.
    """
    a = old.splitlines()
    b = new.splitlines()
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and end < len(b) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    lead = a[max(0, start - context) : start]
    trail = a[len(a) - end : len(a) - end + min(context, end)]
    removed = a[start : len(a) - end]
    added = b[start : len(b) - end]
    first = start - len(lead) + 1
    header = (
        f"@@ -{first},{len(lead) + len(removed) + len(trail)} "
        f"+{first},{len(lead) + len(added) + len(trail)} @@"
    )
    body = [
        header,
        *(" " + line for line in lead),
        *("-" + line for line in removed),
        *("+" + line for line in added),
        *(" " + line for line in trail),
    ]
    text, _ = head_tail("\n".join(body), HEAD_LINES, TAIL_LINES, MAX_DIFF_CHARS)
    return text, len(added), len(removed)


def _edits(tool_input: Any) -> list[tuple[str, str]]:
    if not isinstance(tool_input, dict):
        return []
    many = tool_input.get("edits")
    if isinstance(many, list):  # Claude Code MultiEdit
        return [
            (_str(_field(e, _OLD_KEYS)), _str(_field(e, _NEW_KEYS)))
            for e in many
            if isinstance(e, dict)
        ]
    old, new = _field(tool_input, _OLD_KEYS), _field(tool_input, _NEW_KEYS)
    if isinstance(old, str) or isinstance(new, str):
        return [(_str(old), _str(new))]
    return []


def exit_code_in(text: str) -> int | None:
    """The exit status a runtime wrote into its error text (``Exit code 2``, ``Exit Code: 1``)."""
    for line in text.splitlines()[:3] + text.splitlines()[-12:]:
        low = line.strip().lower()
        for prefix in ("error: exit code", "exit code:", "exit code", "exit status"):
            if low.startswith(prefix):
                digits = low[len(prefix) :].strip().split(" ")[0].rstrip(".,;)")
                if digits.lstrip("-").isdigit():
                    return int(digits)
    return None


def call_text(tool_name: str, tool_input: Any) -> tuple[str, dict[str, Any]]:
    """The tool_call event's text, and what its metadata should say beyond the name."""
    kind = kind_of(tool_name)
    meta: dict[str, Any] = {"tool_kind": kind}
    if kind == "shell":
        command = command_of(tool_input)
        description = _str(_field(tool_input, ("description",)))
        text = "$ " + _clip(command, INPUT_CHARS)
        return (text + (f"  # {description}" if description else "")), meta
    path = path_of(tool_input)
    if path:
        meta["file_path"] = path
    if kind == "edit":
        edits = _edits(tool_input)
        if edits:
            hunks = []
            added = removed = 0
            for old, new in edits:
                hunk, plus, minus = diff(old, new)
                hunks.append(hunk)
                added += plus
                removed += minus
            meta["lines_added"], meta["lines_removed"] = added, removed
            body, _ = head_tail("\n".join(hunks), HEAD_LINES, TAIL_LINES, MAX_DIFF_CHARS)
            return f"{tool_name} {path}\n{body}".strip(), meta
    if kind == "write":
        content = _str(_field(tool_input, _CONTENT_KEYS))
        count = len(content.splitlines())
        meta["lines"] = count
        head, _ = head_tail(content, WRITE_HEAD_LINES, 0, MAX_OUTPUT_CHARS // 2)
        return f"{tool_name} {path} ({count} lines)\n{head}".strip(), meta
    if kind == "read" and path:
        extra = [
            f"{k}={tool_input[k]}"
            for k in ("offset", "limit")
            if isinstance(tool_input, dict) and tool_input.get(k) is not None
        ]
        return f"{tool_name} {path}" + (f" ({', '.join(extra)})" if extra else ""), meta
    from agent_memory_hooks import lite  # already loaded on the hook path

    arguments = tool_input if isinstance(tool_input, str) else lite.dumps(tool_input or {})
    return f"{tool_name} {_clip(arguments, INPUT_CHARS)}".rstrip(), meta


def result_text(
    tool_name: str,
    tool_input: Any,
    output: str,
    *,
    failed: bool,
    exit_code: int | None = None,
    interrupted: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The tool_result event's text, and what its metadata should say about the output."""
    kind = kind_of(tool_name)
    meta: dict[str, Any] = {"output_chars": len(output)} if output else {}
    if exit_code is None and kind == "shell":
        exit_code = exit_code_in(output)
    if exit_code is not None:
        meta["exit_code"] = exit_code
    if kind == "shell":
        command = command_of(tool_input)
        if exit_code is not None:
            status = f"exit {exit_code}"
        else:
            status = "interrupted" if interrupted else ("failed" if failed else "")
        first, _, rest = output.partition("\n")
        if exit_code is not None and exit_code_in(first) == exit_code:
            output = rest  # the runtime's own "Exit code N" line: said once, above
        body, omitted = head_tail(output)
        parts = [("$ " + _clip(command, INPUT_CHARS)) if command else "", status, body]
        text = "\n".join(p for p in parts if p)
    elif kind in ("edit", "write") and not failed:
        path = path_of(tool_input)
        text, omitted = f"{tool_name} {path}: applied".replace("  ", " "), 0
    elif kind == "read" and not failed:
        path = path_of(tool_input)
        body, omitted = head_tail(output, READ_HEAD_LINES, 0, READ_MAX_CHARS)
        omitted = max(omitted, len(output.splitlines()) - READ_HEAD_LINES)
        text = f"{tool_name} {path}\n{body}".strip()
    else:
        body, omitted = head_tail(output)
        text = body
        if failed and kind != "other":
            path = path_of(tool_input)
            text = f"{tool_name} {path} failed: {body}".replace("  ", " ")
    if omitted > 0:
        meta["omitted_lines"] = omitted
    return text, meta
