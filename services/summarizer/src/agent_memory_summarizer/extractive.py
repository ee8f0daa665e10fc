"""The default summarizer: extractive, offline, deterministic.

A segment's sentences are those people said (user and assistant turns): tool output and
session markers are evidence, never a bullet, unless nobody said anything. Each sentence is
scored by TF-IDF centrality (cosine to the segment's centroid) times what it states
(``_worth``): decisions, constraints, preferences, definitions and procedures count double,
causes, fixes and results 1.6 times, questions, plans ("I'll add the route") and asides ("I
left the warnings") less. Bullets are then picked by maximal marginal relevance, which trades
centrality against redundancy, 3 to 7 of them with room for every memory, and kept in the order
they were said. Every bullet is a sentence that was really written, and its grip points at the
event(s) holding it, with the surrounding words as the excerpt. The title names the goal and
the outcome (``headline``), the key phrases come from YAKE with code noise removed
(``keyphrases``).

Rollups (day <- segments, week <- days, ...) first name the pieces of work under them: one
bullet per child segment ("goal — outcome", citing that segment's grips; marked ``work`` so
the levels above pass it on), up to six, so a week with five sessions names the five. Then the
children's memories fill the node to at most 7 bullets, by the same selection weighed by what
they state, with a penalty for taking several from one child. A day or week title lists its
goals, a month or year its themes (key phrases). A sentence said under several children
becomes one bullet citing the grips of each: a bullet at any level can be checked against the
exact words that produced it.

No randomness, no set iteration, ties broken by position: equal input gives equal output on
every replica and on every replay.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass

from agent_memory_common.contracts.memory import is_tool_event, salience
from agent_memory_summarizer.headline import (
    ASIDE,
    WORK_SEPARATOR,
    Turn,
    goal_of,
    headline,
    narrates,
    request,
)
from agent_memory_summarizer.keyphrases import is_noise_phrase, key_phrases
from agent_memory_summarizer.kinds import in_tool_line, without_tool_lines
from agent_memory_summarizer.model import Bullet, ChildDigest, GripDraft, SourceEvent, Summary
from agent_memory_summarizer.salience import classify, introduces_steps
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
LEAD_CHARS = 60  # how far before a sentence a title looks for "I see the issue!"
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
    role: str = ""
    score: float = 0.0
    vec: Vector | None = None
    source: str | None = None
    grip_ids: tuple[str, ...] = ()
    salience: float = 0.0


TOOL_ONLY_WEIGHT = 0.2
MIN_SPOKEN_FOR_KEYWORDS = 3
# What a bullet is worth by what it states: the memories first (decisions, rules, definitions,
# procedures), then results and causes; a question or a plan ("I'll add the route") is not a
# memory, only the way to one.
STATED_WEIGHT = 2.0
REPORT_WEIGHT = 1.6
QUESTION_WEIGHT = 0.4
PLAN_WEIGHT = 0.6
ROLLUP_WORKS = 6  # pieces of work a calendar node names, at most: one bullet left for memories
ROLLUP_TITLE_CHARS = 110  # the goals named in a day or week title
SESSION_MARKERS = frozenset({"session_start", "session_end", "session_resume"})
_REPORT = re.compile(
    r"^(?:fixed|root cause|cause|the cause|outcome|result|done)\b"
    r"|\b(?:because|caused by|the (?:root )?cause|turned out|was the problem|fails? (?:on|in|with)|"
    r"fixed|now (?:\w+ )?(?:pass|works?|runs?|returns?)|passes|green|dropped from|down to|"
    r"no longer|works again|released|merged|in place)\b",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^(?:fixed|done|resolved|outcome|result)\s*:\s*")
_PLAN = re.compile(
    r"^(?:i'll|i will|let me|then i'll|next,? i'll|i'm going to|i am going to|i can)\b", re.I
)


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
        # tool output (an observation, always) and session markers: nobody said them
        tool = is_tool_event(event.role, event.type) or _marker(event)
        for sent in split_sentences(text):
            prose = sent.text if sent.is_code else strip_code(sent.text)
            toks = tokens(prose)
            if len(toks) < 2:
                continue
            key = squash(sent.text).lower()
            found = by_text.get(key)
            if found is not None:  # the same words said again: one bullet, one grip per event
                found.refs.append((index, sent.start, sent.end))
                if not tool and found.from_tool:
                    found.from_tool = False
                    found.role = event.role
                if found.kind == "observation" and not (tool or sent.is_code):
                    found.kind = _kind(text, sent, event.role)  # said what a tool printed
                continue
            by_text[key] = _Candidate(
                text=sent.text,
                toks=toks,
                kind="observation" if tool else _kind(text, sent, event.role),
                position=position,
                refs=[(index, sent.start, sent.end)],
                is_code=sent.is_code,
                from_tool=tool,
                role=event.role,
            )
            position += 1
            if len(by_text) >= MAX_CANDIDATES:
                return list(by_text.values())
    return list(by_text.values())


def _marker(event: SourceEvent) -> bool:
    """A session start or end: the runtime's bookkeeping, not something anyone said."""
    return event.role == "system" or event.type in SESSION_MARKERS


