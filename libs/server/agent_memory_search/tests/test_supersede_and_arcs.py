"""Supersession in the answer and the fix-arc preference: the brainstem's pure parts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from agent_memory_retrieval.docs import Hit, IndexDoc
from agent_memory_search.brainstem.arcs import (
    FIX_STATED,
    arc_factor,
    arc_sources,
    bring_fix_edits,
    bring_resolutions,
    fix_statements,
    is_fix_question,
    prefer_resolution,
    reports_problem,
    states_resolution,
)
from agent_memory_search.brainstem.fusion import Candidate
from agent_memory_search.brainstem.supersede import (
    SHOWN_LINKS,
    Link,
    Links,
    attach,
    refs_for,
)

TS = datetime(2026, 9, 1, tzinfo=UTC)


def doc(event_id: str, text: str = "", type_: str = "event") -> IndexDoc:
    return IndexDoc(
        id=f"event:t:{event_id}",
        type=type_,
        tenant="t",
        project_id="p",
        agent_id="a",
        session_id="s",
        ts=TS,
        level=type_,
        text=text or event_id,
        event_ids=(event_id,),
    )


def cand(event_id: str, score: float, text: str = "") -> Candidate:
    return Candidate(id=f"event:t:{event_id}", doc=doc(event_id, text), fused=score, score=score)


LINK = Link("old", "new", "detected", 0.6, None, TS, "We go with RabbitMQ.", TS, "We use NATS.")


def test_the_superseded_moment_drops_below_its_successor_and_both_carry_the_link() -> None:
    ranked = attach([cand("old", 1.0), cand("new", 0.7)], Links([LINK], {}), demote=0.5, head=10)
    assert [c.doc.event_ids[0] for c in ranked] == ["new", "old"]
    new, old = ranked
    assert new.links["supersedes"][0]["event_id"] == "old"
    assert new.links["supersedes"][0]["text"] == "We go with RabbitMQ."
    assert old.links["superseded_by"][0]["event_id"] == "new"
    assert old.factors["superseded"] == 0.5 and old.score == 0.5


def test_a_successor_nobody_found_is_brought_in_where_the_old_one_was() -> None:
    found = Links([LINK], {"new": doc("new", "We use NATS.")})
    ranked = attach([cand("old", 1.0), cand("x", 0.8)], found, demote=0.5, head=10)
    assert [c.doc.event_ids[0] for c in ranked] == ["new", "x", "old"]
    assert ranked[0].factors == {"successor": 1.0}
    # beyond the head, a superseded moment is demoted but brings nothing in
    tail = attach([cand("x", 0.9), cand("old", 0.8)], found, demote=0.5, head=1)
    assert [c.doc.event_ids[0] for c in tail] == ["x", "old"]


def test_no_successor_is_brought_in_for_a_moment_that_does_not_answer_the_query() -> None:
    """A superseded moment that only shared a common word with the question is demoted, but
    its successor is not put in its place: it would lead an answer about something else."""
    found = Links([LINK], {"new": doc("new", "We use NATS.")})
    ranked = attach(
        [cand("old", 1.0), cand("x", 0.8)], found, demote=0.5, head=10, vouched=lambda c: False
    )
    assert [c.doc.event_ids[0] for c in ranked] == ["x", "old"]
    assert ranked[1].factors["superseded"] == 0.5
    kept = attach(
        [cand("old", 1.0), cand("x", 0.8)], found, demote=0.5, head=10, vouched=lambda c: True
    )
    assert [c.doc.event_ids[0] for c in kept] == ["new", "x", "old"]


def test_an_overview_is_never_history() -> None:
    node = Candidate(id="node:t:n", doc=doc("old", type_="toc_node"), fused=1.0, score=1.0)
    (out,) = attach([node], Links([LINK], {}), demote=0.5, head=10)
    assert out.score == 1.0 and out.links["superseded_by"]


def test_an_answer_shows_the_newest_successors_and_the_best_predecessors_only() -> None:
    """A rule repeated in many sessions has many links; an item carries ``SHOWN_LINKS`` each
    way: the newest successors, and the best predecessors, explicit ones first."""
    later = [
        Link("rule", f"new{i}", "detected", 0.6, None, TS, "old words", TS + timedelta(days=i), "")
        for i in range(6)
    ]
    scores = [0.5, 0.9, 0.7, 0.8, 0.6]
    earlier = [
        Link(f"old{i}", "rule", "detected", s, None, TS - timedelta(days=i), "", TS, "words")
        for i, s in enumerate(scores)
    ]
    told = Link("told", "rule", "explicit", 0.1, "retired", TS - timedelta(days=9), "", TS, "")
    ranked = attach([cand("rule", 1.0)], Links([*later, *earlier, told], {}), demote=0.5, head=0)
    links = ranked[0].links
    assert SHOWN_LINKS == 3
    assert [r["event_id"] for r in links["superseded_by"]] == ["new5", "new4", "new3"]
    assert [r["event_id"] for r in links["supersedes"]] == ["told", "old1", "old3"]
    # a TOC bullet citing the event shows the same
    assert refs_for(["rule", "other"], [*later, *earlier, told]) == links


def test_fix_questions_are_told_from_others() -> None:
    for q in (
        "How did we fix the QueuePool limit reached errors?",
        "After a crash my shell stopped showing what I typed; how was that repaired?",
        "Why did one check break only under parallel processes, and what cured it?",
        "Under heavy traffic the service hung; what leaked?",
    ):
        assert is_fix_question(q), q
    for q in ("What lock does the payout scheduler use?", "How should log messages be written?"):
        assert not is_fix_question(q), q


def test_the_cause_and_the_fix_outrank_the_failed_attempts() -> None:
    assert (
        arc_factor("Fixed: a panic hook restores the terminal.", resolution=1.3, attempt=0.75)
        == 1.3
    )
    assert (
        arc_factor("Still at 99.7. Cause: poll(ZERO) spins.", resolution=1.3, attempt=0.75) == 1.3
    )
    assert arc_factor("Still at 99.7 percent.", resolution=1.3, attempt=0.75) == 0.75
    assert (
        arc_factor("$ uv run mypy src\nexit 1\nerror: untyped", resolution=1.3, attempt=0.75)
        == 0.75
    )
    assert arc_factor("I'll look at the pool settings.", resolution=1.3, attempt=0.75) is None
    # a tool's own words are not a fix: uv "resolved" packages, ruff "fixed" findings
    for output in (
        "$ uv lock --upgrade\nexit 0\nResolved 61 packages in 2.10s",
        "$ uv run ruff check --fix .\nexit 0\nFixed 3 errors.",
    ):
        assert arc_factor(output, resolution=1.3, attempt=0.75) is None
    ranked = prefer_resolution(
        [cand("a", 1.0, "Still failing."), cand("b", 0.8, "Cause: the pool leaks.")],
        resolution=1.3,
        attempt=0.75,
    )
    assert [c.doc.event_ids[0] for c in ranked] == ["b", "a"]


def test_the_sql_prefilter_lets_through_every_stated_cause_and_fix() -> None:
    """``arc_store`` reads only the messages its looser pattern matches: one it dropped could
    never be brought to a fix question. Every fix stated is a resolution stated too."""
    import re

    from agent_memory_search.arc_store import _MAY_RESOLVE

    prefilter = re.compile(_MAY_RESOLVE, re.IGNORECASE)  # Postgres ``~*``
    for text, is_fix in (
        ("Fixed: a panic hook restores the terminal.", True),
        ("The fix was to close the pool on shutdown.", True),
        ("Done. That fixed it.", True),
        ("Solved by pinning the version.", True),
        ("The suite passes again.", True),
        ("Cause: poll(ZERO) spins.", False),
        ("Root cause is the shared session fixture.", False),
        ("Found the bug: an off-by-one in the pager.", False),
        ("The culprit: a stale lock file.", False),
        # a coding agent's own phrasing (bench-real)
        ("I see the issue - pymodbus 3.x has changed their API.", False),
        ("Now I see the issue! The runner is on Ubuntu 24.04.", False),
        ("Perfect! I found the issue. The tests run on ubuntu-latest.", False),
        ("The issue was that your installed version was older.", False),
        ("Perfect! I've fixed the second CI issue.", True),
        ("I found and fixed the CI failure.", True),
    ):
        assert states_resolution(text) and prefilter.search(text), text
        assert bool(FIX_STATED.search(text)) is is_fix, text
    for text in (
        "Can you fix it?",
        "Let me fix the imports:",
        "I'll fix the issue next.",
        "I have not fixed it yet.",
    ):
        assert not FIX_STATED.search(text) and not states_resolution(text), text


def test_a_stated_fix_is_not_demoted_for_its_age_in_a_fix_question() -> None:
    """How a problem was solved stays true: an old fix must not lose its place to an
    evergreen bullet of another episode that it outscored before the age factor."""
    from agent_memory_search.brainstem.ranking import RankingPolicy, apply_policy

    old = TS - timedelta(days=90)
    fix, attempt, procedure = (
        cand("fix", 1.3, "Fixed: the pool is closed on shutdown."),
        cand("attempt", 1.3, "Still failing after the restart."),
        cand("procedure", 1.0, "To reproduce, run the load test."),
    )
    for c, kind in ((fix, "observation"), (attempt, "observation"), (procedure, "procedure")):
        c.doc = replace(c.doc, ts=old, kind=kind)
    ranked = apply_policy(
        [fix, attempt, procedure], access_counts={}, now=TS, policy=RankingPolicy()
    )
    assert ranked[0] is procedure  # age first demoted the old fix below the procedure
    ranked = prefer_resolution(ranked, resolution=1.3, attempt=0.75)
    assert [c.doc.event_ids[0] for c in ranked] == ["fix", "procedure", "attempt"]
    assert fix.factors["staleness"] == 1.0 and fix.factors["arc"] == 1.3
    assert attempt.factors["staleness"] < 1.0  # only the cause or the fix is spared
    expected = fix.fused
    for value in fix.factors.values():
        expected *= value
    assert fix.score == pytest.approx(expected)  # the score is still its factors' product


def test_only_problem_reports_and_failed_attempts_are_followed_to_their_fix() -> None:
    for text in (
        "When tdk panics my terminal is broken afterwards: no echo.",
        "tdk sits at 100% CPU in top even when nothing changes on screen.",
        "I merged the chargebacks branch and now migrations do not run.",
        "Finance says the settlement batch is short by 37 payments.",
        "Still at 99.7.",
    ):
        assert reports_problem(text), text
    for text in (
        "Edit /home/dev/payments-api/tests/conftest.py: applied",
        "New project: tdk, a terminal dashboard. Set up the crate.",
        "Fixed: a panic hook restores the terminal after the error.",  # a fix, not a report
    ):
        assert not reports_problem(text), text
    head = [
        cand("edit", 1.0, "Edit src/main.rs: applied"),
        cand("report", 0.9, "The pane is misaligned with emoji."),
        cand("fix", 0.8, "Fixed: widths come from unicode-width."),
        cand("attempt", 0.7, "Still broken."),
    ]
    assert [c.doc.event_ids[0] for c in arc_sources(head, 5)] == ["report", "attempt"]
    assert [c.doc.event_ids[0] for c in arc_sources(head, 1)] == ["report"]


def test_the_fix_said_after_a_report_joins_with_the_reports_score() -> None:
    """The question matches the report; the cause and the fix said after it in its session
    join the candidates (the first ``per_source`` of them), or are raised to it; a message
    after it that states no resolution does not."""
    report = cand("report", 0.9, "After a crash the shell shows nothing I type.")
    known = cand("cause", 0.2, "Cause: a panic unwinds past main's cleanup.")
    head = [report, known]

    def hit(event_id: str, text: str) -> Hit:
        d = doc(event_id, text)
        return Hit(id=d.id, score=0.0, doc=d)

    following = {
        "report": [
            hit("try", "Let me reproduce it with a forced panic."),
            hit("cause", known.doc.text),
            hit("fix", "Fixed: a panic hook restores the terminal."),
            hit("later", "Fixed: the README typo as well."),
        ]
    }
    out, changed = bring_resolutions(head, [report], following, per_source=2, follow=0.9)
    by_event = {c.doc.event_ids[0]: c for c in out}
    assert changed == 2 and set(by_event) == {"report", "cause", "fix"}
    assert by_event["fix"].fused == pytest.approx(0.81) and by_event["fix"].ranks == {"arc": 1}
    assert by_event["cause"] is known and known.fused == pytest.approx(0.81)
    assert known.ranks == {"arc": 1}
    # the arc ends at its fix: what the session fixed after it is another problem's
    out, _ = bring_resolutions(
        [cand("report", 0.9, report.doc.text)], [report], following, per_source=5, follow=0.9
    )
    assert {c.doc.event_ids[0] for c in out} == {"report", "cause", "fix"}
    # a resolution the tiers ranked above its report keeps its own score
    strong = cand("cause", 0.95, known.doc.text)
    out, changed = bring_resolutions(
        [report, strong], [report], following, per_source=1, follow=0.9
    )
    assert changed == 0 and strong.fused == 0.95 and strong.ranks == {}
    assert len(out) == 2


def test_a_stated_fix_brings_the_edit_made_last_before_it() -> None:
    """Asked for the change that fixed something: the best moments stating a fix (not a
    cause, not a report) each bring their edit at their fused score times ``follow``."""
    head = [
        cand("cause", 1.0, "Cause: the pool leaks."),
        cand("fix", 0.9, "Fixed: the publisher uses async with for its session."),
        cand("report", 0.8, "Captures time out under load."),
        cand("known", 0.1, "Edit src/payments/events.py"),
        cand("fix2", 0.5, "That fixed it."),
    ]
    fixes = fix_statements(head, 5)
    assert [c.doc.event_ids[0] for c in fixes] == ["fix", "fix2"]
    assert [c.doc.event_ids[0] for c in fix_statements(head, 1)] == ["fix"]
    new_edit = Hit(id="event:t:edit", score=0.0, doc=doc("edit", "Edit src/payments/events.py"))
    edits = {"fix": new_edit, "fix2": Hit(id=head[3].id, score=0.0, doc=head[3].doc)}
    out, changed = bring_fix_edits(head, fixes, edits, follow=0.9)
    by_event = {c.doc.event_ids[0]: c for c in out}
    assert changed == 2
    assert by_event["edit"].fused == pytest.approx(0.81) and by_event["edit"].ranks == {"arc": 2}
    assert by_event["known"].fused == pytest.approx(0.45) and by_event["known"].ranks == {"arc": 5}
    out, changed = bring_fix_edits(head, fixes, {}, follow=0.9)
    assert changed == 0 and len(out) == len(head)


def test_match_score_is_the_best_cosine_and_absent_without_the_vector_tier() -> None:
    from agent_memory_retrieval.docs import Hit
    from agent_memory_search.brainstem.tiers import Execution, TierRun, best_cosine

    def run(scores: list[float], error: str | None = None, skipped: str | None = None) -> Execution:
        hits = [Hit(id=str(i), score=s, doc=doc(str(i))) for i, s in enumerate(scores)]
        tier = TierRun("vector", hits=hits, error=error, skipped=skipped)
        return Execution([], {"vector": tier}, [], [])

    assert best_cosine([run([0.41, 0.62]), run([0.55])]) == 0.62
    assert best_cosine([run([])]) is None  # nothing embedded in scope (yet): no evidence
    assert best_cosine([run([0.9], error="down")]) is None
    assert best_cosine([run([], skipped="no query words")]) is None
    assert best_cosine([Execution([], {}, [], [])]) is None
