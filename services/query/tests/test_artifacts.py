"""A question about a command run or an edit made gets the command or the edit first."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory_query.search.brainstem.artifacts import (
    is_artifact,
    is_artifact_question,
    prefer_artifacts,
)
from agent_memory_query.search.brainstem.fusion import Candidate
from agent_memory_retrieval.docs import IndexDoc

TS = datetime(2026, 9, 1, tzinfo=UTC)


def cand(event_id: str, score: float, text: str, type_: str = "event") -> Candidate:
    doc = IndexDoc(
        id=f"{type_}:t:{event_id}", type=type_, tenant="t", project_id="p", agent_id="a",
        session_id="s", ts=TS, level=type_, text=text, event_ids=(event_id,),
    )  # fmt: skip
    return Candidate(id=doc.id, doc=doc, fused=score, score=score)


def test_questions_about_commands_and_edits_are_told_from_others() -> None:
    for q in (
        "Which command merged the two Alembic heads?",
        "Show the diff that installed the panic hook.",
        "What did we change in conftest.py for parallel test runs?",
        "Show the code change in the webhook handler that fixed the signatures.",
        "How did we see tdk's CPU usage from the shell?",
        "Which file holds the retry settings?",
        "What change fixed the connection pool leak?",
        "Which edit fixed the 100% CPU when idle?",
    ):
        assert is_artifact_question(q), q
    for q in (
        "After a crash my shell stopped showing what I typed; how was that repaired?",
        "What did we decide for database migrations?",
        "How do we cut a release?",
        "Why did we change the config format?",
        "What changed in the API last week?",
    ):
        assert not is_artifact_question(q), q


def test_commands_and_edits_are_read_from_the_shapes_the_hooks_give_them() -> None:
    for text in (
        "$ uv run alembic merge -m 'merge chargebacks' 9b2e4c71 a71f03d2  # Merge the heads",
        "$ top -b -n 1 -p $(pgrep tdk)\nexit 0\n  PID USER ...",
        "Edit /home/dev/tdk/src/app.rs\n@@ -1,1 +1,1 @@\n-if event::poll(Duration::ZERO)? {",
        "Write /home/dev/tdk/src/cache.rs (12 lines)\nuse std::time::Instant;",
    ):
        assert is_artifact(text), text
    for text in (
        "Edit /home/dev/tdk/src/app.rs: applied",  # the acknowledgement shows no change
        "Read /home/dev/tdk/src/app.rs",
        "Fixed: event::poll now waits until the next tick.",
        "I ran $ cargo test and it passed.",
    ):
        assert not is_artifact(text), text


def test_a_command_outranks_the_rules_sharing_its_words_and_is_not_stale() -> None:
    rule = cand("rule", 1.0, "To reproduce a webhook locally, start the stub first.")
    rule.factors["salience"] = 0.7
    command = cand("cmd", 0.6, "$ kubectl logs deploy/payments-api | grep webhook")
    command.factors["staleness"] = 0.6
    grip = cand("grip", 0.5, "$ kubectl logs deploy/payments-api", type_="grip")
    ranked = prefer_artifacts([rule, command, grip], factor=1.5)
    assert [c.id for c in ranked] == ["event:t:cmd", "event:t:rule", "grip:t:grip"]
    assert command.factors == {"staleness": 1.0, "artifact": 1.5}
    assert command.score == pytest.approx(0.6 * 1.5 / 0.6)
    assert "artifact" not in rule.factors and "artifact" not in grip.factors
