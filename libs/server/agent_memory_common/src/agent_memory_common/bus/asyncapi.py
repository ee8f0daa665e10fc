"""The pipeline's subjects as faststream declares them, and the AsyncAPI document it generates.

The subscribers are the very declarations the consumer services run (``consumer.declare_consumer``
over ``streams.PIPELINE_CONSUMERS``); the publishers are the subject families and their streams.
``docs/asyncapi.json`` is this document, and a test checks that the committed file is what the
code generates. Regenerate it with:

    .venv/bin/python -m agent_memory_common.bus.asyncapi > docs/asyncapi.json
"""

from __future__ import annotations

import json
import sys

from faststream.nats import JStream, NatsBroker
from faststream.specification import AsyncAPI

from agent_memory_common.bus.consumer import declare_consumer
from agent_memory_common.bus.erasure import DOCUMENTED_PARTICIPANTS, participant_spec
from agent_memory_common.bus.streams import PIPELINE_CONSUMERS
from agent_memory_common.contracts.event import Event
from agent_memory_common.contracts.messages import ErasureRequest
from agent_memory_common.contracts.subjects import (
    STREAM_DLQ,
    STREAM_ERASURE,
    STREAM_EVENTS,
    STREAM_RECORDED,
    STREAM_SEGMENTS,
    STREAM_TOC,
)

TITLE = "agent-memory pipeline"
VERSION = "0.1.0"
# A documentation server: the real one comes from AGENT_MEMORY_NATS_URL.
SERVER = "nats://127.0.0.1:4222"

# (durable) -> what it does with each message; the subject and stream come from its spec
CONSUMERS = {
    "recorder": "Appends each event to Postgres `events` (ON CONFLICT (tenant, event_id) DO "
    "NOTHING), one transaction per batch; after the commit announces each on mem.recorded, "
    "then acks.",
    "segmenter": "Groups recorded events into segments per session (idempotent by event "
    "position); a closed segment goes to the outbox and out on mem.segments.",
    "summarizer": "Summarizes each segment into TOC nodes and grips (natural keys); each new "
    "node version goes out on mem.toc.",
    "embedder": "Embeds each recorded event into the vector index (upsert by event id).",
    "embedder-toc": "Embeds each TOC node version into the vector index (upsert by node id).",
    "bm25-indexer": "Adds each recorded event to the text index (upsert by event id).",
    "bm25-indexer-toc": "Adds each TOC node version to the text index (upsert by node id).",
    "topics": "Embeds each segment node version and joins it to the nearest topic (idempotent "
    "by node id and version); a timer re-clusters projects into topics.",
}

# (address, stream, title, description, payload schema)
PUBLISHED = (
    (
        "mem.events.{tenant}.{project}",
        STREAM_EVENTS,
        "gateway:mem.events",
        "Published by the gateway before it answers 202; Nats-Msg-Id = <tenant>/<event_id>.",
        Event,
    ),
    (
        "mem.recorded.{tenant}.{project}",
        STREAM_RECORDED,
        "recorder:mem.recorded",
        "Published by the recorder after its commit, the event as received; "
        "Nats-Msg-Id = <tenant>/<event_id>.",
        Event,
    ),
    (
        "mem.segments.{tenant}.{project}",
        STREAM_SEGMENTS,
        "segmenter:mem.segments",
        "Published by the segmenter for each closed segment (from its outbox); "
        "Nats-Msg-Id = the segment's id. JSON.",
        bytes,
    ),
    (
        "mem.toc.{tenant}.{project}",
        STREAM_TOC,
        "summarizer:mem.toc",
        "Published by the summarizer (and the query service's pins) for each new TOC node "
        "version; Nats-Msg-Id = <tenant>/<node_id>/v<version>. JSON.",
        bytes,
    ),
    (
        "mem.erasure.{tenant}.{project}",
        STREAM_ERASURE,
        "query:mem.erasure",
        "Published by the query service when it accepts POST /v1/erasures, after the audit "
        "row and the tombstones are committed; Nats-Msg-Id = <tenant>/<erasure_id>. Ids only.",
        ErasureRequest,
    ),
    (
        "mem.dlq.{consumer}",
        STREAM_DLQ,
        "consumers:mem.dlq",
        "A poison message, as it was received, terminated on its own stream; headers "
        "Agent-Memory-Error, Agent-Memory-Subject, Agent-Memory-Consumer. Read by an operator.",
        bytes,
    ),
)


def pipeline_broker() -> NatsBroker:
    """A broker carrying every subscriber and publisher of the pipeline (never connected)."""
    broker = NatsBroker(SERVER, description="JetStream; file storage, 10-minute dedup window")
    for spec in PIPELINE_CONSUMERS:
        about = (
            f"Durable pull consumer `{spec.durable}` on stream `{spec.stream}`, explicit acks "
            f"after the commit (ack wait {spec.ack_wait_s:g} s, poison to "
            f"mem.dlq.{spec.durable}). {CONSUMERS[spec.durable]}"
        )
        subscriber = declare_consumer(broker, spec, description=about)

        @subscriber
        async def handle() -> None:  # the services register ConsumerRunner.process
            """Documentation only."""

    for name, part in DOCUMENTED_PARTICIPANTS.items():
        spec = participant_spec(name)
        about = (
            f"Durable pull consumer `{spec.durable}` on stream `{spec.stream}`, one request per "
            f"batch, explicit ack after the commit. Erases {part} and writes its report "
            "(erasure_reports) in the same transaction; idempotent."
        )
        subscriber = declare_consumer(broker, spec, description=about)

        @subscriber
        async def erase() -> None:
            """Documentation only."""

    for address, stream, title, description, schema in PUBLISHED:
        broker.publisher(
            address,
            stream=JStream(stream, declare=False),
            title=title,
            description=f"Stream `{stream}`. {description}",
            schema=schema,
        )
    return broker


def document() -> str:
    """The AsyncAPI 3.0 document, as committed in ``docs/asyncapi.json``."""
    spec = AsyncAPI(
        pipeline_broker(),
        title=TITLE,
        version=VERSION,
        description="Subjects, streams and durable consumers of agent-memory's event pipeline.",
        schema_version="3.0.0",
    ).to_specification()
    return json.dumps(json.loads(spec.to_json()), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    sys.stdout.write(document())