def _kind(text: str, sent: Sentence, role: str) -> str:
    """A sentence's kind, read with who said it (``said_by``); code, and the words of a tool's
    line, state nothing; a line that announces the numbered steps after it is a procedure."""
    if sent.is_code or in_tool_line(text, sent.start):
        return "observation"
    if introduces_steps(sent.text, text, sent.end):
        return "procedure"
    return classify(sent.text, role)


def _bullet_text(cand: _Candidate) -> str:
    if cand.is_code:
        lines = [ln.strip() for ln in cand.text.strip("`").splitlines() if ln.strip()]
        body = next((ln for ln in lines[1:] if ln), lines[0] if lines else "")
        return shorten("Code: " + body, BULLET_CHARS)
    return shorten(cand.text, BULLET_CHARS)


def _worth(cand: _Candidate) -> float:
    """How much a sentence is a memory, apart from how central it is."""
    if cand.kind != "observation":
        return STATED_WEIGHT
    text = cand.text.strip()
    if text.endswith("?"):
        return QUESTION_WEIGHT
    if _PLAN.search(text) or ASIDE.search(text):
        return PLAN_WEIGHT
    if _REPORT.search(text):
        return REPORT_WEIGHT
    return 1.0


def summarize_segment(events: list[SourceEvent], fallback_title: str) -> Summary:
    """Title ("goal — outcome"), 3-7 bullets of what people said (fewer only if they said
    less), key phrases."""
    everything = _candidates(events)
    if not everything:
        return _empty_summary(events, fallback_title)
    spoken_cands = [c for c in everything if not c.from_tool]
    # What people said is the memory; tool output is its evidence, a bullet only when nobody
    # said anything at all. An agent's narration of its next step is a bullet only when too
    # little else was said.
    stated = [c for c in spoken_cands if not narrates(c.role, c.text)]
    cands = (stated if len(stated) >= MIN_BULLETS else spoken_cands) or everything
    idf = _idf([c.toks for c in cands])
    for c in cands:
        c.vec = _vector(c.toks, idf)
    centroid = _centroid([c.vec or {} for c in cands])
    for c in cands:
        centrality = _cosine(c.vec or {}, centroid)
        length = min(1.0, len(c.toks) / 6)
        code = 0.5 if c.is_code else 1.0
        said = TOOL_ONLY_WEIGHT if c.from_tool else 1.0
        c.score = centrality * length * _worth(c) * code * said
    # room for every memory and every reported cause, fix or result, up to the maximum
    memories = sum(1 for c in cands if _worth(c) >= REPORT_WEIGHT)
    k = min(len(cands), max(bullet_count(len(cands)), min(MAX_BULLETS, memories)))
    picked = sorted(_select(cands, k), key=lambda i: cands[i].position)
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
    keywords = segment_keywords(events, everything)
    title = _segment_title(spoken_cands, events) or _title(keywords, fallback_title)
    return Summary(title=title, bullets=bullets, keywords=keywords)


