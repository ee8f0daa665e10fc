"""Topics settings: ``AGENT_MEMORY_TOPICS__*``, plus three top-level ones the query service
shares (``AGENT_MEMORY_TOPIC_HALF_LIFE_DAYS``, ``AGENT_MEMORY_TOPIC_PRUNE_BELOW``) or that the
retention pruner may take over (``AGENT_MEMORY_TOPIC_PRUNE_INTERVAL``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_retrieval.settings import RetrievalSettings
from agent_memory_topics.clustering import ClusterParams


class TopicsOptions(BaseModel):
    batch_size: int = Field(default=64, ge=1, le=2000, description="TOC versions per fetch.")
    pool_size: int = Field(default=3, ge=2)
    min_cluster_size: int = Field(default=3, ge=2, description="HDBSCAN min_cluster_size.")
    min_samples: int = Field(default=2, ge=1, description="HDBSCAN min_samples.")
    dims: int = Field(default=32, ge=2, description="PCA dimensions clustered.")
    max_sample: int = Field(
        default=5000, ge=100, description="Segments HDBSCAN sees; the rest join by nearest."
    )
    assign_similarity: float = Field(
        default=0.35, ge=-1, le=1, description="Cosine to a topic for a segment to join it."
    )
    recluster_min_new: int = Field(
        default=20, ge=1, description="New segments that trigger a full re-cluster..."
    )
    recluster_share: float = Field(
        default=0.1, ge=0, description="...and at least this share of the project's size."
    )
    recluster_every_s: float = Field(
        default=86_400.0, gt=0, description="Re-cluster anything new at least this often."
    )
    check_interval_s: float = Field(
        default=10.0, gt=0, description="How often the service looks for due projects."
    )
    edge_min_weight: float = Field(default=0.35, ge=0, le=1)
    edges_per_topic: int = Field(default=5, ge=1)

    def params(self) -> ClusterParams:
        return ClusterParams(
            min_cluster_size=self.min_cluster_size,
            min_samples=self.min_samples,
            dims=self.dims,
            max_sample=self.max_sample,
            assign_similarity=self.assign_similarity,
        )


class Settings(RetrievalSettings):
    topics: TopicsOptions = TopicsOptions()
    topic_half_life_days: float = Field(
        default=30.0, gt=0, description="Importance halves for every this many days of age."
    )
    topic_prune_below: float = Field(
        default=0.05, ge=0, description="Topics whose importance now is lower are pruned."
    )
    topic_prune_interval: float = Field(
        default=3600.0, ge=0, description="Seconds between prunes (0: never)."
    )
