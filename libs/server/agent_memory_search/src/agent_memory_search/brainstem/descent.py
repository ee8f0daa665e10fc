"""Descend when the indexes have forgotten (issue 53, point 1).

The retention matrix (docs/lifecycle.md) takes events, segments and grips out of both indexes
after 30 days, and days after a year, while the summaries above them stay searchable. A
question about an old moment is then answered by a week or a month: the right period, but
not the turn asked about. The descent opens such summaries: among the first ``top``
candidates, each summary node (segment, day, week, month, year) is opened, and so is the period
a question names, or else, for a question asked in one project, the whole project
(``DescentOptions.scope``); the events under them that the pruner removed from the indexes are
read from Postgres (``DescentLookup``: at most ``events`` matching a word of the question, best
first, and as many cited by the nodes' bullets), and scored without any index:

- **words**: BM25 over the candidates and the BM25 tier's hits (their own document
  frequencies), on the same crude stems as ``lexical.coverage``;
- **meaning**: the cosine with the query's vector of the vector the pruner kept of each, or
  for an event it kept none of, of an embedding computed now for the best ``embed`` of them by
  words (then the ones the nodes cite), when the embedder is loaded and the budget has room.

Each candidate is then placed where the indexes would have ranked it had they kept it
(``tier_places``): in the BM25 list the tiers answered with, by its words' score over one
corpus of that list's hits and the candidates, and in the vector list by its cosine (the vector
tier's scores are cosines of the same model); a candidate neither list vouches for (no word of
the query, a cosine below ``min_similarity``) is left out. Its fused score is what those places
give by the tiers' own formula and weights (``placed_fused``), and what it outranks in a list
moves down a place (``make_room``). The best ``keep`` (``DescentOptions``) join the answer's
candidates, and the ranking policy weighs them as every other candidate. The whole step has a
time budget (``budget_ms``): over it, or when Postgres fails, the answer is the tiers' and
explain says why. In a store the pruner never touched, nothing is pruned and nothing is read
but one statement that finds nothing.

Why the whole project and not only the nodes opened: the summaries that rank first for a
question are often not the period its moment is in. LoCoMo's conversations run over months, and
its aged store answered turn R@10 0.458 / session R@10 0.731 (fully indexed 0.739 / 0.937) with
the five best summaries' spans read, 0.641 / 0.906 with the project's (a quarter of its
questions, same store, same latency: p50 97 ms either way); bench-real, whose projects each
fall in one month that the opened month covers, does not move (test 0.731 either way). The
read stays bounded: the best ``events`` by Postgres' rank of the stored words, under the step's
time limit (over it, the tiers' answer stands, with a note). A question naming a period reads
that period only; one asked across projects (no project) only the nodes' spans, as its cost
would grow with the tenant; one naming its tiers gets no descent (the engine's ``_descend``). Tried
beside it and left out: the 20 nearest pruned events by kept vector read as well (LoCoMo turn
+0.02, session -0.01, bench-real dev -0.02, +15 ms), 400 events read instead of 200 (+0.003),
Postgres' rank divided by the log of the length (+0.004, bench-real unchanged).

``explain.descent``: the nodes opened (level, title), whether the period or the project was
read, the candidates read, how they were scored, the events returned with the node each came
from (``period`` or ``project`` for the rest) and their scores, and the milliseconds.
"""

from __future__ import annotations

import asyncio
import math
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from agent_memory_retrieval.docs import Hit, SearchFilter
from agent_memory_retrieval.packed import packed_cosines
from agent_memory_retrieval.ports import Embedder, TextIndex, VectorIndex
from agent_memory_search.brainstem.failures import SURVIVABLE
from agent_memory_search.brainstem.fusion import Candidate, rrf
from agent_memory_search.brainstem.lexical import _WORD, FUNCTION_WORDS, coverage, stem

if TYPE_CHECKING:  # tiers imports the options, which import these
    from agent_memory_search.brainstem.tiers import QueryVector

