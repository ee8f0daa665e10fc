"""Supersession: a later decision on the same subject replaces the earlier one.

The rules on statements (pure), then the summarizer's consumer on faststream's TestNatsBroker
with the real Postgres: links are found whichever segment is summarized first, explicit links
come from ``metadata.supersedes``, and a redelivery writes nothing new.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import psycopg
from faststream.nats import TestNatsBroker

from agent_memory_common.bus.natslink import NatsLink
from agent_memory_common.contracts.subjects import STREAM_SEGMENTS, segment_subject
from agent_memory_common.db.postgres import make_pool
from agent_memory_summarizer.app import consumer
from agent_memory_summarizer.settings import SummarizerOptions
from agent_memory_summarizer.supersession import (
    MAX_PREDECESSORS,
    Link,
    Statement,
    detect,
    explicit_links,
    match,
    statement_of,
)
from agent_memory_summarizer.supersession_store import record_segment
from tests.toc_support import TENANT, insert_events, make_events, segment_payload, utc

OLD = "We go with RabbitMQ for the payment events: we publish to a topic exchange called events."
NEW = "We replace RabbitMQ with NATS JetStream for the payment events: replay and de-duplication."
OTHER = "We go with insta snapshot tests for the rendering code, so layout changes show up."


def event(
    event_id: str, text: str, ts: datetime, session: str = "s1", **extra: Any
) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "project_id": "payments",
        "session_id": session,
        "ts": ts,
        "role": "user",
        "type": "message",
        "text": text,
        "metadata": {},
        **extra,
    }


def statements(*events: dict[str, Any]) -> list[Any]:
    return [s for e in events if (s := statement_of(e)) is not None]


def every_pair(new: list[Statement], known: list[Statement]) -> list[Link]:
    """``detect`` the plain way: every pair with a new statement on a side is scored."""
    pool = {s.event_id: s for s in [*known, *new]}
    new_ids = {s.event_id for s in new}
    pairs: dict[tuple[str, str], float] = {}
    for newer in pool.values():
        olders = pool.values() if newer.event_id in new_ids else [pool[i] for i in new_ids]
        scored = sorted(
            (-score, -older.ts.timestamp(), older.event_id)
            for older in olders
            if (score := match(newer, older)) > 0
        )
        for neg, _, older_id in scored[:MAX_PREDECESSORS]:
            pairs[(older_id, newer.event_id)] = -neg
    links = [Link(o, n, pool[n].project_id, "detected", v) for (o, n), v in pairs.items()]
    return sorted(links, key=lambda link: (link.older_event_id, link.newer_event_id))


def test_detect_finds_what_scoring_every_pair_finds() -> None:
    """``detect`` scores only the pairs sharing enough words: on many statements drawn from
    a small vocabulary (most pairs share some words, many share enough), it finds exactly the
    links of scoring every pair, the new statements both newer and older than the rest."""
    rng = random.Random(5)
    vocab = [f"w{i:02d}" for i in range(24)]
    start = datetime(2026, 1, 1, tzinfo=UTC)

    def drawn(i: int) -> Statement:
        return Statement(
            event_id=f"e{i:04d}",
            project_id="payments",
            session_id=f"s{rng.randrange(6)}",
            ts=start + timedelta(hours=rng.randrange(2_000)),
            kind=rng.choice(["decision", "decision", "constraint", "preference"]),
            subject=tuple(sorted(rng.sample(vocab, rng.randint(2, 9)))),
            text="",
            cue=rng.random() < 0.3,
        )

    found = 0
    for trial in range(20):
        known = [drawn(trial * 1000 + i) for i in range(rng.randint(0, 300))]
        new = [drawn(trial * 1000 + 900 + i) for i in range(rng.randint(1, 6))]
        if known and rng.random() < 0.5:
            new.append(rng.choice(known))  # a statement of the segment stored before
        expected = every_pair(new, known)
        assert detect(new, known) == expected
        found += len(expected)
    assert found > 100  # the trials make links in both directions, not nothing


def test_a_later_decision_on_the_same_subject_supersedes_the_earlier() -> None:
    old = event("e1", OLD, datetime(2026, 5, 1, tzinfo=UTC), "s1")
    new = event("e2", NEW, datetime(2026, 9, 1, tzinfo=UTC), "s2")
    other = event("e3", OTHER, datetime(2026, 6, 1, tzinfo=UTC), "s3")
    links = detect(statements(new), statements(old, other))
    assert [(lk.older_event_id, lk.newer_event_id, lk.source) for lk in links] == [
        ("e1", "e2", "detected")
    ]
    # found from either side: the older one arriving after the newer one links the same pair
    again = detect(statements(old), statements(new, other))
    assert [(lk.older_event_id, lk.newer_event_id) for lk in again] == [("e1", "e2")]


def test_tool_output_chatter_and_a_same_session_elaboration_supersede_nothing() -> None:
    old = event("e1", OLD, datetime(2026, 5, 1, tzinfo=UTC))
    tool = event("t1", NEW, datetime(2026, 9, 1, tzinfo=UTC), role="tool", type="tool_result")
    assert statement_of(tool) is None
    assert (
        statement_of(event("c1", "Thanks, that looks good.", datetime(2026, 9, 1, tzinfo=UTC)))
        is None
    )
    # the same session, no change cue: an elaboration, not a reversal
    more = event(
        "e2",
        "We go with RabbitMQ events for payment refunds too.",
        datetime(2026, 5, 1, 1, tzinfo=UTC),
    )
    assert detect(statements(more), statements(old)) == []


def test_metadata_supersedes_is_an_explicit_link_with_its_note() -> None:
    note = event(
        "n1",
        "Decision: payouts use the new ledger.",
        datetime(2026, 9, 1, tzinfo=UTC),
        metadata={"supersedes": ["e1", "e1", "n1"], "supersede_note": "old ledger retired"},
    )
    links = explicit_links([note])
    assert [(lk.older_event_id, lk.newer_event_id, lk.source, lk.note) for lk in links] == [
        ("e1", "n1", "explicit", "old ledger retired")
    ]


def _links(dsn: str) -> list[tuple[str, str, str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT older_event_id, newer_event_id, source FROM memory_supersessions ORDER BY 1, 2"
        ).fetchall()
    return [(str(a), str(b), str(c)) for a, b, c in rows]


async def test_the_summarizer_links_reversals_in_any_order_once(pg_dsn: str) -> None:
    old = make_events("old", utc(2026, 5, 4, 10), 2, project="payments", session="a", texts=[OLD])
    new = make_events("new", utc(2026, 9, 8, 10), 2, project="payments", session="b", texts=[NEW])
    insert_events(pg_dsn, old + new)
    with psycopg.connect(pg_dsn) as conn:
        conn.execute(
            "INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id, role,"
            " type, text, metadata, received_at) VALUES (%s, 'note-1', %s, 'payments', 'mcp',"
            " 'c', 'assistant', 'note', 'Payment events stay on JetStream.', %s, %s)",
            (
                TENANT,
                utc(2026, 9, 9),
                orjson.dumps({"supersedes": ["old-00000"]}).decode(),
                utc(2026, 9, 9),
            ),
        )
    note_seg = segment_payload(new[:1], segment_id="sg_note")
    note_seg.update({"session_id": "c", "event_ids": ["note-1"]})
    link = NatsLink(["nats://127.0.0.1:1"], name="test")
    pool = make_pool(pg_dsn)
    await pool.open()
    consumer(link, pool, SummarizerOptions(), None)
    subject = segment_subject(TENANT, "payments")
    payloads = [
        segment_payload(new, segment_id="sg_new"),  # the newer decision is summarized first
        segment_payload(old, segment_id="sg_old"),
        note_seg,
    ]
    try:
        async with TestNatsBroker(link.broker) as broker:
            for p in payloads:
                await broker.publish(orjson.dumps(p), subject, stream=STREAM_SEGMENTS)
            first = _links(pg_dsn)
            for p in payloads:  # redelivered
                await broker.publish(orjson.dumps(p), subject, stream=STREAM_SEGMENTS)
    finally:
        await pool.close()
    assert ("old-00000", "new-00000", "detected") in first
    assert ("old-00000", "note-1", "explicit") in first
    assert all(older.startswith("old") for older, _, _ in first)
    assert _links(pg_dsn) == first


RIVALS = [
    OLD,
    "We go with RabbitMQ for the payment events and for the refund events.",
    "Decision: payment events go through RabbitMQ, with a dead letter queue for replay.",
]


async def test_a_newer_statement_keeps_its_two_best_predecessors_whatever_the_order(
    pg_dsn: str,
) -> None:
    """The newer decision is summarized first, then three older ones, each in a segment of
    its own: each later segment offers it a candidate, and it keeps the best two of all."""
    new = make_events("new", utc(2026, 9, 8, 10), 1, project="payments", session="n", texts=[NEW])
    olders = [
        make_events(
            f"old{i}", utc(2026, 5, 4 + i, 10), 1, project="payments", session=f"o{i}", texts=[text]
        )
        for i, text in enumerate(RIVALS)
    ]
    insert_events(pg_dsn, new + [e for group in olders for e in group])
    as_rows = [event(e.event_id, e.text, e.ts, e.session_id) for g in olders for e in g]
    newer = statements(event("new-00000", NEW, utc(2026, 9, 8, 10), "n"))
    rivals = statements(*as_rows)
    assert len(rivals) == 3 and all(match(newer[0], r) > 0 for r in rivals)
    best = {(lk.older_event_id, lk.newer_event_id) for lk in detect(newer, rivals)}
    assert len(best) == MAX_PREDECESSORS
    link = NatsLink(["nats://127.0.0.1:1"], name="test")
    pool = make_pool(pg_dsn)
    await pool.open()
    consumer(link, pool, SummarizerOptions(), None)
    subject = segment_subject(TENANT, "payments")
    payloads = [segment_payload(new, segment_id="sg_new")]
    payloads += [segment_payload(g, segment_id=f"sg_old{i}") for i, g in enumerate(olders)]
    try:
        async with TestNatsBroker(link.broker) as broker:
            for p in payloads:
                await broker.publish(orjson.dumps(p), subject, stream=STREAM_SEGMENTS)
            first = _links(pg_dsn)
            for p in reversed(payloads):  # redelivered, in the other order
                await broker.publish(orjson.dumps(p), subject, stream=STREAM_SEGMENTS)
    finally:
        await pool.close()
    assert {(older, newer) for older, newer, _ in first if newer == "new-00000"} == best
    assert _links(pg_dsn) == first


CACHE_OLD = "We go with Redis for the session cache and the rate limiter."
CACHE_NEAR = "We go with Redis for the cache of rendered pages."
CACHE_NEW = "We replace Redis with Valkey for the session cache, keeping the queue elsewhere."


async def test_a_stored_statement_sharing_exactly_three_words_is_read_and_linked(
    pg_dsn: str,
) -> None:
    """``record_segment`` reads only the stored statements that share ``MIN_SHARED`` words with
    the new ones: one sharing exactly three (session, cache, redis) is linked, one sharing two
    is not, and the links are those ``detect`` finds among every statement."""
    older = make_events("cold", utc(2026, 1, 5, 9), 1, project="payments", session="a",
                        texts=[CACHE_OLD])  # fmt: skip
    near = make_events("cnear", utc(2026, 1, 6, 9), 1, project="payments", session="b",
                       texts=[CACHE_NEAR])  # fmt: skip
    new = make_events("cnew", utc(2026, 2, 2, 9), 1, project="payments", session="c",
                      texts=[CACHE_NEW])  # fmt: skip
    insert_events(pg_dsn, older + near + new)
    rows = [event(e.event_id, e.text, e.ts, e.session_id) for e in older + near + new]
    known = statements(*rows)
    assert len(known) == 3
    expected = detect(known[2:], known)
    assert [(lk.older_event_id, lk.newer_event_id) for lk in expected] == [
        ("cold-00000", "cnew-00000")
    ]
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        for group in (older, near, new):
            await record_segment(conn, TENANT, "payments", [e.event_id for e in group])
        await conn.commit()
    assert _links(pg_dsn) == [("cold-00000", "cnew-00000", "detected")]
