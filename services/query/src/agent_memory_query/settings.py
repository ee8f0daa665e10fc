"""Query service settings: ``AGENT_MEMORY_QUERY__*`` plus the common ones."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, Field, model_validator

from agent_memory_retrieval.lifecycle.topic_prune import DEFAULT_HALF_LIFE_DAYS
from agent_memory_retrieval.settings import RetrievalSettings


class SearchOptions(BaseModel):
    """The brainstem's knobs: ``AGENT_MEMORY_QUERY__SEARCH__USAGE_DECAY=0.05`` and so on."""

    rrf_k: int = Field(default=60, ge=1, description="Reciprocal rank fusion constant.")
    candidates: int = Field(
        default=40, ge=10, le=300, description="Candidates asked from each tier before fusion."
    )
    vector_candidates: int | None = Field(
        default=20,
        ge=10,
        le=300,
        description="The vector tier's own depth (more when the limit asks for more; unset: "
        "candidates). Half of candidates: the graph search walks about half as far, and recall "
        "on LoCoMo and the coding benchmark is unchanged (docs/search.md).",
    )
    usage_decay: float = Field(
        default=0.5,
        ge=0.0,
        description="Usage factor: 1 + boost * (1 - 1 / (1 + decay * times used)); a memory "
        "is used when an agent opens it by id or pins it, never by being returned.",
    )
    usage_boost: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description="The most the usage factor lifts a memory used again and again (1 + boost).",
    )
    stale_half_life_days: float = Field(
        default=30.0, gt=0, description="Age at which an observation's staleness is half-way."
    )
    stale_floor: float = Field(
        default=0.6, ge=0, le=1, description="Staleness factor of a very old observation."
    )
    novelty_jaccard: float = Field(
        default=0.8, gt=0, le=1, description="Word overlap at which a result is a near-duplicate."
    )
    min_similarity: float = Field(
        default=0.3, ge=-1, le=1, description="Cosine at which a vector hit counts as good."
    )
    moment_lead_days: float = Field(
        default=7.0,
        ge=0,
        description="A question naming a period: moments searched from this many days before it.",
    )
    moment_lag_days: float = Field(
        default=14.0,
        ge=0,
        description="...and up to this many days after it (events are told after they happen).",
    )
    outside_period: float = Field(
        default=0.67, gt=0, le=1, description="Weight of a moment around the period, not in it."
    )
    superseded_factor: float = Field(
        default=0.5, gt=0, le=1, description="Weight of a moment a newer decision superseded."
    )
    resolution_factor: float = Field(
        default=1.3, ge=1, description="A fix question: weight of a moment stating a cause or fix."
    )
    attempt_factor: float = Field(
        default=0.75, gt=0, le=1, description="A fix question: weight of a failed attempt."
    )
    artifact_factor: float = Field(
        default=1.5,
        ge=1,
        description="A question about a command run or an edit made: weight of a command or edit.",
    )
    own_words_factor: float = Field(
        default=1.5,
        ge=1,
        description="A question about what the user said: weight of the user's own prompts.",
    )
    fix_vector_weight: float | None = Field(
        default=None, ge=0, description="A fix question: the vector tier's RRF weight (None: 0.3)."
    )
    arc_sources: int = Field(
        default=5,
        ge=0,
        le=40,
        description="A fix question: the best moments reporting a problem whose session is read"
        " on for the cause and the fix said after them (0: off).",
    )
    arc_window: int = Field(
        default=40, ge=1, le=500, description="...the events read after each such moment."
    )
    arc_follow: float = Field(
        default=0.9,
        gt=0,
        le=1,
        description="...a cause or fix found so ranks with its report's fused score times this.",
    )
    weak_words_below: float = Field(
        default=0.35,
        ge=0,
        le=1,
        description="Vectors lead when the best BM25 hits hold less than this share of the"
        " query's content words (0: never).",
    )
    no_match_below: float = Field(
        default=0.25,
        ge=-1,
        le=1,
        description="No results (no_match) when the query's best cosine is below this (0: never).",
    )
    fresh_rows: int = Field(
        default=2000,
        ge=0,
        description="When BM25 answered, the TOC and raw scan fallbacks match only the newest "
        "this many TOC nodes and events (those BM25 may not have indexed yet); 0: always the "
        "whole scope.",
    )
    tier_timeout_s: float = Field(default=2.0, gt=0, description="Time limit of one tier.")
    descent_top: int = Field(
        default=5,
        ge=0,
        le=50,
        description="Summaries opened when the indexes have forgotten their detail: the exact "
        "events under them are read from Postgres and scored without an index (0: never).",
    )
    descent_budget_ms: float = Field(
        default=60.0,
        gt=0,
        description="Time budget of that descent; over it, the tiers' answer stands (a note).",
    )
    descent_project: bool = Field(
        default=True,
        description="With no period named, the descent also reads, by the question's words, the "
        "pruned events of the whole project asked about, not only those under the summaries it "
        "opened (off: the summaries' spans only).",
    )
    health_timeout_s: float = Field(default=0.25, gt=0, description="Time limit of healthy().")
    health_ttl_s: float = Field(default=2.0, ge=0, description="How long a health check holds.")
    access_flush_s: float = Field(default=0.5, gt=0, description="Access count write interval.")
    load_embedder: bool = Field(
        default=True, description="Load the embedding model (off: no vector tier)."
    )
    query_precision: Literal["auto", "float32", "int8"] = Field(
        default="auto",
        description="The weights a question is embedded with. auto: int8 through the ONNX "
        "export (a question in about a third of the time; a float32 store ranks as with "
        "float32 questions, docs/search.md), the stored vectors' precision without it.",
    )


