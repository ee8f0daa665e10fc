"""Topics settings: ``AGENT_MEMORY_TOPICS__*``, plus three top-level ones:
``AGENT_MEMORY_TOPIC_HALF_LIFE_DAYS`` (shared with the query service and the retention pruner),
``AGENT_MEMORY_TOPIC_PRUNE_BELOW`` (shared with the pruner, which prunes on its schedule; both
from ``agent_memory_retrieval.lifecycle.topic_prune``) and
``AGENT_MEMORY_TOPIC_PRUNE_INTERVAL`` (this
service's own prune timer, off by default: for a deployment without the pruner)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent_memory_retrieval.lifecycle.topic_prune import TopicPruneSettings
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


class Settings(TopicPruneSettings):
    topics: TopicsOptions = TopicsOptions()
    topic_prune_interval: float = Field(
        default=0.0,
        ge=0,
        description=(
            "Seconds between this service's own prunes (0: never, the default: the retention "
            "pruner prunes faded topics on its schedule and reports them). Set it only for a "
            "deployment without the pruner."
        ),
    )
