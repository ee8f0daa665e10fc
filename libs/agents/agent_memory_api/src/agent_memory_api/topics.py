"""``/v1/topics``: the themes of a project, as the query service shows them (docs/topics.md)."""

from __future__ import annotations

from pydantic import with_config
from typing_extensions import TypedDict

from agent_memory_api.common import CLOSED, Timestamp


@with_config(CLOSED)
class TopicSummary(TypedDict):
    """A theme: its label and keywords, and its importance (members' salience, halved every
    half-life of age, as of the end of the window asked for, else of the project's latest
    activity)."""

    topic_id: str
    project_id: str
    label: str
    keywords: list[str]
    importance: float
    size: int
    first_ts: Timestamp
    last_ts: Timestamp
    session_ids: list[str]


@with_config(CLOSED)
class TopicList(TypedDict):
    topics: list[TopicSummary]


@with_config(CLOSED)
class TopicMember(TypedDict):
    """A segment of the topic (a TOC node), with the events it summarises."""

    node_id: str
    session_id: str
    title: str
    event_ids: list[str]
    start_ts: Timestamp
    end_ts: Timestamp


@with_config(CLOSED)
class RelatedTopic(TypedDict):
    topic_id: str
    label: str
    weight: float


@with_config(CLOSED)
class TopicDetail(TopicSummary):
    members: list[TopicMember]
    related: list[RelatedTopic]
    parent_ids: list[str]


@with_config(CLOSED)
class TopicHit(TopicSummary):
    score: float  # cosine of the query to the topic's centroid (or the share of words matched)


@with_config(CLOSED)
class TopicSearchAnswer(TypedDict):
    query: str
    topics: list[TopicHit]