class ErasureOptions(BaseModel):
    """``AGENT_MEMORY_QUERY__ERASURE__*``: the coordinator of erasures (docs/lifecycle.md)."""

    check_interval_s: float = Field(
        default=0.5, gt=0, description="How often open erasures are advanced and verified."
    )
    republish_s: float = Field(
        default=30.0, gt=0, description="Publish a request again while a participant is silent."
    )
    reclaim: Literal["off", "vacuum", "full"] = Field(
        default="vacuum",
        description="After a verified erasure, reclaim the deleted rows of the tables it deleted "
        "from, then CHECKPOINT (best-effort). vacuum: plain VACUUM, no lock against reads and "
        "writes, but a page's freed space keeps old bytes until new rows overwrite them. full: "
        "VACUUM FULL, the tables rewritten and no byte of a deleted row left in their files, "
        "each table locked against reads and writes while it is rewritten (docs/lifecycle.md, "
        "what remains on disk after an erasure).",
    )


class RecallOptions(BaseModel):
    """``AGENT_MEMORY_QUERY__RECALL__*``: what ``POST /v1/recall`` gives a prompt unasked."""

    min_match: float = Field(
        default=0.40,
        ge=-1,
        le=1,
        description="Best cosine under which a prompt gets nothing: a memory put in front of "
        "an agent unasked must be likelier right than the search's own no_match floor asks "
        "(0.40: chosen on bench-recall's dev split, tests/bench/README.md).",
    )
    min_words: int = Field(
        default=4,
        ge=0,
        le=50,
        description="Prompts of fewer words get nothing: 'continue', 'run the tests' are about "
        "the turn at hand.",
    )
    candidates: int = Field(
        default=20,
        ge=1,
        le=50,
        description="Search results read before packing the budget (20: at 1,500 tokens a "
        "prompt's snippets reach the twentieth; bench-recall, tests/bench/README.md).",
    )
    max_items: int = Field(
        default=20,
        ge=1,
        le=50,
        description="Most memories given to one prompt. Within it the budget decides: a "
        "snippet of about 60 tokens each, so 300 tokens give 4, 600 give 9.",
    )


class QueryOptions(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8701, ge=1, le=65535)
    pool_size: int = Field(default=4, ge=1)
    search: SearchOptions = SearchOptions()
    erasure: ErasureOptions = ErasureOptions()
    recall: RecallOptions = RecallOptions()


class Settings(RetrievalSettings):
    """Retrieval settings (index engines, model) are shared with the index writers."""

    query: QueryOptions = QueryOptions()
    # shared with the topics service and the pruner (one env var, one default): importance
    # halves every this many days
    topic_half_life_days: float = Field(
        default=DEFAULT_HALF_LIFE_DAYS,
        gt=0,
        description="Topic importance halves for every this many days of age.",
    )

    @model_validator(mode="after")
    def _int8_queries_need_onnx(self) -> Self:
        if self.query.search.query_precision == "int8" and not self.embedding_onnx:
            raise ValueError(
                "query.search.query_precision=int8 runs through the ONNX export: set "
                "AGENT_MEMORY_EMBEDDING_ONNX=true, or AGENT_MEMORY_QUERY__SEARCH__QUERY_PRECISION="
                "auto"
            )
        return self

    def query_embedding(self) -> RetrievalSettings:
        """The retrieval settings a question is embedded with: the shared ones, at
        ``query.search.query_precision``."""
        precision = self.query.search.query_precision
        if precision == "auto":
            precision = "int8" if self.embedding_onnx else self.embedding_precision
        if precision == self.embedding_precision:
            return self
        return self.model_copy(update={"embedding_precision": precision})