# (scope, TOC node ids to open, the period asked about, event ids the nodes cite, the query,
# how many of each, a time limit in ms) -> (the node id each was found under, '' for the
# period; the pruned event; the vector the pruner kept of it, packed, or None; the id of the
# segment that holds it, or None) (``agent_memory_search.descent_store``)
DescentLookup = Callable[
    [
        SearchFilter,
        Sequence[str],
        tuple[datetime, datetime] | None,
        Sequence[str],
        str,
        int,
        int,
    ],
    Awaitable[list[tuple[str, Hit, bytes | None, str | None]]],
]
# (tenant, project or None) -> whether the pruner removed any event entry there
PrunedLookup = Callable[[str, str | None], Awaitable[bool]]

SUMMARY_LEVELS: tuple[str, ...] = ("segment", "day", "week", "month", "year")
# the span of "the whole project" (``DescentOptions.scope``): what Postgres and Python both hold
ALL_TIME: tuple[datetime, datetime] = (
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, tzinfo=UTC),
)
# of a candidate's text: the embeddings are most of the step's time (8 texts of 600
# characters took 368 ms at p50 on bench-real's aged store, the Postgres read 44 ms)
EMBED_CHARS = 300


@dataclass(frozen=True)
class DescentOptions:
    top: int = 5  # the first candidates looked at for summaries to open; 0: off
    budget_ms: float = 60.0
    events: int = 200  # read at most, by words (and as many cited by the nodes)
    embed: int = 6  # embedded at most: the best by words, then the cited ones
    # joined to the answer at most; found@5 on bench-real's aged dev store: 10 0.669, 20 0.727,
    # 40 0.705 (the ranking policy picks among them: too few leave it no choice)
    keep: int = 20
    levels: tuple[str, ...] = SUMMARY_LEVELS
    # with no period named, a question asked in one project reads the whole project's pruned
    # events by words too, not only the nodes' spans (module docstring: measured)
    scope: bool = True


@dataclass
class EmbedCost:
    """What embedding one candidate text costs here (ms, an exponential average of the
    descent's own batches), so that a batch is started only when it is expected to end within
    what is left of the budget, and only as many texts as fit.

    An embedding cannot be stopped once it runs (a worker thread): before this, a batch begun
    with 35 ms left ran on for its ~130 ms (6 texts, two busy cores) after the step had given
    up on it, and the next search's own query embedding waited behind it (bench-real's aged
    store, dev: search p50 100 -> 160 ms once the lookup was fast enough to leave time for it).
    Unknown at first: the first batch is tried and measured."""

    ms_per_text: float | None = None
    weight: float = 0.3  # of the newest measurement

    def fitting(self, wanted: int, left_ms: float) -> int:
        """How many of ``wanted`` texts are expected to be embedded within ``left_ms``."""
        if self.ms_per_text is None:
            return wanted
        return max(0, min(wanted, int(left_ms * 0.8 / max(self.ms_per_text, 1e-3))))

    def observe(self, texts: int, ms: float) -> None:
        if texts <= 0:
            return
        each = ms / texts
        old = self.ms_per_text
        self.ms_per_text = each if old is None else old + self.weight * (each - old)


@dataclass
class Descent:
    """What one descent did, for explain."""

    opened: list[dict[str, Any]] = field(default_factory=list)
    period: bool = False
    project: bool = False  # the whole project read (``DescentOptions.scope``)
    read: int = 0
    stored: int = 0  # scored by the vector the pruner kept
    embedded: int = 0  # scored by a vector computed now
    returned: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    ms: float = 0.0
    best_cosine: float | None = None  # of the events returned
    best_words: float = 0.0  # the largest share of the query's content words one holds
    steps_ms: dict[str, float] = field(default_factory=dict)  # summaries, lookup, embed

    def explain(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "opened": self.opened,
            "period": self.period,
            "project": self.project,
            "read": self.read,
            "scored_by": ["words", "vectors"] if self.embedded or self.stored else ["words"],
            "stored_vectors": self.stored,
            "embedded": self.embedded,
            "returned": self.returned,
            "ms": self.ms,
            "steps_ms": self.steps_ms,
        }
        if self.note:
            out["note"] = self.note
        if self.best_cosine is not None:
            out["best_cosine"] = round(self.best_cosine, 4)
        return out


