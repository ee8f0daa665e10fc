"""The links search and the TOC read, from the real Postgres: a few each way per event.

A rule repeated across many sessions can be linked to dozens of statements; ``links_of``
returns, per event, the ``SHOWN_LINKS`` newest successors and the ``SHOWN_LINKS`` best
predecessors (explicit first), so that an answer's size does not grow with the store.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg

from agent_memory_search.brainstem.supersede import SHOWN_CHARS, SHOWN_LINKS
from agent_memory_search.supersession_store import links_of

TS = datetime(2026, 5, 1, tzinfo=UTC)


def _event(conn: psycopg.Connection, event_id: str, days: int) -> None:
    conn.execute(
        "INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id, role, type,"
        " text, metadata, received_at) VALUES ('t', %s, %s, 'p', 'a', %s, 'user', 'message',"
        " %s, '{}', now())",
        (event_id, TS + timedelta(days=days), event_id, f"words of {event_id}"),
    )


def _link(conn: psycopg.Connection, older: str, newer: str, score: float, source: str) -> None:
    conn.execute(
        "INSERT INTO memory_supersessions (tenant, older_event_id, newer_event_id, project_id,"
        " source, score) VALUES ('t', %s, %s, 'p', %s, %s)",
        (older, newer, source, score),
    )


async def test_each_event_brings_its_newest_successors_and_best_predecessors(
    pg_dsn: str,
) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        _event(conn, "rule", 10)
        for i in range(6):
            _event(conn, f"new{i}", 20 + i)
            _link(conn, "rule", f"new{i}", 0.6, "detected")
        for i, score in enumerate([0.5, 0.9, 0.7, 0.8, 0.6]):
            _event(conn, f"old{i}", i)
            _link(conn, f"old{i}", "rule", score, "detected")
        _event(conn, "told", 9)
        _link(conn, "told", "rule", 0.1, "explicit")
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        found = await links_of(conn, "t", ["rule", "rule", "nothing"])
    later = sorted(lk.newer_event_id for lk in found.links if lk.older_event_id == "rule")
    earlier = sorted(lk.older_event_id for lk in found.links if lk.newer_event_id == "rule")
    assert SHOWN_LINKS == 3
    assert later == ["new3", "new4", "new5"]
    assert earlier == ["old1", "old3", "told"]
    assert sorted(found.successors) == ["new3", "new4", "new5", "rule"]
    told = next(lk for lk in found.links if lk.older_event_id == "told")
    assert told.older_text == "words of told" and told.newer_ts == TS + timedelta(days=10)


async def test_a_link_shows_both_sides_words_cut_to_what_an_answer_shows(pg_dsn: str) -> None:
    """Only ``SHOWN_CHARS`` of each side are read: a link between two long events (a pasted
    log, a long reply) does not carry their whole text through every search."""
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for event_id, days in (("long-old", 1), ("long-new", 2)):
            conn.execute(
                "INSERT INTO events (tenant, event_id, ts, project_id, agent_id, session_id,"
                " role, type, text, metadata, received_at) VALUES ('t', %s, %s, 'p', 'a', 's',"
                " 'user', 'message', %s, '{}', now())",
                (event_id, TS + timedelta(days=days), f"{event_id} é " + "x" * 3000),
            )
        conn.execute(
            "INSERT INTO memory_supersessions (tenant, older_event_id, newer_event_id,"
            " project_id, source, score, note) VALUES ('t', 'long-old', 'long-new', 'p',"
            " 'explicit', 1.0, 'we moved')"
        )
    async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
        found = await links_of(conn, "t", ["long-new"])
    [link] = found.links
    assert (link.source, link.score, link.note) == ("explicit", 1.0, "we moved")
    assert link.older_text == ("long-old é " + "x" * 3000)[:SHOWN_CHARS]
    assert link.newer_text == ("long-new é " + "x" * 3000)[:SHOWN_CHARS]
    assert link.older_ts == TS + timedelta(days=1)
    assert found.successors["long-new"].text.startswith("long-new é xxx")  # the whole event
