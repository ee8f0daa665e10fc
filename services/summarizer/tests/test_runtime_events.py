"""What the runtime wrote (``memory.RUNTIME_TYPE``) makes no bullet, title or key phrase
(issue 52, point 3): a segment of nothing else has no bullet, and the levels above pass over it."""

from __future__ import annotations

from agent_memory_summarizer.extractive import runtime_only, summarize_rollup
from agent_memory_summarizer.model import Bullet, ChildDigest


def child(node_id: str, title: str, bullets: int) -> ChildDigest:
    return ChildDigest(
        node_id=node_id,
        version=1,
        title=title,
        keywords=[],
        bullets=[
            Bullet(
                text=f"The kiln firing schedule moved to batch {k} of the glaze queue.",
                kind="observation",
                salience=0.1,
                grip_ids=(f"grip:{node_id}:{k}",),
            )
            for k in range(bullets)
        ],
    )


def test_a_runtime_only_segment_has_no_bullet_nor_key_phrase() -> None:
    summary = runtime_only("Session s-1 #3")
    assert summary.title == "Session s-1 #3" and summary.bullets == [] and summary.keywords == []


def test_a_day_passes_over_a_segment_without_bullets() -> None:
    summary = summarize_rollup(
        "Thu 2026-01-15",
        [
            child("segment:a", "Batch kiln firings by glaze", 3),
            child("segment:b", "Session s-1 #1", 0),  # a compaction and nothing else
        ],
    )
    works = [b.text for b in summary.bullets if b.work]
    assert works == ["Batch kiln firings by glaze"]
    assert "Session s-1" not in summary.title