@lru_cache(maxsize=65_536)
def _term(word: str) -> str:
    """A word's stem, '' for a function word (cached: a candidate set of 400 events' texts
    repeats its words, and stemming each one again was most of the step's CPU)."""
    lower = word.lower()
    return "" if lower in FUNCTION_WORDS else stem(lower)


def _stems(text: str) -> list[str]:
    return [t for t in map(_term, _WORD.findall(text)) if t]


def bag(text: str) -> Counter[str]:
    """A text's content words, stemmed and counted: tokenized once, scored as often as
    needed (each event alone, then its segment with the other events read of it)."""
    return Counter(_stems(text))


def bm25(query: str, docs: Sequence[Counter[str]], k1: float = 1.2, b: float = 0.75) -> list[float]:
    """BM25 of each bag of words for the query's content words, with ``docs`` as the corpus
    (document frequencies and mean length from them alone)."""
    wanted = set(_stems(query))
    if not wanted or not docs:
        return [0.0] * len(docs)
    n = len(docs)
    lengths = [d.total() for d in docs]
    mean = (sum(lengths) / n) or 1.0
    df = {w: sum(1 for d in docs if w in d) for w in wanted}
    idf = {w: math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in wanted}
    out = []
    for doc, length in zip(docs, lengths, strict=True):
        score = 0.0
        for w in wanted:
            tf = doc.get(w, 0)
            if tf:
                score += idf[w] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / mean))
        out.append(score)
    return out


def word_scores(query: str, texts: Sequence[str]) -> list[float]:
    """BM25 of each text for the query's content words, with the texts as the corpus."""
    return bm25(query, [bag(t) for t in texts])


def kept_cosines(query: Sequence[float], kept: Sequence[bytes | None]) -> dict[int, float]:
    """The cosine of the query with each candidate's kept vector (packed), by position; those
    without one are left out."""
    at = [i for i, v in enumerate(kept) if v is not None]
    sims = packed_cosines(query, [v for v in kept if v is not None])
    return dict(zip(at, sims, strict=True))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def is_summary(cand: Candidate, options: DescentOptions) -> bool:
    doc = cand.doc
    return getattr(doc, "type", "") == "toc_node" and getattr(doc, "level", "") in options.levels


def openings(
    head: Sequence[Candidate], summaries: Sequence[Candidate], options: DescentOptions
) -> list[Candidate]:
    """The summary nodes to open: those among the first ``top`` candidates (an overview's
    answer holds them), then the best summaries the indexes still hold for the question (a
    moment's answer holds none), ``top`` at most."""
    out: dict[str, Candidate] = {}
    for cand in [*head[: options.top], *summaries]:
        if is_summary(cand, options) and cand.id not in out:
            out[cand.id] = cand
    return list(out.values())[: options.top]


def node_id_of(doc_id: str, tenant: str) -> str:
    """The TOC node id of a node's document id (``node:<tenant>:<node id>``)."""
    prefix = f"node:{tenant}:"
    return doc_id[len(prefix) :] if doc_id.startswith(prefix) else doc_id


def _text_of(cand: Candidate) -> str:
    doc = cand.doc
    return f"{getattr(doc, 'title', '') or ''} {getattr(doc, 'text', '') or ''}"


def _places(theirs: Sequence[float], mine: Mapping[int, float]) -> dict[int, int]:
    """The 1-based rank each of ``mine`` (index -> score) would take in one list holding
    ``theirs`` and ``mine``, best first (equal scores share a rank)."""
    ordered = sorted([*theirs, *mine.values()])
    return {i: 1 + len(ordered) - bisect_right(ordered, s) for i, s in mine.items()}