def _segment_title(spoken: list[_Candidate], events: list[SourceEvent]) -> str:
    """ "Goal — outcome" when a person asked an agent for something (a user and an assistant
    both spoke), what the agent did when it worked on alone (``headline``), the request when
    a prompt waits for its reply; a conversation between people keeps its key-phrase title."""
    turns = [
        Turn(c.role, c.text, c.kind, c.refs[0][0], _lead(events, c.refs[0]))
        for c in sorted(spoken, key=lambda c: c.position)
        if not c.is_code
    ]
    if "assistant" not in {c.role for c in spoken}:
        return request(turns)
    return headline(turns)[1]


def _lead(events: list[SourceEvent], ref: tuple[int, int, int]) -> str:
    """The words just before a sentence on its line ("I see the issue!" before the cause)."""
    index, start, _ = ref
    before = events[index].text[max(0, start - LEAD_CHARS) : start]
    return before.rsplit("\n", 1)[-1]


def segment_keywords(events: list[SourceEvent], cands: list[_Candidate]) -> list[str]:
    """Key phrases by YAKE over what people said (prose only), code noise filtered out; the
    word counts of ``_keywords`` when YAKE finds fewer than two (a segment of a few words)."""
    prose = [
        without_tool_lines(strip_code(e.text[:MAX_EVENT_CHARS]))
        for e in events
        if not (is_tool_event(e.role, e.type) or _marker(e))
    ]
    found = key_phrases("\n\n".join(p for p in prose if p.strip()), MAX_KEYWORDS)
    if len(found) >= 2:
        return found
    # Key phrases (and so the title) from what people said, when they said enough: tool
    # output brings paths, commands and log words ("home dev, src payments").
    spoken = [c.toks for c in cands if not c.from_tool]
    counted = _keywords(
        spoken if len(spoken) >= MIN_SPOKEN_FOR_KEYWORDS else [c.toks for c in cands]
    )
    return [kw for kw in counted if not is_noise_phrase(kw)] or counted


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


def runtime_only(fallback_title: str) -> Summary:
    """A segment of nothing but what the runtime wrote (a compaction, a reminder, a command's
    output): a node with no bullet and no key phrase, so that no level above takes any of it
    for a piece of work (``_works`` passes over a segment without bullets)."""
    return Summary(title=fallback_title, bullets=[], keywords=[])


def _works(children: list[ChildDigest]) -> list[_Candidate]:
    """The pieces of work under a calendar node, in time order: a child segment is one (its
    title, citing its bullets' grips); a child rollup passes on the ones it names."""
    out: list[_Candidate] = []
    seen: set[str] = set()
    for child in children:
        if child.node_id.startswith("segment:") and not child.bullets:
            continue  # nothing anyone said (``runtime_only``): no piece of work
        if child.node_id.startswith("segment:"):
            grips = tuple(dict.fromkeys(g for b in child.bullets for g in b.grip_ids))
            items = [
                Bullet(
                    text=child.title,
                    kind="observation",
                    salience=max((b.salience for b in child.bullets), default=0.0),
                    grip_ids=grips[:ROLLUP_GRIPS_PER_BULLET],
                    work=True,
                )
            ]
        else:
            items = [b for b in child.bullets if b.work]
        for item in items:
            key = squash(item.text).lower()
            if key in seen or not key:
                continue
            seen.add(key)
            out.append(
                _Candidate(
                    text=item.text,
                    toks=tokens(strip_code(item.text)) or [key[:30]],
                    kind=item.kind,
                    position=len(out),
                    refs=[],
                    source=child.node_id,
                    grip_ids=item.grip_ids,
                    salience=item.salience,
                )
            )
    return out


def _norm(text: str) -> str:
    return _LABEL.sub("", squash(text).lower()).rstrip(".…")


def _halves(work: str) -> list[str]:
    """The goal and the outcome of a piece of work, as the sentences they start."""
    return [h for h in (_norm(p) for p in work.split(WORK_SEPARATOR)) if len(h) >= 15]


