"""Optional summaries from an OpenAI-compatible chat endpoint, always with a way back.

The model is asked for JSON: a title, key phrases, and 3 to 7 bullets each citing the numbers
of the events it rests on. The citations become grips (the cited event's sentence closest to
the bullet is the excerpt), so a model's bullet can be checked like an extractive one. Anything
unexpected (HTTP error, timeout, not JSON, a bullet without a valid citation, budget spent)
returns ``None`` and the caller falls back to the extractive summarizer: the TOC never waits
on a model.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import orjson
from pydantic import BaseModel, Field

from agent_memory_common.contracts.memory import is_tool_event, salience
from agent_memory_common.core.logs import get_logger
from agent_memory_summarizer.extractive import (
    BULLET_CHARS,
    EXCERPT_CHARS,
    MAX_BULLETS,
    MAX_KEYWORDS,
)
from agent_memory_summarizer.model import Bullet, GripDraft, SourceEvent, Summary
from agent_memory_summarizer.salience import classify
from agent_memory_summarizer.settings import LlmOptions
from agent_memory_summarizer.text import excerpt_around, shorten, split_sentences, tokens

log = get_logger(__name__)

PER_EVENT_CHARS = 1_500
SYSTEM_PROMPT = (
    "You summarize one segment of a coding agent's session for a table of contents. "
    "Reply with one JSON object and nothing else: "
    '{"title": "<at most 80 characters>", "keywords": ["<2 to 6 short key phrases>"], '
    '"bullets": [{"text": "<one sentence>", "events": [<numbers of the events it rests on>]}]}. '
    "Write 3 to 7 bullets (fewer only if there is less to say). Every bullet must cite at "
    "least one event number from the list. State decisions, rules, definitions, procedures "
    "and preferences plainly; do not invent anything that is not in the events."
)
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


class _LlmBullet(BaseModel):
    text: str = Field(min_length=1)
    events: list[int] = Field(min_length=1)


class _LlmSummary(BaseModel):
    title: str = Field(min_length=1)
    keywords: list[str] = Field(default_factory=list)
    bullets: list[_LlmBullet] = Field(min_length=1)


def build_prompt(events: list[SourceEvent], max_chars: int) -> str:
    lines = []
    used = 0
    for number, event in enumerate(events, start=1):
        text = shorten(event.text, PER_EVENT_CHARS) if event.text.strip() else "(no text)"
        line = f"[{number}] {event.role} {event.type}: {text}"
        if used + len(line) > max_chars:
            lines.append(f"... ({len(events) - number + 1} more events not shown)")
            break
        lines.append(line)
        used += len(line) + 1
    return "Events of the segment, in order:\n" + "\n".join(lines)


def estimate_tokens(prompt: str, max_tokens: int) -> int:
    """Upper bound charged before the call: ~4 characters per token plus the completion."""
    return (len(SYSTEM_PROMPT) + len(prompt)) // 4 + max_tokens


class LlmSummarizer:
    def __init__(self, options: LlmOptions, client: httpx.AsyncClient | None = None) -> None:
        self.options = options
        self._client = client or httpx.AsyncClient(timeout=options.timeout_s)

    @property
    def name(self) -> str:
        return f"llm:{self.options.model}"

    async def close(self) -> None:
        await self._client.aclose()

    async def summarize(self, events: list[SourceEvent], prompt: str) -> tuple[Summary | None, int]:
        """(summary or None to fall back, tokens spent)."""
        opts = self.options
        headers = {"content-type": "application/json"}
        key = opts.api_key.get_secret_value()
        if key:
            headers["authorization"] = f"Bearer {key}"
        body = {
            "model": opts.model,
            "temperature": 0,
            "max_tokens": opts.max_tokens,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": prompt},
            ],
        }
        url = opts.base_url.rstrip("/") + "/chat/completions"
        spent = estimate_tokens(prompt, opts.max_tokens)
        try:
            response = await self._client.post(
                url, content=orjson.dumps(body), headers=headers, timeout=opts.timeout_s
            )
            if response.status_code != 200:
                log.warning("llm.http_error", status=response.status_code, url=url)
                return None, spent
            data = response.json()
            spent = _usage(data, spent)
            content = data["choices"][0]["message"]["content"]
            parsed = _LlmSummary.model_validate_json(_FENCE.sub("", str(content)))
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
            # pydantic's ValidationError is a ValueError: a malformed answer lands here too
            log.warning("llm.failed", error=repr(exc)[:300], url=url)
            return None, spent
        summary = to_summary(parsed, events)
        if summary is None:
            log.warning("llm.no_valid_bullets", model=opts.model)
        return summary, spent


def _usage(data: dict[str, Any], default: int) -> int:
    try:
        return int(data["usage"]["total_tokens"])
    except (KeyError, TypeError, ValueError):
        return default


def to_summary(parsed: _LlmSummary, events: list[SourceEvent]) -> Summary | None:
    """Bullets with valid citations only; None if none is left."""
    bullets: list[Bullet] = []
    for item in parsed.bullets[:MAX_BULLETS]:
        cited = sorted({n for n in item.events if 1 <= n <= len(events)})
        if not cited:
            continue
        text = shorten(item.text, BULLET_CHARS)
        said = [n for n in cited if not is_tool_event(events[n - 1].role, events[n - 1].type)]
        kind = classify(text) if said else "observation"  # only tool output behind it
        grips = tuple(_grip(text, events[n - 1], kind) for n in cited[:3])
        bullets.append(
            Bullet(text=text, kind=kind, salience=salience(len(text), kind), grips=grips)
        )
    if not bullets:
        return None
    keywords = [shorten(k, 40).lower() for k in parsed.keywords if k.strip()][:MAX_KEYWORDS]
    return Summary(
        title=shorten(parsed.title, 80), bullets=bullets, keywords=keywords, method="llm"
    )


def _grip(bullet: str, event: SourceEvent, kind: str) -> GripDraft:
    """The cited event's sentence sharing most words with the bullet, as the excerpt."""
    wanted = set(tokens(bullet))
    best, best_overlap = None, -1
    for sentence in split_sentences(event.text):
        overlap = len(wanted.intersection(tokens(sentence.text)))
        if overlap > best_overlap:
            best, best_overlap = sentence, overlap
    if best is None:
        excerpt = shorten(event.text, EXCERPT_CHARS)
        length = len(event.text)
    else:
        excerpt = excerpt_around(event.text, best.start, best.end, EXCERPT_CHARS)
        length = best.end - best.start
    return GripDraft(
        event_ids=(event.event_id,), excerpt=excerpt, kind=kind, salience=salience(length, kind)
    )
