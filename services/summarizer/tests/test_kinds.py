"""The coding-session rules of the memory-kind classifier: decisions, tool output (lint,
compiler, git, test-runner lines and tool events), and how the summarizer applies them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory_common.contracts.memory import is_tool_event, salience
from agent_memory_summarizer.extractive import summarize_segment
from agent_memory_summarizer.kinds import is_decision, is_tool_line
from agent_memory_summarizer.llm import _LlmBullet, _LlmSummary, to_summary
from agent_memory_summarizer.model import SourceEvent
from agent_memory_summarizer.salience import KINDS, PRIORITY, classify, strongest

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "Decision: we go with NATS JetStream for the payment events.",
        "We go with Postgres advisory locks for the scheduler instead of a Redis lock.",
        "Let's use httpx for outgoing HTTP calls.",
        "We'll use ULIDs for primary keys from now on.",
        "We decided to drop Python 3.9.",
        "I've decided to go back to school for a counseling degree.",
        "We're switching the config file from YAML to TOML.",
        "Switching to ratatui for the terminal UI.",
        "We replace RabbitMQ with NATS JetStream.",
        "After comparing both, we picked uv over poetry.",
        "We opted for server-side rendering on the billing pages.",
        "Agreed, structlog it is for logging.",
        "Going forward, the API returns problem+json for every error.",
        "The team agreed to move the docs to MkDocs.",
    ],
)
def test_decisions(text: str) -> None:
    assert is_decision(text)
    assert classify(text) == "decision"


@pytest.mark.parametrize(
    "text",
    [
        "Should we use Redis or Postgres for the rate limiter?",  # a question
        "We haven't decided between Kafka and NATS yet.",  # an open choice
        "If we go with Kafka, the consumers change.",  # a hypothesis
        "We used to use RabbitMQ for this.",  # history
        "We might switch to TOML later.",
        "I'll run the tests now.",  # an agent's next action, not a choice
        "I'll use the Edit tool to change the file.",
        "Let's keep going!",  # encouragement
        "Agreed, John!",
        "Look how cute it is.",
        "We talked about Kafka, but nobody has run it in production.",
        "I picked up a few new recipes.",
    ],
)
def test_not_decisions(text: str) -> None:
    assert classify(text) != "decision"


@pytest.mark.parametrize(
    "line",
    [
        "src/payments/processor.py:184:3: B006 Do not use mutable data structures for argument "
        "defaults",
        "src/payments/db.py:77:28: TRY003 Avoid specifying long messages outside the exception "
        "class",
        "B006 Do not use mutable data structures for argument defaults",
        "E501 Line too long (104 > 100)",
        "error[E0502]: cannot borrow `self.panes` as mutable because it is also borrowed",
        "warning: you should never use unwrap here",
        "= help: you should avoid repeating the module name",
        "help: consider using `expect()` to provide a better panic message",
        "fatal: Need to specify how to reconcile divergent branches.",
        "hint: You have divergent branches and need to specify how to reconcile them.",
        "Traceback (most recent call last):",
        '  File "src/payments/db.py", line 12, in connect',
        'psycopg.errors.NotNullViolation: null value in column "currency" must not be null',
        "ValueError: amount must be positive",
        "E   AssertionError: assert 402 == 200",
        "./tdk: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by "
        "./tdk)",
        "src/app.ts:14:7 - error TS2322: Type 'string' is not assignable to type 'number'.",
        "  12:5  error  Unexpected console statement  no-console",
        "npm WARN deprecated inflight@1.0.6: This module is not supported. Do not use it.",
        'src/payments/processor.py:147: error: Need type annotation for "rows"  [var-annotated]',
    ],
)
def test_tool_lines_state_no_rule(line: str) -> None:
    assert classify(line) == "observation"


def test_lint_output_pasted_into_a_prompt_stays_an_observation() -> None:
    prompt = (
        "ruff says:\nsrc/app.py:3:1: B006 Do not use mutable data structures for argument "
        "defaults\nsrc/app.py:9:5: TRY003 Avoid specifying long messages outside the exception"
        " class"
    )
    assert classify(prompt) == "observation"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Note: amounts must always be stored as integer cents.", "constraint"),
        ("Please avoid mutable default arguments, ruff's B006 is right.", "preference"),
        ("Warning: never run the migration twice.", "constraint"),
        ("pip install the package first, then run make test.", "procedure"),
    ],
)
def test_a_person_who_writes_like_a_tool_still_states_rules(text: str, kind: str) -> None:
    assert not is_tool_line(text)
    assert classify(text) == kind


def test_tool_events_as_the_hooks_mark_them() -> None:
    assert is_tool_event("tool", "tool_result")
    assert is_tool_event("assistant", "tool_call")
    assert is_tool_event("user", "message", {"hook_event": "PostToolUseFailure"})
    assert is_tool_event("assistant", "message", {"tool_name": "Bash"})
    assert not is_tool_event("user", "message", {"hook_event": "UserPromptSubmit"})
    assert not is_tool_event("assistant", "message", {"hook_event": "transcript"})
    assert not is_tool_event("system", "session_start", None)


def _event(i: int, role: str, type_: str, text: str) -> SourceEvent:
    return SourceEvent(f"e{i}", T0 + timedelta(minutes=i), role, type_, text)


def test_a_tool_event_gives_observation_bullets_whatever_it_says() -> None:
    rule = "Avoid global state in the request handlers of the payments service."
    summary = summarize_segment(
        [
            _event(0, "user", "message", "Please clean up the request handlers of the service."),
            _event(1, "tool", "tool_result", f"{rule}\nAll timestamps must be stored in UTC."),
        ],
        "x",
    )
    # a person spoke: tool output is evidence, never a bullet
    assert [b.text for b in summary.bullets] == [
        "Please clean up the request handlers of the service."
    ]
    # nobody spoke: the tool's lines are the bullets, as observations
    only_tool = summarize_segment(
        [_event(1, "tool", "tool_result", f"{rule}\nAll timestamps must be stored in UTC.")], "x"
    )
    kinds = {b.text: b.kind for b in only_tool.bullets}
    assert kinds[rule] == "observation"
    assert kinds["All timestamps must be stored in UTC."] == "observation"


def test_a_person_repeating_what_a_tool_printed_states_it() -> None:
    rule = "Avoid global state in the request handlers of the payments service."
    summary = summarize_segment(
        [
            _event(0, "tool", "tool_result", rule),
            _event(1, "user", "message", rule),
            _event(2, "assistant", "message", "Decision: we go with structlog for logging."),
        ],
        "x",
    )
    kinds = {b.text: b.kind for b in summary.bullets}
    assert kinds[rule] == "preference"
    assert kinds["Decision: we go with structlog for logging."] == "decision"


def test_llm_bullets_citing_only_tool_output_are_observations() -> None:
    events = [
        _event(0, "tool", "tool_result", "B006 Do not use mutable data structures"),
        _event(1, "user", "message", "We go with attrs for the models."),
    ]
    parsed = _LlmSummary(
        title="t",
        bullets=[
            _LlmBullet(text="Do not use mutable default arguments.", events=[1]),
            _LlmBullet(text="We go with attrs for the models.", events=[2]),
        ],
    )
    summary = to_summary(parsed, events)
    assert summary is not None
    assert [b.kind for b in summary.bullets] == ["observation", "decision"]


def test_decision_is_a_kind_boosted_like_a_constraint() -> None:
    assert "decision" in KINDS
    assert PRIORITY[0] == "decision"
    assert salience(250, "decision") == salience(250, "constraint")
    assert strongest(["observation", "decision", "decision", "constraint"]) == "decision"
