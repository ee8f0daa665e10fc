"""Taking part in a cascade erasure: the plumbing every service that owns data shares.

The query service accepts ``POST /v1/erasures``, writes the audit row and the tombstones
(``erased_events``: the erased event ids, their project, session and time) and publishes an
``ErasureRequest`` on ``mem.erasure.<tenant>.<project>``. Each participant has a durable
consumer of its own on the ERASURE stream; per request it deletes its own part, in the
runner's transaction, and writes its report (counts per store) in that same transaction, so a
kill -9 at any point either leaves nothing or everything, and the redelivery finishes it. The
query service's verifier marks the erasure verified once every registered participant has
reported and no store holds the erased ids or text any more.

Joining (a new service that owns data, e.g. topics), in its composition root::

    from agent_memory_common.bus.erasure import ErasureResult, erasure_runner
    from agent_memory_common.contracts.messages import ErasureRequest

    async def erase_topics(conn: AsyncConnection, req: ErasureRequest) -> ErasureResult:
        ids = await erased_event_ids(conn, req.erasure_id)      # the tombstoned event ids
        cur = await conn.execute(
            "DELETE FROM topic_links WHERE tenant = %s AND event_id = ANY(%s)",
            (req.tenant, ids),
        )
        return ErasureResult({"topic_links": cur.rowcount})

    runners.append(await erasure_runner(link, pool, "topics", erase_topics))

An eraser must be idempotent (a redelivery runs it again; the first report is kept) and may
raise ``TransientError`` to be retried later, e.g. while waiting for the new versions another
participant's erasure causes. Its own tables only: what it derived from erased events, it finds
through the tombstones, never through another service's tables.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import orjson
from nats.aio.msg import Msg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from agent_memory_common.bus.consumer import ConsumerRunner, Handler, Publication
from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.bus.streams import ConsumerSpec
from agent_memory_common.contracts.messages import ErasureRequest
from agent_memory_common.contracts.subjects import ERASURE_WILDCARD, STREAM_ERASURE

# The participants of this repository and what each erases (docs/asyncapi.json, docs/lifecycle.md).
DOCUMENTED_PARTICIPANTS = {
    "recorder": "the events",
    "segmenter": "the segments (sessions re-segmented without the erased events; retractions "
    "and new versions published) and the old segment versions",
    "summarizer": "the TOC node versions made from erased events (rollups included) and their "
    "grips, once the new versions exist",
    "embedder": "the vector entries of the erased events and grips (neighbours re-embedded)",
    "bm25-indexer": "the BM25 documents of the erased events and grips (neighbours re-indexed)",
    "query": "the episodes (with their actions) and playbook lessons of the scope",
    "topics": "the segments citing erased events and the topics built on them (their other "
    "members re-clustered)",
}


@dataclass
class ErasureResult:
    """What one participant erased (counts per store) and the messages its erasure causes
    (e.g. the segmenter's retractions); the messages are published after the commit."""

    counts: dict[str, int]
    publications: list[Publication] = field(default_factory=list)


Eraser = Callable[[AsyncConnection, ErasureRequest], Awaitable[ErasureResult]]


def participant_spec(name: str) -> ConsumerSpec:
    """The participant's durable on the ERASURE stream: one request per batch (each is a
    transaction of its own). The default ack wait: a participant killed with a request in hand
    gets it again 30 s later; one still busy after 30 s (a large project) gets a second copy,
    which waits on the first one's locks and then finds nothing left to erase."""
    return ConsumerSpec(
        durable=f"erasure-{name}",
        stream=STREAM_ERASURE,
        filter_subject=ERASURE_WILDCARD,
        batch_size=1,
    )


async def allow_erasure(conn: AsyncConnection) -> None:
    """Lift append-only for this transaction (DELETE only; migration 0011)."""
    await conn.execute("SELECT set_config('agent_memory.erasure', 'on', true)")


async def erased_event_ids(conn: AsyncConnection, erasure_id: str) -> list[str]:
    cur = await conn.execute(
        "SELECT event_id FROM erased_events WHERE erasure_id = %s ORDER BY event_id",
        (erasure_id,),
    )
    return [r[0] for r in await cur.fetchall()]


async def erased_sessions(conn: AsyncConnection, erasure_id: str) -> list[tuple[str, str]]:
    """(project_id, session_id) of every session that lost an event."""
    cur = await conn.execute(
        "SELECT DISTINCT project_id, session_id FROM erased_events WHERE erasure_id = %s"
        " ORDER BY 1, 2",
        (erasure_id,),
    )
    return [(r[0], r[1]) for r in await cur.fetchall()]


async def erased_items(conn: AsyncConnection, erasure_id: str, kind: str) -> list[str]:
    """Derived ids named at request time (``grip``: grips citing an erased event)."""
    cur = await conn.execute(
        "SELECT item_id FROM erasure_items WHERE erasure_id = %s AND kind = %s ORDER BY 1",
        (erasure_id, kind),
    )
    return [r[0] for r in await cur.fetchall()]


async def tombstoned(conn: AsyncConnection, tenant: str, event_ids: Sequence[str]) -> set[str]:
    """Which of these event ids were erased: they must never come back."""
    if not event_ids:
        return set()
    cur = await conn.execute(
        "SELECT event_id FROM erased_events WHERE tenant = %s AND event_id = ANY(%s::text[])",
        (tenant, list(event_ids)),
    )
    return {r[0] for r in await cur.fetchall()}


async def register_participant(pool: AsyncConnectionPool, name: str) -> None:
    """From now on, an erasure is complete only once ``name`` reported."""
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO erasure_participants (name) VALUES (%s) ON CONFLICT DO NOTHING", (name,)
        )


def erasure_handler(name: str, erase: Eraser) -> Handler:
    """The batch handler of a participant: erase, then report, in the runner's transaction."""

    async def handle(conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
        publications: list[Publication] = []
        for msg in msgs:
            request = ErasureRequest.from_wire(msg.data)
            await allow_erasure(conn)
            result = await erase(conn, request)
            # a redelivery erases again (idempotent, finds nothing) but keeps the first counts
            await conn.execute(
                "INSERT INTO erasure_reports (erasure_id, participant, counts)"
                " VALUES (%s, %s, %s::jsonb) ON CONFLICT DO NOTHING",
                (request.erasure_id, name, orjson.dumps(result.counts).decode()),
            )
            publications.extend(result.publications)
        return publications

    handle.__doc__ = f"Erase {name}'s part of an erasure and report the counts."
    return handle


def participant_runner(
    link: NatsLink, pool: AsyncConnectionPool, name: str, erase: Eraser
) -> ConsumerRunner:
    """The participant's runner, not registered yet (``register_participant``)."""
    return ConsumerRunner(link, pool, participant_spec(name), erasure_handler(name, erase))


async def erasure_runner(
    link: NatsLink, pool: AsyncConnectionPool, name: str, erase: Eraser
) -> ConsumerRunner:
    """Register ``name`` as a participant and return its runner (``run(stop)`` it beside the
    service's other runners)."""
    await register_participant(pool, name)
    return participant_runner(link, pool, name, erase)
