"""TEMPORARY STUB (lead's smoke test) - helper-1 replaces this file with the real detector."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_AWS = re.compile(r"AKIA[0-9A-Z]{16}")


class Redactor:
    def __init__(
        self, extra_patterns: Mapping[str, str] | None = None, disabled: Iterable[str] = ()
    ) -> None:
        pass

    def redact(self, text: str) -> tuple[str, dict[str, int]]:
        new, n = _AWS.subn("[REDACTED:aws_access_key]", text)
        return new, ({"aws_access_key": n} if n else {})

    def redact_value(self, value: object) -> tuple[object, dict[str, int]]:
        return value, {}

    @property
    def kinds(self) -> list[str]:
        return ["aws_access_key"]
