"""The default summarizer: extractive, offline, deterministic.

A segment's sentences are scored by TF-IDF centrality (cosine to the segment's centroid, so a
sentence that shares the segment's vocabulary ranks high), nudged up when they state a rule,
a definition, a procedure or a preference. Bullets are then picked by maximal marginal
relevance, which trades centrality against redundancy so that 3 to 7 bullets cover different
parts of the segment rather than repeating the main one. Bullets are kept in the order they
were said. Every bullet is a sentence that was really written, and its grip points at the
event(s) holding it, with the surrounding words as the excerpt.

Rollups (day <- segments, week <- days, ...) run the same selection over their children's
bullets (one bullet per child plus two, within 3..7), with a penalty for taking several bullets
from one child, and keep the children's grips: a bullet at any level can be checked against the
exact words that produced it. A sentence said under several children becomes one bullet citing
the grips of each.

No randomness, no set iteration, ties broken by position: equal input gives equal output on
every replica and on every replay.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from dataclasses import dataclass

from agent_memory_common.memory import salience
from agent_memory_summarizer.kinds import in_tool_line, is_tool_event
from agent_memory_summarizer.model import Bullet, ChildDigest, GripDraft, SourceEvent, Summary
from agent_memory_summarizer.salience import classify
from agent_memory_summarizer.text import (
    Sentence,
    excerpt_around,
    shorten,
    split_sentences,
    squash,
    strip_code,
    tokens,
)

MIN_BULLETS = 3
MAX_BULLETS = 7
MAX_KEYWORDS = 6
BULLET_CHARS = 220
EXCERPT_CHARS = 320
MAX_EVENT_CHARS = 8000  # a 1 MB tool result is summarized from its beginning
MAX_CANDIDATES = 400  # bounds the O(n * k) selection on huge segments
MMR_LAMBDA = 0.7
GRIPS_PER_BULLET = 3
ROLLUP_GRIPS_PER_BULLET = 6

Vector = dict[str, float]


@dataclass
class _Candidate:
    text: str
    toks: list[str]
    kind: str
    position: int
    refs: list[tuple[int, int, int]]  # (event index, start, end) of each occurrence
    is_code: bool = False
    from_tool: bool = False  # only a tool printed it (no person said it)
    score: float = 0.0
    vec: Vector | None = None
    source: str | None = None
    grip_ids: tuple[str, ...] = ()
    salience: float = 0.0


TOOL_ONLY_WEIGHT = 0.2
MIN_SPOKEN_FOR_KEYWORDS = 3


def bullet_count(candidates: int) -> int:
    """About one bullet per four sentences, within 3..7, never more than there are."""
    return min(candidates, max(MIN_BULLETS, min(MAX_BULLETS, math.ceil(candidates / 4))))


def _idf(docs: list[list[str]]) -> dict[str, float]:
    df: Counter[str] = Counter()
    for toks in docs:
        df.update(dict.fromkeys(toks, 1))
    n = len(docs)
    return {t: math.log((1 + n) / (1 + c)) + 1.0 for t, c in df.items()}


def _vector(toks: list[str], idf: dict[str, float]) -> Vector:
    tf = Counter(toks)
    vec = {t: (1 + math.log(c)) * idf.get(t, 1.0) for t, c in tf.items()}
    norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
    return {t: v / norm for t, v in vec.items()}


def _cosine(a: Vector, b: Vector) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in a.items())


def _centroid(vectors: list[Vector]) -> Vector:
    total: dict[str, float] = {}
    for vec in vectors:
        for t, v in vec.items():
            total[t] = total.get(t, 0.0) + v
    norm = math.sqrt(sum(v * v for v in total.values())) or 1.0
    return {t: v / norm for t, v in total.items()}


def _select(cands: list[_Candidate], k: int, same_source_penalty: float = 0.0) -> list[int]:
    """Maximal marginal relevance; returns indexes into ``cands`` in the order picked.

    Each candidate's redundancy (its highest similarity to anything picked so far) is updated
    once per pick, so the selection costs O(n * k) similarities, not O(n * k^2).
    """
    top = max((c.score for c in cands), default=1.0) or 1.0
    chosen: list[int] = []
    taken = [False] * len(cands)
    redundancy = [0.0] * len(cands)
    per_source: Counter[str] = Counter()
    while len(chosen) < k:
        best, best_value = -1, -math.inf
        for i, cand in enumerate(cands):
            if taken[i]:
                continue
            value = MMR_LAMBDA * cand.score / top - (1 - MMR_LAMBDA) * redundancy[i]
            if cand.source is not None:
                value -= same_source_penalty * per_source[cand.source]
            if value > best_value + 1e-12:  # strict: the earlier candidate wins a tie
                best, best_value = i, value
        if best < 0:
            break
        chosen.append(best)
        taken[best] = True
        picked_vec = cands[best].vec or {}
        for i, cand in enumerate(cands):
            if not taken[i]:
                redundancy[i] = max(redundancy[i], _cosine(cand.vec or {}, picked_vec))
        if cands[best].source is not None:
            per_source[cands[best].source or ""] += 1
    return chosen


def _keywords(docs: list[list[str]], limit: int = MAX_KEYWORDS) -> list[str]:
    """Key phrases: frequent content words, and word pairs said at least twice."""
    n = max(len(docs), 1)
    tf: Counter[str] = Counter()
    df: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for toks in docs:
        usable = [t for t in toks if _keyword_like(t)]
        tf.update(usable)
        df.update(dict.fromkeys(usable, 1))
        pairs.update(
            f"{a} {b}"
            for a, b in itertools.pairwise(toks)
            if _keyword_like(a) and _keyword_like(b) and a != b
        )
    scores: dict[str, float] = {}
    for term, count in tf.items():
        scores[term] = count * (1.0 + 0.5 * math.log(n / df[term]))
    for pair, count in pairs.items():
        if count >= 2:
            a, b = pair.split(" ")
            scores[pair] = 1.5 * count * (1.0 + 0.25 * (math.log(n / df[a]) + math.log(n / df[b])))
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    out: list[str] = []
    for phrase, _ in ranked:
        if len(out) >= limit:
            break
        words = phrase.split(" ")
        if len(words) == 1:
            if any(phrase in kept.split(" ") for kept in out):
                continue  # already said by a chosen pair
        else:
            out = [kept for kept in out if kept not in words]  # the pair replaces its words
        out.append(phrase)
    return out[:limit]


@functools.lru_cache(maxsize=65536)
def _keyword_like(token: str) -> bool:
    """Not an id, hash or number: those are poor handles for a human browsing the tree."""
    if len(token) < 3 or len(token) > 30:
        return False
    digits = sum(ch.isdigit() for ch in token)
    return digits * 3 < len(token)


def _title(keywords: list[str], fallback: str) -> str:
    if not keywords:
        return fallback
    text = ", ".join(keywords[:3])
    return text[0].upper() + text[1:]


def _candidates(events: list[SourceEvent]) -> list[_Candidate]:
    by_text: dict[str, _Candidate] = {}
    position = 0
    for index, event in enumerate(events):
        text = event.text[:MAX_EVENT_CHARS]
        tool = is_tool_event(event.role, event.type)  # tool output: an observation, always
        for sent in split_sentences(text):
            prose = sent.text if sent.is_code else strip_code(sent.text)
            toks = tokens(prose)
            if len(toks) < 2:
                continue
            key = squash(sent.text).lower()
            found = by_text.get(key)
            if found is not None:  # the same words said again: one bullet, one grip per event
                found.refs.append((index, sent.start, sent.end))
                if not tool:
                    found.from_tool = False
                if found.kind == "observation" and not (tool or sent.is_code):
                    found.kind = _kind(text, sent)  # a person said what a tool printed
                continue
            by_text[key] = _Candidate(
                text=sent.text,
                toks=toks,
                kind="observation" if tool else _kind(text, sent),
                position=position,
                refs=[(index, sent.start, sent.end)],
                is_code=sent.is_code,
                from_tool=tool,
            )
            position += 1
            if len(by_text) >= MAX_CANDIDATES:
                return list(by_text.values())
    return list(by_text.values())


def _kind(text: str, sent: Sentence) -> str:
    """A sentence's kind; code, and the words of a tool's line, state nothing."""
    if sent.is_code or in_tool_line(text, sent.start):
        return "observation"
    return classify(sent.text)


def _bullet_text(cand: _Candidate) -> str:
    if cand.is_code:
        lines = [ln.strip() for ln in cand.text.strip("`").splitlines() if ln.strip()]
        body = next((ln for ln in lines[1:] if ln), lines[0] if lines else "")
        return shorten("Code: " + body, BULLET_CHARS)
    return shorten(cand.text, BULLET_CHARS)


def summarize_segment(events: list[SourceEvent], fallback_title: str) -> Summary:
    """Title, 3-7 bullets (fewer only if the segment has fewer sentences), key phrases."""
    cands = _candidates(events)
    if not cands:
        return _empty_summary(events, fallback_title)
    idf = _idf([c.toks for c in cands])
    for c in cands:
        c.vec = _vector(c.toks, idf)
    centroid = _centroid([c.vec or {} for c in cands])
    for c in cands:
        centrality = _cosine(c.vec or {}, centroid)
        length = min(1.0, len(c.toks) / 6)
        stated = 1.3 if c.kind != "observation" else 1.0
        code = 0.5 if c.is_code else 1.0
        # What people said is the memory; tool output is its evidence, rarely a bullet itself.
        said = TOOL_ONLY_WEIGHT if c.from_tool else 1.0
        c.score = centrality * length * stated * code * said
    picked = sorted(_select(cands, bullet_count(len(cands))), key=lambda i: cands[i].position)
    bullets = []
    for i in picked:
        cand = cands[i]
        grips = []
        for event_index, start, end in cand.refs[:GRIPS_PER_BULLET]:
            event = events[event_index]
            excerpt = excerpt_around(event.text, start, end, EXCERPT_CHARS)
            grips.append(
                GripDraft(
                    event_ids=(event.event_id,),
                    excerpt=excerpt,
                    kind=cand.kind,
                    salience=salience(end - start, cand.kind),
                )
            )
        bullets.append(
            Bullet(
                text=_bullet_text(cand),
                kind=cand.kind,
                salience=salience(len(cand.text), cand.kind),
                grips=tuple(grips),
            )
        )
    # Key phrases (and so the title) from what people said, when they said enough: tool output
    # brings paths, commands and log words ("home dev, src payments").
    spoken = [c.toks for c in cands if not c.from_tool]
    keywords = _keywords(
        spoken if len(spoken) >= MIN_SPOKEN_FOR_KEYWORDS else [c.toks for c in cands]
    )
    return Summary(title=_title(keywords, fallback_title), bullets=bullets, keywords=keywords)


def _empty_summary(events: list[SourceEvent], fallback_title: str) -> Summary:
    """Events without words (session markers, empty tool results) still get a gripped bullet."""
    kinds = Counter(e.type for e in events)
    text = f"{len(events)} event(s) without text: " + ", ".join(
        f"{n} {t}" for t, n in sorted(kinds.items())
    )
    grip = GripDraft(
        event_ids=tuple(e.event_id for e in events[:GRIPS_PER_BULLET]),
        excerpt="",
        kind="observation",
        salience=0.0,
    )
    bullet = Bullet(
        text=text, kind="observation", salience=salience(len(text), "observation"), grips=(grip,)
    )
    return Summary(title=fallback_title, bullets=[bullet], keywords=[])


def summarize_rollup(prefix: str, children: list[ChildDigest]) -> Summary:
    """A calendar node from its children's latest versions (already in time order)."""
    cands: list[_Candidate] = []
    by_text: dict[str, _Candidate] = {}
    for child in children:
        for bullet in child.bullets:
            key = squash(bullet.text).lower()
            same = by_text.get(key)
            if same is not None:  # said again on another day: one bullet, the grips of both
                merged = dict.fromkeys((*same.grip_ids, *bullet.grip_ids))
                same.grip_ids = tuple(merged)[:ROLLUP_GRIPS_PER_BULLET]
                same.salience = max(same.salience, bullet.salience)
                continue
            cands.append(
                _Candidate(
                    text=bullet.text,
                    toks=tokens(strip_code(bullet.text)) or [bullet.text.lower()[:30]],
                    kind=bullet.kind,
                    position=len(cands),
                    refs=[],
                    source=child.node_id,
                    grip_ids=bullet.grip_ids,
                    salience=bullet.salience,
                )
            )
            by_text[key] = cands[-1]
    keywords = _merge_keywords(children)
    title = f"{prefix}: {', '.join(keywords[:3])}" if keywords else prefix
    if not cands:
        return Summary(title=title, bullets=[], keywords=keywords)
    idf = _idf([c.toks for c in cands])
    for c in cands:
        c.vec = _vector(c.toks, idf)
    centroid = _centroid([c.vec or {} for c in cands])
    for c in cands:
        c.score = _cosine(c.vec or {}, centroid) + 0.5 * c.salience
    # one bullet per child (and two more) up to 7: a week of seven busy days shows all seven
    k = min(len(cands), max(MIN_BULLETS, min(MAX_BULLETS, len(children) + 2)))
    picked = sorted(_select(cands, k, same_source_penalty=0.15), key=lambda i: cands[i].position)
    bullets = [
        Bullet(
            text=cands[i].text,
            kind=cands[i].kind,
            salience=cands[i].salience,
            grip_ids=cands[i].grip_ids,
            source_node_id=cands[i].source,
        )
        for i in picked
    ]
    return Summary(title=title, bullets=bullets, keywords=keywords)


def _merge_keywords(children: list[ChildDigest], limit: int = MAX_KEYWORDS) -> list[str]:
    """Children's key phrases, ranked by how many children share them and how high."""
    scores: dict[str, float] = {}
    for child in children:
        for rank, kw in enumerate(child.keywords):
            scores[kw] = scores.get(kw, 0.0) + 1.0 / (1 + rank)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [kw for kw, _ in ranked[:limit]]
