"""What a search may be tuned by: depths, weights and the factors of its refinements.

Each value says what it was measured on; the query service builds them from its settings
(``AGENT_MEMORY_QUERY__SEARCH__...``), benchmarks and tests from the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_memory_search.brainstem.descent import DescentOptions
from agent_memory_search.brainstem.ranking import RankingPolicy
from agent_memory_search.brainstem.spread import SpreadOptions


@dataclass(frozen=True)
class EngineOptions:
    rrf_k: int = 60
    candidates: int = 40  # asked from each tier (more when the limit asks for more)
    vector_candidates: int | None = None  # the vector tier's own depth; None: ``candidates``
    policy: RankingPolicy = field(default_factory=RankingPolicy)
    min_similarity: float = 0.3  # a vector hit at least this close is a "good" result
    # Moments inside the best-matching segments rise (``fusion.lift``). On LoCoMo (raw turns,
    # a session as the segment) turn recall@10 went from 0.672 to 0.698 with weight 0.05 and
    # k 5; weight 0.1 with k 1 lost 0.02: a segment must vouch, not outvote the words.
    lift_weight: float = 0.05
    lift_k: int = 5
    lift_depth: int = 10
    # A long answer (limit above ``spread.head``) is spread across sessions after its head
    # (see ``spread``); the segments and the vector tier are then asked deeper, for their
    # view of which sessions matter (LoCoMo: session recall@10 0.938 with 40 vector
    # candidates, 0.942 with 100).
    spread: SpreadOptions = field(default_factory=SpreadOptions)
    spread_segments: int = 40
    spread_vector_depth: int = 100
    # A question about a period ("what did Maria donate in December 2023?") asks when a thing
    # happened; a conversation tells of it afterwards ("yesterday I dropped off...") or plans
    # it before, so moments are searched from ``moment_lead_days`` before the period to
    # ``moment_lag_days`` after it, and the period itself ranks first (``RankingPolicy.
    # outside_period``). On LoCoMo's 211 questions naming a period, session recall@10 went from
    # 0.845 (the period as a filter) to 0.933, turn recall@10 from 0.68 to 0.72; 0.976 with a
    # long answer going on beyond the window (``search``).
    # Overviews (explore, time-boxed) browse the period itself: "last week" is last week.
    moment_lead_days: float = 7.0
    moment_lag_days: float = 14.0
    tier_timeout_s: float = 2.0
    # A superseded decision stays findable as history, below what replaced it (``supersede``).
    superseded_factor: float = 0.5
    # A fix question: the cause and the fix over the failed attempts (``arcs``).
    resolution_factor: float = 1.3
    # A question about a command run or an edit made: the commands and edits (``artifacts``).
    artifact_factor: float = 1.5
    # A question about what the user said: the user's own prompts (``own_words``).
    own_words_factor: float = 1.5
    attempt_factor: float = 0.75
    # ...and the vector tier's RRF weight for it: a fix asked in other words than the
    # session's ("what leaked?") shares few words with it; None: the intent's weight.
    fix_vector_weight: float | None = None
    # ...and the cause and fix said after the best ``arc_sources`` moments that report a
    # problem or an attempt, within the next ``arc_window`` events of their session (the
    # first ``arc_per_source`` of them), with the source's fused score times ``arc_follow``
    # (``arcs.bring_resolutions``). 0 sources: off.
    arc_sources: int = 5
    arc_window: int = 40
    arc_per_source: int = 2
    arc_follow: float = 0.9
    # When the best BM25 hits hold fewer than this share of the query's content words
    # (``lexical.coverage``), the words found nothing much: the vector tier takes BM25's weight
    # and BM25 (with the segments it lifts) the vector tier's. 0: never. 0.35: questions asked
    # in other words cover 0 to 0.29 on the coding benchmarks' and up to 0.43 on real sessions',
    # the others 0.33 or more, mostly 0.5 or more (docs/search.md, "Vectors lead ... again").
    weak_words_below: float = 0.35
    # No results, and ``no_match``, when the query's best cosine with anything in scope is
    # below this: nothing relevant is stored, and the nearest items would be junk. On
    # bench-coding the 62 answerable questions that embed score 0.295 to 0.916, the 72
    # unanswerable ones 0.087 to 0.422; 0.25 refuses 61 of those and none of these
    # (docs/search.md). 0 or less: never.
    no_match_below: float = 0.25
    health_timeout_s: float = 0.25
    health_ttl_s: float = 2.0
    # Descend when the indexes have forgotten (``descent``): the exact events under the
    # summaries an answer leads with, read from Postgres where the pruner took them out of
    # the indexes, scored without an index, within a budget.
    descent: DescentOptions = field(default_factory=DescentOptions)
