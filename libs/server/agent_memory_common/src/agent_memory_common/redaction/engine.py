"""Secret redaction for ingested events, run before anything is published.

Raw events are kept append-only forever, so a secret that gets past this module can never be
taken back: every rule errs towards redacting. The output is a typed placeholder,
``[REDACTED:<kind>]``, so a later reader (human or agent) still knows *what* was there.

Why not a library: Yelp's ``detect-secrets`` 1.5 (the maintained Python option) was measured on
this gateway's workload and on the labelled corpus in the tests
(``tests/bench/bench_redaction.py``). Its ad-hoc ``scan_line`` API takes hundreds of ms per
100-event batch of ~300-byte texts (~21 ms with only its regex plugins), against a budget of
well under 1 ms for the batch. It also returns secret *values* per line, not spans, has no
rules for command lines, connection strings or unquoted config values, and its entropy plugins
flag git commit ids and digests: recall 0.55 and precision 0.64 on that corpus, against 1.0
and 1.0 here. So this is a compiled-regex detector whose rules follow the gitleaks and
detect-secrets rule sets (see ``docs/redaction.md`` for the list, the figures and the timing).

For read-side use, ``default_redactor()``, ``redact_text()`` and ``redact_json()`` share one
``Redactor`` with the built-in rules. This subpackage imports only the standard library.

How it is fast is told in ``prefilter``; the rules are in ``rules``, and the checks that
decide whether a value is a secret in ``values``, ``assignment`` and ``extractors``.

Overlaps: every rule sees the original text. Spans are resolved by rule priority (user patterns
first, then provider-specific rules, then the generic heuristics), so ``token: ghp_...`` is
reported as ``github_token`` rather than ``generic_secret``. A lower-priority span that sticks
out of a higher one is merged into it, never dropped, so no tail of a secret is left behind.

A ``Redactor`` is immutable once built, so one instance can be shared by every request and
thread.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Mapping
from typing import TypeVar, cast

from agent_memory_common.redaction.extractors import continued_end, group_or_whole
from agent_memory_common.redaction.prefilter import build_prefilter
from agent_memory_common.redaction.rules import (
    BUILTIN_KINDS,
    BUILTIN_RULES,
    KIND_NAME,
    SENSITIVE_KEY,
    Rule,
    placeholder,
)
from agent_memory_common.redaction.values import is_literal_secret

__all__ = ["Redactor", "default_redactor", "redact_json", "redact_text"]


class Redactor:
    """Replaces secrets with ``[REDACTED:<kind>]`` and counts what it replaced."""

    def __init__(
        self, extra_patterns: Mapping[str, str] | None = None, disabled: Iterable[str] = ()
    ) -> None:
        """Compile user patterns and the prefilter once, so each ``redact`` only does matching.

        Bad configuration fails here, at startup, rather than on the first request: an invalid
        regex, a kind name that would break the placeholder, a pattern that matches the empty
        string, and an unknown name in ``disabled`` (a typo there would silently leave a rule
        on that the operator believes is off, or hide that the rule they wanted is missing).
        """
        disabled_set = set(disabled)
        extra_rules: list[Rule] = []
        for kind, pattern in (extra_patterns or {}).items():
            if not KIND_NAME.fullmatch(kind):
                raise ValueError(
                    f"redaction kind {kind!r} must use only letters, digits, '_', '.', '-'"
                )
            try:
                compiled = re.compile(pattern)
            except (re.error, TypeError) as exc:
                raise ValueError(f"invalid redaction pattern for kind {kind!r}: {exc}") from exc
            if compiled.fullmatch("") is not None:
                raise ValueError(f"redaction pattern for kind {kind!r} matches the empty string")
            if kind not in disabled_set:
                extra_rules.append(Rule(kind, compiled, group_or_whole()))

        known = set(BUILTIN_KINDS) | set(extra_patterns or {})
        unknown = sorted(disabled_set - known)
        if unknown:
            raise ValueError(f"unknown redaction kinds in disabled: {', '.join(unknown)}")

        builtin = [r for r in BUILTIN_RULES if r.kind not in disabled_set]
        # User patterns take priority: they encode knowledge of the user's own secret formats.
        self._rules: tuple[Rule, ...] = (*extra_rules, *builtin)
        self._scanned: tuple[tuple[int, Rule], ...] = tuple(
            (i, r) for i, r in enumerate(self._rules) if not r.triggers
        )
        offset = len(extra_rules)
        prefilter, markers = build_prefilter(builtin)
        self._prefilter = prefilter
        self._markers: list[tuple[tuple[int, int], ...]] = [
            tuple((ri + offset, off) for ri, off in m) for m in markers
        ]
        self._placeholders = tuple(placeholder(r.kind) for r in self._rules)
        self._enabled_kinds = {r.kind for r in self._rules}
        self._kinds = list(dict.fromkeys(r.kind for r in (*builtin, *extra_rules)))

    @property
    def kinds(self) -> list[str]:
        """Enabled kinds: built-ins in priority order, then user kinds."""
        return list(self._kinds)

    def redact(self, text: str) -> tuple[str, dict[str, int]]:
        """Return the text with secrets replaced, and how many of each kind were replaced."""
        if not text:
            return text, {}
        found = self._find(text)
        if not found:
            return text, {}
        return self._apply(text, found)

    def redact_value(self, value: object) -> tuple[object, dict[str, int]]:
        """Redact every string inside JSON-like metadata; keys and non-strings are kept.

        A dict key can itself say "secret" (``{"password": "hunter2"}``), and the value then has
        no context of its own, so a string under such a key is replaced whole. Containers
        that needed no change are returned as the same object, so clean metadata costs no copy.
        """
        counts: dict[str, int] = {}
        return self._walk(value, None, counts), counts

    # -- internals -----------------------------------------------------------------------

    def _find(self, text: str) -> list[tuple[int, int, int]]:
        """Candidate spans as (priority, start, end); priority is the index into _rules."""
        found: list[tuple[int, int, int]] = []
        rules = self._rules
        if self._prefilter is not None:
            markers = self._markers
            # How far each rule has already matched: a trigger inside that region can only
            # repeat the finding, and skipping it keeps dense triggers ("password=password=...")
            # linear instead of quadratic.
            covered: dict[int, int] = {}
            for pm in self._prefilter.finditer(text):
                anchor = pm.start()
                for ri, off in markers[pm.lastindex or 0]:
                    pos = anchor - off
                    if pos < covered.get(ri, -1):
                        continue
                    rule = rules[ri]
                    m = rule.regex.match(text, pos)
                    if m is None:
                        continue
                    span = rule.extract(m)
                    if span is None:
                        covered[ri] = m.end()
                    else:
                        covered[ri] = max(m.end(), span[1])
                        found.append((ri, span[0], span[1]))
        for ri, rule in self._scanned:
            if rule.precheck is not None and not rule.precheck(text):
                continue
            for m in rule.regex.finditer(text):
                span = rule.extract(m)
                if span is not None:
                    found.append((ri, span[0], span[1]))
        if found and ("\\\n" in text or "\\\r" in text):
            # A value split by a backslash line continuation goes on after the break.
            memo: dict[int, int] = {}
            found = [(ri, start, continued_end(text, end, memo)) for ri, start, end in found]
        return found

    def _apply(self, text: str, found: list[tuple[int, int, int]]) -> tuple[str, dict[str, int]]:
        found.sort()  # strongest rule first
        # Accepted spans are pairwise disjoint and kept sorted, so their ends are sorted too and
        # the spans overlapping a candidate are one contiguous slice found by bisection.
        starts: list[int] = []
        ends: list[int] = []
        prios: list[int] = []
        for pri, start, end in found:
            lo = bisect.bisect_right(ends, start)
            hi = bisect.bisect_left(starts, end, lo)
            if lo == hi:
                starts.insert(lo, start)
                ends.insert(lo, end)
                prios.insert(lo, pri)
            elif not (hi - lo == 1 and starts[lo] <= start and end <= ends[lo]):
                # Sticks out of a stronger span: merge, so no fragment of either stays visible.
                merged = (min(start, starts[lo]), max(end, ends[hi - 1]), min(prios[lo:hi]))
                starts[lo:hi], ends[lo:hi], prios[lo:hi] = [merged[0]], [merged[1]], [merged[2]]
        parts: list[str] = []
        counts: dict[str, int] = {}
        pos = 0
        for start, end, pri in zip(starts, ends, prios, strict=True):
            parts.append(text[pos:start])
            parts.append(self._placeholders[pri])
            kind = self._rules[pri].kind
            counts[kind] = counts.get(kind, 0) + 1
            pos = end
        parts.append(text[pos:])
        return "".join(parts), counts

    def _walk(self, value: object, key: object, counts: dict[str, int]) -> object:
        if isinstance(value, str):
            new, found = self.redact(value)
            if not found and isinstance(key, str):
                kind = self._sensitive_key_kind(key)
                if kind is not None and is_literal_secret(value):
                    new, found = placeholder(kind), {kind: 1}
            for kind, n in found.items():
                counts[kind] = counts.get(kind, 0) + n
            return new
        if isinstance(value, dict):
            out = {k: self._walk(v, k, counts) for k, v in value.items()}
            changed = any(out[k] is not v for k, v in value.items())
            return out if changed else value
        if isinstance(value, list | tuple):
            items = [self._walk(v, None, counts) for v in value]
            if len(items) > 1 and any(isinstance(v, str) and v[:1] == "-" for v in items):
                self._redact_argv(items, counts)
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return tuple(items) if isinstance(value, tuple) else items
        return value

    def _redact_argv(self, items: list[object], counts: dict[str, int]) -> None:
        """An argument vector (``["mysql", "-u", "root", "-pS3cret"]``, ``["--password", "x"]``).

        A flag and its value are separate elements, so neither has the context that makes the
        other a secret. The string elements are joined with spaces, as a shell would show the
        command, the text rules run over that line, and each span found is cut back to the
        elements it covers. Only lists with a ``-flag`` element get here.
        """
        strings = [(i, v) for i, v in enumerate(items) if isinstance(v, str)]
        if len(strings) < 2:
            return
        line = " ".join(v for _, v in strings)
        found = self._find(line)
        if not found:
            return
        local: dict[int, list[tuple[int, int, int]]] = {}
        pos = 0
        for i, v in strings:
            end = pos + len(v)
            for pri, start, stop in found:
                lo, hi = max(start, pos), min(stop, end)
                if lo < hi:
                    local.setdefault(i, []).append((pri, lo - pos, hi - pos))
            pos = end + 1
        for i, spans in local.items():
            text = items[i]
            assert isinstance(text, str)
            items[i], found_here = self._apply(text, spans)
            for kind, n in found_here.items():
                counts[kind] = counts.get(kind, 0) + n

    def _sensitive_key_kind(self, key: str) -> str | None:
        # Metadata keys repeat from event to event ("tool", "duration_ms"...): short ones are
        # matched once and remembered (a bounded cache: a few hundred KiB at most).
        kind = _cached_key_group(key) if len(key) <= 64 else _sensitive_key_group(key)
        return kind if kind in self._enabled_kinds else None


def _sensitive_key_group(key: str) -> str | None:
    m = SENSITIVE_KEY.match(key)
    return None if m is None else m.lastgroup


_cached_key_group = functools.lru_cache(maxsize=4096)(_sensitive_key_group)


# --------------------------------------------------------------------------------------------
# Shared detector for read-side use
# --------------------------------------------------------------------------------------------

_J = TypeVar("_J")


@functools.cache
def default_redactor() -> Redactor:
    """The built-in rules with no configuration, built once per process and shared.

    For services that pass stored text through the current detector when they read it, so a
    rule added after an event was recorded still hides what it finds.
    """
    return Redactor()


def redact_text(text: str) -> str:
    """``text`` with every secret the built-in rules find replaced by its placeholder."""
    return default_redactor().redact(text)[0]


def redact_json(value: _J) -> _J:
    """Redact every string inside JSON-like data (dicts, lists, tuples); keys are kept.

    Also catches what only the structure shows: a string under a key that names a secret
    (``{"password": "..."}``) and a flag and its value as separate list elements
    (``["--password", "..."]``). Data with nothing to redact is returned as the same object.
    """
    return cast(_J, default_redactor().redact_value(value)[0])
