"""A question about a command run or an edit made gets the command or the edit first."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory_retrieval.docs import IndexDoc
from agent_memory_search.brainstem.artifacts import (
    KINDS,
    artifact_kind,
    asked_artifacts,
    prefer_artifacts,
)
from agent_memory_search.brainstem.fusion import Candidate

TS = datetime(2026, 9, 1, tzinfo=UTC)


def cand(event_id: str, score: float, text: str, type_: str = "event") -> Candidate:
    doc = IndexDoc(
        id=f"{type_}:t:{event_id}", type=type_, tenant="t", project_id="p", agent_id="a",
        session_id="s", ts=TS, level=type_, text=text, event_ids=(event_id,),
    )  # fmt: skip
    return Candidate(id=doc.id, doc=doc, fused=score, score=score)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Which command merged the two Alembic heads?", {"command"}),
        ("How did we see tdk's CPU usage from the shell?", {"command"}),
        ("Show the diff that installed the panic hook.", {"edit"}),
        ("What did we change in conftest.py for parallel test runs?", {"edit"}),
        ("Show the code change in the webhook handler that fixed the signatures.", {"edit"}),
        ("What change fixed the connection pool leak?", {"edit"}),
        ("Which edit fixed the 100% CPU when idle?", {"edit"}),
        ("Show the edit that replaced --flag with --filter in cli.py.", {"edit"}),
        ("Which files did we touch to fix the build?", KINDS),
        ("Which file did you just edit?", KINDS),
        ("Which lines were changed in the parser?", KINDS),
        ("Which command and which diff fixed the build?", KINDS),
        # not about a command or an edit
        ("After a crash my shell stopped showing what I typed; how was that repaired?", set()),
        ("What did we decide for database migrations?", set()),
        ("How do we cut a release?", set()),
        ("Why did we change the config format?", set()),
        ("What changed in the API last week?", set()),
        ("Which file holds the retry settings?", set()),  # what is where, not what was done
        ("Which files does one export create?", set()),
        ("How do I edit the settings file?", set()),  # the verb: how, not what was changed
    ],
)
def test_a_question_says_whether_it_asks_for_a_command_or_an_edit(
    question: str, asked: set[str]
) -> None:
    assert asked_artifacts(question) == asked


def test_commands_and_edits_are_read_from_the_shapes_the_hooks_give_them() -> None:
    for text, kind in (
        ("$ uv run alembic merge -m 'merge chargebacks' 9b2e4c71 a71f03d2  # Merge", "command"),
        ("$ top -b -n 1 -p $(pgrep tdk)\nexit 0\n  PID USER ...", "command"),
        ("Edit /home/dev/tdk/src/app.rs\n@@ -1,1 +1,1 @@\n-if event::poll(ZERO)? {", "edit"),
        ("Write /home/dev/tdk/src/cache.rs (12 lines)\nuse std::time::Instant;", "edit"),
        ("Edit /home/dev/tdk/src/app.rs: applied", None),  # the acknowledgement shows no change
        ("Read /home/dev/tdk/src/app.rs", None),
        ("Fixed: event::poll now waits until the next tick.", None),
        ("I ran $ cargo test and it passed.", None),
    ):
        assert artifact_kind(text) == kind, text


def test_what_is_asked_for_outranks_the_rules_sharing_its_words_and_is_not_stale() -> None:
    rule = cand("rule", 1.0, "To reproduce a webhook locally, start the stub first.")
    command = cand("cmd", 0.6, "$ kubectl logs deploy/payments-api | grep webhook")
    command.factors["staleness"] = 0.6
    edit = cand("edit", 0.55, "Edit src/webhooks.py\n@@ -1 +1 @@\n+payload = body")
    grip = cand("grip", 0.5, "$ kubectl logs deploy/payments-api", type_="grip")
    ranked = prefer_artifacts([rule, command, edit, grip], kinds=frozenset({"command"}), factor=1.5)
    assert [c.id for c in ranked] == ["event:t:cmd", "event:t:rule", "event:t:edit", "grip:t:grip"]
    assert command.factors == {"staleness": 1.0, "artifact": 1.5}
    assert command.score == pytest.approx(0.6 * 1.5 / 0.6)
    assert not any("artifact" in c.factors for c in (rule, edit, grip))
    ranked = prefer_artifacts([rule, edit], kinds=frozenset({"edit"}), factor=2.0)
    assert [c.id for c in ranked] == ["event:t:edit", "event:t:rule"]