def _rollup_title(prefix: str, works: list[_Candidate], keywords: list[str]) -> str:
    """A day or week names its pieces of work ("Tue 2026-07-14: Slow reconciliation job;
    Ledger export"); a month or a year, longer, names its themes (key phrases)."""
    goals = list(dict.fromkeys(goal_of(w.text) for w in works))
    if goals and (prefix[:1].isupper() and not prefix[:1].isdigit()) and _names_works(prefix):
        shown: list[str] = []
        for g in goals:
            if shown and len("; ".join([*shown, g])) > ROLLUP_TITLE_CHARS:
                break
            shown.append(g)
        more = len(goals) - len(shown)
        return f"{prefix}: {'; '.join(shown)}" + (f" (+{more} more)" if more else "")
    return f"{prefix}: {', '.join(keywords[:3])}" if keywords else prefix


def _names_works(prefix: str) -> bool:
    """Day ("Tue 2026-07-14") and week ("Week 2026-W29 (...)") prefixes, not month or year."""
    return prefix.startswith("Week ") or bool(
        re.match(r"^[A-Z][a-z]{2} \d{4}-\d{2}-\d{2}$", prefix)
    )


def summarize_rollup(prefix: str, children: list[ChildDigest]) -> Summary:
    """A calendar node from its children's latest versions (already in time order): the pieces
    of work they hold (up to ``ROLLUP_WORKS``, each a bullet), then what was decided, required,
    preferred, defined or laid down as a procedure in them."""
    works = _works(children)
    if len(works) > ROLLUP_WORKS:  # a busy month: the most distinct pieces, in time order
        _score_rollup(works)
        keep = sorted(_select(works, ROLLUP_WORKS, same_source_penalty=0.15))
        works = [works[i] for i in keep]
    cands: list[_Candidate] = []
    by_text: dict[str, _Candidate] = {squash(w.text).lower(): w for w in works}
    halves = [h for w in works for h in _halves(w.text)]
    for child in children:
        for bullet in child.bullets:
            if bullet.work:
                continue
            if bullet.kind == "observation" and any(
                _norm(bullet.text).startswith(h) for h in halves
            ):
                continue  # the request or the result a piece of work already names
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
    title = _rollup_title(prefix, works, keywords)
    bullets = [_rollup_bullet(w, work=True) for w in works]
    # then the memories of the children: what was stated first, then causes, fixes, results
    # questions, plans and asides only when the node would have fewer than 3 bullets without
    pool = [c for c in cands if _worth(c) >= 1.0]
    if len(bullets) + len(pool) < MIN_BULLETS:
        pool = cands
    room = min(len(pool), MAX_BULLETS - len(bullets))  # 3..7 bullets, as a segment
    if room > 0:
        _score_rollup(pool, by_worth=True)
        picked = sorted(_select(pool, room, same_source_penalty=0.15))
        bullets += [_rollup_bullet(pool[i]) for i in picked]
    return Summary(title=title, bullets=bullets, keywords=keywords)


def _score_rollup(cands: list[_Candidate], by_worth: bool = False) -> None:
    """Centrality among the siblings plus salience; ``by_worth``: times what it states."""
    idf = _idf([c.toks for c in cands])
    for c in cands:
        c.vec = _vector(c.toks, idf)
    centroid = _centroid([c.vec or {} for c in cands])
    for c in cands:
        c.score = _cosine(c.vec or {}, centroid) + 0.5 * c.salience
        if by_worth:
            c.score *= _worth(c)


def _rollup_bullet(cand: _Candidate, work: bool = False) -> Bullet:
    return Bullet(
        text=cand.text,
        kind=cand.kind,
        salience=cand.salience,
        grip_ids=cand.grip_ids,
        source_node_id=cand.source,
        work=work,
    )


def _merge_keywords(children: list[ChildDigest], limit: int = MAX_KEYWORDS) -> list[str]:
    """Children's key phrases, ranked by how many children share them and how high."""
    scores: dict[str, float] = {}
    for child in children:
        for rank, kw in enumerate(child.keywords):
            scores[kw] = scores.get(kw, 0.0) + 1.0 / (1 + rank)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [kw for kw, _ in ranked[:limit]]
