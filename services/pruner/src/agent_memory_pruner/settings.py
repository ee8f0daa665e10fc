"""Pruner settings: ``AGENT_MEMORY_PRUNER__*``, the retrieval ones (which engines to prune), and
the topic rule the topics service reads too (``AGENT_MEMORY_TOPIC_HALF_LIFE_DAYS``,
``AGENT_MEMORY_TOPIC_PRUNE_BELOW``)."""

from __future__ import annotations

from pydantic import Field

from agent_memory_retrieval.lifecycle.retention import EpisodeOptions
from agent_memory_retrieval.lifecycle.topic_prune import TopicPruneSettings


class PrunerOptions(EpisodeOptions):
    host: str = "127.0.0.1"
    port: int = Field(default=8704, ge=1, le=65535)
    interval_s: float = Field(
        default=3600.0, gt=0, description="Seconds between scheduled runs (default hourly)."
    )
    first_run_after_s: float = Field(
        default=60.0, ge=0, description="Delay of the first scheduled run after start."
    )
    page_size: int = Field(default=1000, ge=1, le=100_000, description="Entries per delete.")


class Settings(TopicPruneSettings):
    pruner: PrunerOptions = PrunerOptions()