def tier_places(
    head: Sequence[Candidate],
    theirs: Sequence[float],
    words: Sequence[float],
    cosines: Mapping[int, float],
    min_similarity: float,
) -> tuple[dict[int, int], dict[int, int]]:
    """Where each event read would stand, had the indexes kept it, in the BM25 list and in the
    vector list the tiers answered with: (index -> rank) for each. BM25: by the words' scores
    over one corpus, the BM25 tier's hits in ``head`` (``theirs``) and the events read
    (``words``); vectors: by cosine, which the vector tier's scores are, the same model's. An
    event no vector was had for (none kept, none computed within the budget) is placed in the
    vector list where its words place it, when that tier answered: what was not measured is
    not held against it (a cosine below ``min_similarity`` is)."""
    by_words = _places(theirs, {i: s for i, s in enumerate(words) if s > 0})
    tier = [c.scores["vector"] for c in head if "vector" in c.ranks and "vector" in c.scores]
    by_meaning = _places(tier, {i: c for i, c in cosines.items() if c >= min_similarity})
    if tier:
        for i, rank in by_words.items():
            if i not in cosines:
                by_meaning[i] = rank
    return by_words, by_meaning


def placed_fused(
    words_at: Mapping[int, int],
    vector_at: Mapping[int, int],
    head: Sequence[Candidate],
    weights: Mapping[str, float] | None,
    k: int,
    lifted: Mapping[int, float] | None = None,
) -> tuple[list[tuple[int, float]], float]:
    """The fused score each event read takes from its places (``tier_places``), on the tiers'
    own scale (``fusion.rrf``: weight / (k + rank), over the best possible sum of the lists
    that answered), best first; and the factor that keeps ``head``'s fused scores on that
    scale when the events read answer a list no tier did (BM25 had no moment left to match).
    The events the indexes forgot compete with what they still hold as they did before the
    pruner ran: neither held behind the summaries they were found under nor lifted above the
    moments that never go stale."""
    # no tier ran (both down): the descent's own two lists are all there is
    weights = weights or {"bm25": 1.0, "vector": 1.0}
    lists = [(t, p) for t, p in (("bm25", words_at), ("vector", vector_at)) if t in weights]
    answered = {t for c in head for t in c.ranks if t in weights}
    before = sum(weights[t] for t in answered)
    answered |= {t for t, places in lists if places}
    total = sum(weights[t] for t in answered)
    scores: dict[int, float] = {}
    for tier, places in lists:
        weight = weights[tier]
        for i, rank in places.items():
            scores[i] = scores.get(i, 0.0) + weight / (k + rank)
    for i, bonus in (lifted or {}).items():  # vouched for by its segment, as ``fusion.lift``
        if i in scores:
            scores[i] += bonus
    best = (total or 1.0) / (k + 1)
    ranked = sorted(((i, s / best) for i, s in scores.items()), key=lambda kv: (-kv[1], kv[0]))
    return ranked, (before / total if before and total else 1.0)


@dataclass(frozen=True)
class Lift:
    """``fusion.lift``'s parameters as the tiers used them: a moment inside one of the ``depth``
    segments that match the query best rises by ``weight / (k + the segment's rank)``."""

    weight: float = 0.0
    k: int = 5
    depth: int = 10


def segment_lift(
    query: str, bags: Sequence[Counter[str]], segments: Sequence[str | None], lift: Lift | None
) -> dict[int, float]:
    """The lift each event read takes from its segment (index -> bonus, before the fused
    scores' normaliser), as the tiers lift the moments of the segments BM25 matches best
    (``fusion.lift``). The pruner took those segments out of the index with their events,
    so they are matched here: each segment by the words of its events read (BM25 over them,
    one document per segment)."""
    if lift is None or lift.weight <= 0:
        return {}
    members: dict[str, list[int]] = {}
    for i, seg in enumerate(segments):
        if seg is not None:
            members.setdefault(seg, []).append(i)
    if not members:
        return {}
    names = list(members)
    scores = bm25(query, [sum((bags[i] for i in members[n]), Counter()) for n in names])
    ranked = sorted((j for j in range(len(names)) if scores[j] > 0), key=lambda j: -scores[j])
    out: dict[int, float] = {}
    for rank, j in enumerate(ranked[: lift.depth], 1):
        for i in members[names[j]]:
            out[i] = lift.weight / (lift.k + rank)
    return out


