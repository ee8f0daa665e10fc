"""Recorder: decode -> append to Postgres -> announce on ``mem.recorded.*``.

The announcement is made for every message, inserted or already present, because a crash
between commit and publish must still let later stages hear of the event; JetStream's
de-duplication (same message id) absorbs the repeat.
"""

from __future__ import annotations

from collections.abc import Sequence

from nats.aio.msg import Msg
from psycopg import AsyncConnection

from agent_memory_common.consumer import Publication
from agent_memory_common.event import Event
from agent_memory_common.subjects import msg_id, recorded_subject
from agent_memory_recorder.store import insert_events


async def record(conn: AsyncConnection, msgs: Sequence[Msg]) -> list[Publication]:
    events = [Event.from_wire(m.data) for m in msgs]
    await insert_events(conn, events)
    return [
        Publication(
            subject=recorded_subject(e.tenant, e.project_id),
            payload=m.data,
            msg_id=msg_id(e.tenant, e.event_id),
        )
        for e, m in zip(events, msgs, strict=True)
    ]
