"""Descend when the indexes have forgotten (issue 53, point 1).

The retention matrix (docs/lifecycle.md) takes events, segments and grips out of both indexes
after 30 days, and days after a year, while the summaries above them stay searchable. A
question about an old moment is then answered by a week or a month: the right period, but
not the turn asked about. The descent opens such summaries: among the first ``top``
candidates, each summary node (segment, day, week, month, year) is opened, and so is the period
a question names; the events under them that the pruner removed from the indexes are read
from Postgres (``DescentLookup``: at most ``events`` matching a word of the question and
as many cited by the nodes' bullets), and scored without any index:

- **words**: BM25 over the candidate set itself (its own document frequencies), on the same
  crude stems as ``lexical.coverage``;
- **meaning**: the cosine of each candidate's embedding, computed now for the best
  ``embed`` of them by words (then the ones the nodes cite), with the query's vector
  (only when the embedder is loaded, and only within what is left of the budget).

The two lists are fused by reciprocal rank, as the tiers are (``fusion.rrf``); a candidate
neither list vouches for (no word of the query, a cosine below ``min_similarity``) is left out.
The best ``keep`` (``DescentOptions``) join the answer's candidates at the strength of the node
they were found under (``fused`` = the node's, times ``(k + 1) / (k + rank)`` and ``lead``): just
above it when they are the best of the descent, below it further down; the ranking policy
then weighs them as every other candidate. The whole step has a time budget
(``budget_ms``): over it, or when Postgres fails, the answer is the tiers' and explain
says why. In a store the pruner never touched, nothing is pruned and nothing is read but one
statement that finds nothing.

``explain.descent``: the nodes opened (level, title), the candidates read, how they were scored,
the events returned with the node each came from and their scores, and the milliseconds.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
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
# period; the pruned event; the vector the pruner kept of it, packed, or None), words first
# (``agent_memory_search.descent_store``)
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
    Awaitable[list[tuple[str, Hit, bytes | None]]],
]
# (tenant, project or None) -> whether the pruner removed any event entry there
PrunedLookup = Callable[[str, str | None], Awaitable[bool]]

SUMMARY_LEVELS: tuple[str, ...] = ("segment", "day", "week", "month", "year")
# of a candidate's text: the embeddings are most of the step's time (8 texts of 600
# characters took 368 ms at p50 on bench-real's aged store, the Postgres read 44 ms)
EMBED_CHARS = 300


@dataclass(frozen=True)
class DescentOptions:
    top: int = 5  # the first candidates looked at for summaries to open; 0: off
    budget_ms: float = 60.0
    events: int = 200  # read at most, by words (and as many cited by the nodes)
    embed: int = 6  # embedded at most: the best by words, then the cited ones
    keep: int = 5  # joined to the answer at most
    lead: float = 1.05  # the best one's fused score over its node's
    levels: tuple[str, ...] = SUMMARY_LEVELS


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


def _stems(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text) if w.lower() not in FUNCTION_WORDS]


def word_scores(query: str, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    """BM25 of each text for the query's content words, with the candidate set as its corpus
    (document frequencies and mean length from ``texts`` alone)."""
    wanted = set(_stems(query))
    docs = [Counter(_stems(t)) for t in texts]
    if not wanted or not docs:
        return [0.0] * len(texts)
    n = len(docs)
    lengths = [sum(d.values()) for d in docs]
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


def rank_fuse(lists: Sequence[Sequence[int]], k: int) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of lists of candidate indexes, best first: (index, score)."""
    scores: dict[int, float] = {}
    for ranked in lists:
        for rank, i in enumerate(ranked, 1):
            scores[i] = scores.get(i, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


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
    nodes = openings(head, summaries, options)
    if not nodes and period is None:
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
        lookup(flt, node_ids, period, cited, text, options.events, left_ms), left_ms / 1000
    )
    done.steps_ms["lookup"] = round((time.perf_counter() - t0) * 1000, 2)
    present = {c.id for c in head}
    kept = {hit.id: vector for _, hit, vector in read if vector is not None}
    found = [(node, hit) for node, hit, _ in read if hit.id not in present]
    done.read = len(found)
    if not found:
        done.ms = round((time.perf_counter() - started) * 1000, 2)
        return head, done
    texts = [hit.doc.text for _, hit in found]
    words = word_scores(text, texts)
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
    by_meaning = [
        i for i in sorted(cosines, key=lambda i: -cosines[i]) if cosines[i] >= min_similarity
    ]
    fused = rank_fuse([by_words, by_meaning] if cosines else [by_words], rrf_k)
    base_default = head[0].fused if head else 1.0
    added: list[Candidate] = []
    for rank, (i, _score) in enumerate(fused[: options.keep], 1):
        node, hit = found[i]
        parent = by_node.get(node)
        base = parent.fused if parent is not None else base_default
        cand = Candidate(
            id=hit.id,
            doc=hit.doc,
            ranks={"descent": rank},
            scores={"descent": round(words[i], 4)},
            fused=base * options.lead * (rrf_k + 1) / (rrf_k + rank),
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
                "from": parent.id if parent is not None else "period",
                "words": round(words[i], 3),
                **({"cosine": round(cosines[i], 3)} if i in cosines else {}),
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
            started=started,
            embed_cost=self.embed_cost,
        )
        done.steps_ms = {"summaries": asked_ms, **done.steps_ms}
        return head, done