def make_room(
    head: Sequence[Candidate],
    theirs: Sequence[float],
    words: Sequence[float],
    cosines: Mapping[int, float],
    min_similarity: float,
    weights: Mapping[str, float] | None,
    k: int,
    rescale: float,
) -> None:
    """What the tiers ranked below an event read (``tier_places``) moves down one place per
    such event, as it would have in a list holding them, and its fused score with it.

    Without this, what the indexes still hold at the moment level (the memories that never
    go stale) stays first in both lists of every question about an old period: ranked first
    only because what ranked above it was pruned (bench-real aged, dev: one project's opening
    prompt led 9 answers it does not answer)."""
    weights = weights or {"bm25": 1.0, "vector": 1.0}
    mine_words = sorted(s for s in words if s > 0) if "bm25" in weights else []
    mine_cos = sorted(c for c in cosines.values() if c >= min_similarity)
    mine_cos = mine_cos if "vector" in weights else []
    if not mine_words and not mine_cos:
        return
    answered = {t for c in head for t in c.ranks if t in weights}
    before = sum(weights[t] for t in answered)
    best = (before / rescale if rescale else before) / (k + 1) or 1.0
    worded = iter(theirs)
    for cand in head:
        delta = 0.0
        if "bm25" in cand.ranks:
            score = next(worded)
            above = len(mine_words) - bisect_right(mine_words, score)
            old = cand.ranks["bm25"]
            delta += weights.get("bm25", 0.0) * (1 / (k + old + above) - 1 / (k + old))
        vscore = cand.scores.get("vector")
        if "vector" in cand.ranks and vscore is not None:
            above = len(mine_cos) - bisect_right(mine_cos, vscore)
            old = cand.ranks["vector"]
            delta += weights.get("vector", 0.0) * (1 / (k + old + above) - 1 / (k + old))
        cand.fused += delta / best


