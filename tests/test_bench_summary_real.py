"""``bench-summary-real`` (``tests/bench/bench_summary_real.py``): the span a compaction summary
summarizes, what is held back from the stack, which segment nodes are in a span, on synthetic
transcripts and events written here (no stack)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.bench.bench_summary_real import (
    Node,
    compacted_lines,
    find_spans,
    nodes_in,
    our_text,
    posted,
    telltales,
    transcript_tree,
)

SESSION = "s-kiln"
SUMMARY_TEXT = "The kiln conversation so far: the timer was fixed and the glaze queue persisted."


def _line(uuid: str, parent: str | None, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "parentUuid": parent, **extra}


def _boundary(uuid: str, logical: str) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": uuid,
        "parentUuid": None,
        "logicalParentUuid": logical,
    }


def _event(
    n: int, uuid: str, kind: str = "message", role: str = "user", **meta: Any
) -> dict[str, Any]:
    return {
        "event_id": f"e{n:02d}",
        "session_id": SESSION,
        "project_id": "kiln",
        "ts": f"2026-01-04T05:{n:02d}:00Z",
        "type": kind,
        "role": role,
        "text": SUMMARY_TEXT
        if meta.get("runtime_kind") == "compact_summary"
        else f"Message {n} about the kiln.",
        "metadata": {"transcript_uuid": uuid, **meta},
    }


def _tree(tmp_path: Path, lines: list[dict[str, Any]]) -> dict[str, Any]:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    return dict(transcript_tree([path]))


def test_chain_stops_at_the_previous_compaction_and_follows_a_resumed_branch(
    tmp_path: Path,
) -> None:
    # a -> b -> [boundary 1] -> S1 -> c -> d      (first compaction, then more work)
    #      b -> e -> [boundary 2] -> S2           (resumed from b: S2 summarizes a, b, e)
    #                     d -> [boundary 3] -> S3 (S3 summarizes c, d only)
    lines = [
        _line("a", None),
        _line("b", "a"),
        _boundary("k1", "b"),
        _line("S1", "k1", isCompactSummary=True),
        _line("c", "S1"),
        _line("d", "c"),
        _line("e", "b"),
        _boundary("k2", "e"),
        _line("S2", "k2", isCompactSummary=True),
        _boundary("k3", "d"),
        _line("S3", "k3", isCompactSummary=True),
    ]
    tree = _tree(tmp_path, lines)
    assert compacted_lines(tree, "S1") == {"a", "b"}
    assert compacted_lines(tree, "S2") == {"a", "b", "e"}
    assert compacted_lines(tree, "S3") == {"c", "d"}
    assert compacted_lines(tree, "unknown") == set()


def test_spans_by_chain_and_by_time(tmp_path: Path) -> None:
    summary = {"runtime_kind": "compact_summary", "compact_summary": True}
    events = [
        _event(1, "a"),
        _event(2, "a", kind="tool_call", role="assistant"),
        _event(3, "b", role="assistant"),
        _event(4, "b", kind="runtime", role="system", runtime_kind="reminder"),
        _event(5, "S1", kind="runtime", role="system", **summary),
        _event(6, "c"),
        _event(7, "d", role="assistant"),
        _event(8, "S3", kind="runtime", role="system", **summary),
    ]
    tree = _tree(
        tmp_path,
        [
            _line("a", None),
            _line("b", "a"),
            _boundary("k1", "b"),
            _line("S1", "k1", isCompactSummary=True),
            _line("c", "S1"),
            _line("d", "c"),
            _boundary("k3", "d"),
            _line("S3", "k3", isCompactSummary=True),
        ],
    )
    chain = find_spans(events, tree, {"kiln": "dev"})
    assert [(s.rule, sorted(s.event_ids)) for s in chain] == [
        ("chain", ["e01", "e02", "e03", "e04"]),
        ("chain", ["e06", "e07"]),
    ]
    # the baselines read the user's and the model's messages only
    assert chain[0].texts == ("Message 1 about the kiln.", "Message 3 about the kiln.")
    assert chain[0].split == "dev" and chain[0].reference == SUMMARY_TEXT
    # without the transcript's tree: the session's events since the previous summary
    timed = find_spans(events, {}, {"kiln": "dev"})
    assert [(s.rule, sorted(s.event_ids)) for s in timed] == [
        ("time", ["e01", "e02", "e03", "e04"]),
        ("time", ["e06", "e07"]),
    ]
    # the references are never posted; their opening is the telltale, once
    assert [e["event_id"] for e in posted(events)] == ["e01", "e02", "e03", "e04", "e06", "e07"]
    assert telltales(events) == [SUMMARY_TEXT.lower()[:60]]


def test_a_node_is_in_a_span_by_half_its_own_events(tmp_path: Path) -> None:
    summary = {"runtime_kind": "compact_summary"}
    events = [_event(n, f"u{n}") for n in range(1, 5)]
    events.append(_event(5, "S", kind="runtime", role="system", **summary))
    (span,) = find_spans(events, {}, {"kiln": "dev"})

    def node(name: str, ids: tuple[str, ...], bullets: int = 1) -> Node:
        b = tuple({"text": f"{name} bullet {i}."} for i in range(bullets))
        return Node("kiln", SESSION, name, f"{name} title", b, ids)

    inside = node("in", ("e01", "e02"), bullets=2)
    half = node("half", ("e04", "e09"))  # one of two own events in the span: in
    out = node("out", ("e04", "e09", "e10"))  # one of three: out
    other = Node("kiln", "s-other", "other", "t", (), ("e01",))
    got = nodes_in(span, [inside, half, out, other])
    assert [n.node_id for n in got] == ["in", "half"]
    assert our_text(got) == ("in title. in bullet 0. in bullet 1. half title. half bullet 0.", 3)
