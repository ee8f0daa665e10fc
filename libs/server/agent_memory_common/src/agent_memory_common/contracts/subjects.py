"""JetStream streams and subjects, named so that they read like sentences.

| subject                                  | publisher | consumers                        |
|------------------------------------------|-----------|----------------------------------|
| ``mem.events.<tenant>.<project>``        | gateway   | recorder                         |
| ``mem.recorded.<tenant>.<project>``      | recorder  | later stages (segmenter, ...)    |
| ``mem.segments.<tenant>.<project>``      | segmenter | summarizer                       |
| ``mem.toc.<tenant>.<project>``           | summarizer| search indexers                  |
| ``mem.erasure.<tenant>.<project>``     | query     | every service that owns data     |
| ``mem.dlq.<consumer>``                   | any runner| an operator                      |
"""

from __future__ import annotations

import functools
import hashlib
import re

STREAM_EVENTS = "EVENTS"
STREAM_RECORDED = "RECORDED"
STREAM_DLQ = "DEADLETTER"
STREAM_SEGMENTS = "SEGMENTS"
STREAM_TOC = "TOC"
STREAM_ERASURE = "ERASURE"

EVENTS_WILDCARD = "mem.events.>"
RECORDED_WILDCARD = "mem.recorded.>"
DLQ_WILDCARD = "mem.dlq.>"
SEGMENTS_WILDCARD = "mem.segments.>"
TOC_WILDCARD = "mem.toc.>"
ERASURE_WILDCARD = "mem.erasure.>"

_SAFE_TOKEN = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
# Subjects are built for every event on the hot paths (gateway, recorder) and the same
# (tenant, project) pairs repeat endlessly: each builder keeps its answers, bounded, here and
# nowhere else (subject_token runs a regex, and a hash for unsafe ids).
SUBJECT_CACHE_SIZE = 10_000
_cached = functools.lru_cache(maxsize=SUBJECT_CACHE_SIZE)


def subject_token(value: str) -> str:
    """Make an id usable as one subject token.

    Project ids can be paths or contain dots, spaces and wildcards, which NATS reads as syntax.
    Safe ids stay readable; anything else becomes a short stable hash, so a filter subject for
    one project still matches exactly that project.
    """
    if _SAFE_TOKEN.match(value):
        return value
    return "h" + hashlib.blake2b(value.encode(), digest_size=8).hexdigest()


@_cached
def event_subject(tenant: str, project_id: str) -> str:
    return f"mem.events.{subject_token(tenant)}.{subject_token(project_id)}"


@_cached
def recorded_subject(tenant: str, project_id: str) -> str:
    return f"mem.recorded.{subject_token(tenant)}.{subject_token(project_id)}"


@_cached
def segment_subject(tenant: str, project_id: str) -> str:
    return f"mem.segments.{subject_token(tenant)}.{subject_token(project_id)}"


@_cached
def toc_subject(tenant: str, project_id: str) -> str:
    """Each new TOC node version; message id ``<tenant>/<node_id>/v<version>``."""
    return f"mem.toc.{subject_token(tenant)}.{subject_token(project_id)}"


@_cached
def erasure_subject(tenant: str, project_id: str) -> str:
    """Erasure requests; message id ``<tenant>/<erasure_id>``."""
    return f"mem.erasure.{subject_token(tenant)}.{subject_token(project_id)}"


def dlq_subject(consumer: str) -> str:
    return f"mem.dlq.{subject_token(consumer)}"


def msg_id(tenant: str, event_id: str) -> str:
    """The JetStream de-duplication key: event ids are unique per tenant, not globally."""
    return f"{tenant}/{event_id}"