async def descend(
    *,
    lookup: DescentLookup,
    embedder: Embedder | None,
    query_vector: QueryVector | None,
    flt: SearchFilter,
    text: str,
    head: list[Candidate],
    summaries: Sequence[Candidate],
    period: tuple[datetime, datetime] | None,
    options: DescentOptions,
    rrf_k: int,
    min_similarity: float,
    weights: Mapping[str, float] | None = None,
    lift: Lift | None = None,
    started: float | None = None,
    embed_cost: EmbedCost | None = None,
) -> tuple[list[Candidate], Descent]:
    """``head`` with the exact events of the summaries it leads with (module docstring), and
    what the descent did. Raises ``TimeoutError`` or one of ``SURVIVABLE`` (the caller turns
    them into a note). ``started``: when the step began (``time.perf_counter()``), for its
    budget."""
    started = time.perf_counter() if started is None else started
    deadline = started + options.budget_ms / 1000
    done = Descent(period=period is not None)
    span = period
    if span is None and options.scope and flt.project_id is not None:
        span = ALL_TIME
        done.project = True
    nodes = openings(head, summaries, options)
    if not nodes and span is None:
        return head, done
    node_ids = [node_id_of(c.id, flt.tenant) for c in nodes]
    by_node = {node_id_of(c.id, flt.tenant): c for c in nodes}
    done.opened = [
        {"id": c.id, "level": c.doc.level, "title": str(getattr(c.doc, "title", ""))[:80]}
        for c in nodes
    ]
    cited = list(dict.fromkeys(e for c in nodes for e in (c.doc.event_ids or ())))
    left_ms = int((deadline - time.perf_counter()) * 1000)
    if left_ms <= 0:
        raise TimeoutError
    t0 = time.perf_counter()
    read = await asyncio.wait_for(
        lookup(flt, node_ids, span, cited, text, options.events, left_ms), left_ms / 1000
    )
    done.steps_ms["lookup"] = round((time.perf_counter() - t0) * 1000, 2)
    present = {c.id for c in head}
    kept = {hit.id: vector for _, hit, vector, _ in read if vector is not None}
    found = [(node, hit) for node, hit, _, _ in read if hit.id not in present]
    segment_of = [seg for _, hit, _, seg in read if hit.id not in present]
    done.read = len(found)
    if not found:
        done.ms = round((time.perf_counter() - started) * 1000, 2)
        return head, done
    # its own text: with its previous turn too (BM25's context when the indexes held it),
    # found@5 on bench-real's aged dev store fell from 0.755 to 0.719
    texts = [hit.doc.text for _, hit in found]
    # one corpus for the words of what the BM25 tier still answered and of what was read, so
    # that their scores compare (``tier_places``)
    worded = [c for c in head if "bm25" in c.ranks]
    # whole (the first 2,000 characters the read matched them on: 0.741 against 0.755 on
    # bench-real's aged dev store, for 5 ms at p95)
    bags = [bag(t) for t in texts]
    scored = bm25(text, [bag(_text_of(c)) for c in worded] + bags)
    theirs, words = scored[: len(worded)], scored[len(worded) :]
    by_words = [i for i in sorted(range(len(found)), key=lambda i: -words[i]) if words[i] > 0]
    cosines: dict[int, float] = {}
    if embedder is not None and query_vector is not None and text.strip() and kept:
        # the vectors the pruner kept: every candidate that has one, at no embedding cost
        t0 = time.perf_counter()
        left = deadline - time.perf_counter()
        qv = await asyncio.wait_for(query_vector.get(), max(left, 0.001))
        cosines = kept_cosines(qv, [kept.get(hit.id) for _, hit in found])
        done.stored = len(cosines)
        done.steps_ms["stored_vectors"] = round((time.perf_counter() - t0) * 1000, 2)
    if embedder is not None and query_vector is not None and text.strip():
        cited_set = set(cited)
        pick = list(
            dict.fromkeys(
                [
                    *[i for i in by_words if i not in cosines][: options.embed],
                    *(
                        i
                        for i, (_, h) in enumerate(found)
                        if h.doc.event_ids[0] in cited_set and i not in cosines
                    ),
                ]
            )
        )[: options.embed]
        left = deadline - time.perf_counter()
        cost = embed_cost if embed_cost is not None else EmbedCost()
        fit = cost.fitting(len(pick), left * 1000) if left > 0.005 else 0
        if pick and not fit:
            done.note = "vectors would not fit the budget: scored by words only"
        pick = pick[:fit]
        if pick:
            loop = asyncio.get_running_loop()
            batch = [texts[i][:EMBED_CHARS] for i in pick]
            t0 = time.perf_counter()

            def timed(texts: list[str]) -> list[list[float]]:
                began = time.perf_counter()
                out = embedder.embed(texts)
                cost.observe(len(texts), (time.perf_counter() - began) * 1000)
                return out

            try:
                qv, vectors = await asyncio.wait_for(
                    asyncio.gather(query_vector.get(), loop.run_in_executor(None, timed, batch)),
                    left,
                )
            except TimeoutError:
                done.note = "vectors over the budget: scored by words only"
            else:
                cosines.update({i: cosine(qv, v) for i, v in zip(pick, vectors, strict=True)})
                done.embedded = len(pick)
                done.steps_ms["embed"] = round((time.perf_counter() - t0) * 1000, 2)
    words_at, vector_at = tier_places(head, theirs, words, cosines, min_similarity)
    lifted = segment_lift(text, bags, segment_of, lift)
    fused, rescale = placed_fused(words_at, vector_at, head, weights, rrf_k, lifted)
    if rescale != 1.0:
        for cand in head:
            cand.fused *= rescale
    make_room(head, theirs, words, cosines, min_similarity, weights, rrf_k, rescale)
    added: list[Candidate] = []
    for rank, (i, score) in enumerate(fused[: options.keep], 1):
        node, hit = found[i]
        parent = by_node.get(node)
        cand = Candidate(
            id=hit.id,
            doc=hit.doc,
            ranks={"descent": rank},
            scores={"descent": round(words[i], 4)},
            fused=score,
        )
        if i in cosines:
            cand.scores["descent_cosine"] = round(cosines[i], 4)
            done.best_cosine = max(done.best_cosine or -1.0, cosines[i])
        share = coverage(text, [hit])
        if share is not None:
            done.best_words = max(done.best_words, share)
        added.append(cand)
        done.returned.append(
            {
                "id": hit.id,
                "from": parent.id if parent is not None else "period" if period else "project",
                "words": round(words[i], 3),
                **({"cosine": round(cosines[i], 3)} if i in cosines else {}),
                # where the indexes would have ranked it among what they still hold
                "as_if": {
                    **({"bm25": words_at[i]} if i in words_at else {}),
                    **({"vector": vector_at[i]} if i in vector_at else {}),
                },
            }
        )
    done.ms = round((time.perf_counter() - started) * 1000, 2)
    out = sorted([*head, *added], key=lambda c: (-c.fused, c.id))
    return out, done


SURVIVES: tuple[type[Exception], ...] = (TimeoutError, *SURVIVABLE)
PRUNED_TTL_S = 30.0  # how long "this project has pruned entries" is trusted


class Descender:
    """The descent step of one brainstem: its lookups, options and what it knows of pruning.

    ``run`` first asks whether the scope has any pruned entry (a yes is kept ``PRUNED_TTL_S``,
    a no asked again at the next search: the first run of the pruner counts at once): where
    the pruner never removed anything the step costs that one indexed read. Otherwise it asks
    BM25 and the vector index (with the query's vector, already being embedded for the vector tier)
    for the best summaries still indexed, and opens them with those of the answer
    (``descend``)."""

    def __init__(
        self, lookup: DescentLookup, pruned: PrunedLookup, options: DescentOptions
    ) -> None:
        self.lookup = lookup
        self.pruned = pruned
        self.options = options
        self._pruned: dict[tuple[str, str | None], tuple[float, bool]] = {}
        self.embed_cost = EmbedCost()

    async def has_pruned(self, tenant: str, project_id: str | None) -> bool:
        key = (tenant, project_id)
        now = time.monotonic()
        cached = self._pruned.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        value = await self.pruned(tenant, project_id)
        if value:  # pruning is for good; "not yet" is asked again (one indexed read)
            self._pruned[key] = (now + PRUNED_TTL_S, value)
        return value

    async def summaries(
        self,
        text: str,
        flt: SearchFilter,
        text_index: TextIndex | None,
        vector_index: VectorIndex | None,
        query_vector: QueryVector | None,
        weights: dict[str, float],
        rrf_k: int,
    ) -> list[Candidate]:
        """The best summary nodes the indexes still hold for ``text``, fused by rank."""
        wanted = replace(flt, types=("toc_node",), levels=self.options.levels, kinds=None)
        depth = self.options.top
        lists: dict[str, list[Hit]] = {}

        async def words() -> None:
            if text_index is not None:
                lists["bm25"] = list(await text_index.search(text, wanted, depth))

        async def meaning() -> None:
            if vector_index is not None and query_vector is not None:
                vector = await query_vector.get()
                lists["vector"] = list(await vector_index.search(vector, wanted, depth))

        await asyncio.gather(words(), meaning())
        return rrf(lists, k=rrf_k, weights=weights)

    async def run(
        self,
        *,
        text_index: TextIndex | None,
        vector_index: VectorIndex | None,
        embedder: Embedder | None,
        query_vector: QueryVector | None,
        flt: SearchFilter,
        searched: SearchFilter,
        text: str,
        head: list[Candidate],
        period: tuple[datetime, datetime] | None,
        weights: dict[str, float],
        rrf_k: int,
        min_similarity: float,
        lift: Lift | None = None,
    ) -> tuple[list[Candidate], Descent | None]:
        """``flt``: the question's scope without its time; ``searched``: as the tiers were
        asked (its time range). None: nothing pruned in scope, the step did nothing."""
        started = time.perf_counter()
        if not await self.has_pruned(flt.tenant, flt.project_id):
            return head, None
        t0 = time.perf_counter()
        summaries = await self.summaries(
            text, searched, text_index, vector_index, query_vector, weights, rrf_k
        )
        asked_ms = round((time.perf_counter() - t0) * 1000, 2)
        head, done = await descend(
            lookup=self.lookup,
            embedder=embedder,
            query_vector=query_vector,
            flt=flt,
            text=text,
            head=head,
            summaries=summaries,
            period=period,
            options=self.options,
            rrf_k=rrf_k,
            min_similarity=min_similarity,
            weights=weights,
            lift=lift,
            started=started,
            embed_cost=self.embed_cost,
        )
        done.steps_ms = {"summaries": asked_ms, **done.steps_ms}
        return head, done
