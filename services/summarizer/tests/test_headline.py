"""Titles that name the goal and the outcome; rollups that name their pieces of work."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agent_memory_summarizer.extractive import summarize_rollup, summarize_segment
from agent_memory_summarizer.headline import WORK_SEPARATOR, Turn, goal_of, headline, plain
from agent_memory_summarizer.model import Bullet, ChildDigest, SourceEvent

T0 = datetime(2026, 7, 14, 9, tzinfo=UTC)


def session(turns: list[tuple[str, str, str]]) -> list[SourceEvent]:
    return [
        SourceEvent(f"e{i}", T0 + timedelta(minutes=i), role, type_, text)
        for i, (role, type_, text) in enumerate(turns)
    ]


SLOW_JOB = [
    ("system", "session_start", "Claude Code session started (startup)"),
    (
        "user",
        "message",
        "The nightly reconciliation job got slow: 9 s for 40k payments. Please fix.",
    ),
    ("assistant", "message", "I'll look at the query plan of src/payments/reconcile.py first."),
    ("tool", "tool_call", "$ psql -c 'EXPLAIN ANALYZE SELECT * FROM payments'"),
    ("tool", "tool_result", "Seq Scan on payments  (cost=0.00..1834.00 rows=40000)\nexit 0"),
    (
        "assistant",
        "message",
        "Cause: the job scans every payment row because no index covers the status filter.",
    ),
    ("user", "message", "We go with a partial index on payments(status) where status = 'pending'."),
    ("tool", "tool_result", "$ uv run pytest\nexit 0\n42 passed in 3.1s"),
    ("assistant", "message", "Fixed: the job now takes 40 ms instead of 9 s, and the tests pass."),
    (
        "assistant",
        "message",
        "Ruff flags a few style findings; I left them for the cleanup ticket.",
    ),
]


def test_a_segment_title_is_its_goal_and_its_outcome() -> None:
    summary = summarize_segment(session(SLOW_JOB), "fallback")
    goal, _, outcome = summary.title.partition(WORK_SEPARATOR)
    assert goal == "The nightly reconciliation job got slow: 9 s for 40k payments"
    assert outcome == "The job now takes 40 ms instead of 9 s, and the tests pass"
    assert goal_of(summary.title) == goal


def test_bullets_are_what_people_stated_never_tool_output_or_markers() -> None:
    evs = session(SLOW_JOB)
    summary = summarize_segment(evs, "fallback")
    spoken = {e.event_id for e in evs if e.role in ("user", "assistant") and e.type == "message"}
    cited = {eid for b in summary.bullets for g in b.grips for eid in g.event_ids}
    assert cited <= spoken
    texts = " ".join(b.text for b in summary.bullets)
    assert "partial index" in texts and "Cause:" in texts and "Fixed:" in texts
    assert "session started" not in texts


def test_key_phrases_hold_no_code_noise() -> None:
    summary = summarize_segment(session(SLOW_JOB), "fallback")
    assert summary.keywords
    words = " ".join(summary.keywords).split()
    for noise in ("src", "py", "payments/reconcile.py", "exit", "seq", "psql", "i'll"):
        assert noise not in words


def test_the_outcome_is_a_result_not_a_plan_or_an_aside_and_else_a_decision() -> None:
    turns = [
        Turn("user", "How do we draw the panes?", "observation", 0),
        Turn("assistant", "We draw directly with crossterm, no TUI framework.", "decision", 1),
        Turn("assistant", "I'll write a small layout module now.", "observation", 2),
        Turn(
            "assistant",
            "Clippy has warnings in code I did not touch; I left them.",
            "observation",
            3,
        ),
    ]
    goal, title = headline(turns)
    assert goal == "How do we draw the panes?"
    assert title == "How do we draw the panes? — We draw directly with crossterm, no TUI framework"


def test_paths_become_names_and_payload_words_never_reach_a_title() -> None:
    assert plain("Add POST /v1/refunds/{payment_id} for full refunds") == (
        "Add POST refunds for full refunds"
    )
    assert plain("Speed up src/payments/api/pagination.py") == "Speed up pagination"
    assert plain("My terminal is broken: no echo, no newlines, nothing") == (
        "My terminal is broken: no echo"
    )
    assert "[REDACTED" not in plain("Rotate [REDACTED:aws_key] every 90 days")
    assert plain("the 1, 3, 7 day schedule") == "the 1-3-7 day schedule"


def test_a_conversation_between_people_keeps_its_key_phrase_title() -> None:
    chat = session(
        [
            ("user", "message", "Hey Mel! I went to a support group yesterday."),
            ("user", "message", "The support group made me feel accepted and brave."),
            ("user", "message", "I want to study counseling next year at the college."),
        ]
    )
    summary = summarize_segment(chat, "fallback")
    assert WORK_SEPARATOR not in summary.title
    assert summary.title != "fallback"


def _segment(n: int) -> ChildDigest:
    return ChildDigest(
        node_id=f"segment:s{n}",
        version=1,
        title=f"Piece of work {n}{WORK_SEPARATOR}Result {n} is in place",
        keywords=[f"topic {n}"],
        bullets=[
            Bullet(f"We go with option {n} for part {n}.", "decision", 0.4, grip_ids=(f"g{n}a",)),
            Bullet(f"Result {n} is in place.", "observation", 0.1, grip_ids=(f"g{n}b",)),
        ],
    )


def test_a_week_of_five_sessions_names_the_five_pieces_of_work() -> None:
    days = []
    for n in range(5):
        day = summarize_rollup(f"Mon 2026-07-1{n}", [_segment(n)])
        assert day.title == f"Mon 2026-07-1{n}: Piece of work {n}"
        days.append(ChildDigest(f"day:2026-07-1{n}@p", 1, day.title, day.keywords, day.bullets))
    week = summarize_rollup("Week 2026-W29 (Jul 13 - Jul 19)", days)
    works = [b for b in week.bullets if b.work]
    assert [goal_of(b.text) for b in works] == [f"Piece of work {n}" for n in range(5)]
    assert [b.grip_ids for b in works] == [(f"g{n}a", f"g{n}b") for n in range(5)]
    assert week.title.startswith("Week 2026-W29 (Jul 13 - Jul 19): Piece of work 0; Piece of")
    assert any(b.kind == "decision" for b in week.bullets)  # then what was decided
    month = summarize_rollup("July 2026", [ChildDigest("week:x", 1, week.title, week.keywords,
                                                       week.bullets)])  # fmt: skip
    assert len([b for b in month.bullets if b.work]) == 5
    assert month.title.startswith("July 2026: topic")  # a month names its themes


def test_a_title_never_says_its_goal_twice() -> None:
    """A first request that is itself a decision is the goal, clipped; the outcome is another
    decision of the segment, not the same sentence again ("X… — X")."""
    turns = [
        (
            "user",
            "message",
            "We chose Tantivy as the embedded BM25 engine because readers work in any process.",
        ),
        ("assistant", "message", "Decision: the recorder must acknowledge only after the commit."),
        ("user", "message", "I prefer plain SQL files over an ORM for the checkout service."),
    ]
    title = summarize_segment(session(turns), "fallback").title
    goal, _, outcome = title.partition(WORK_SEPARATOR)
    assert goal.startswith("We chose Tantivy as the embedded BM25 engine")
    assert outcome == "The recorder must acknowledge only after the commit", title


def test_a_title_keeps_the_case_of_the_code_it_starts_with() -> None:
    from agent_memory_summarizer.headline import _capital

    for text in (
        "event::poll now waits until the next tick",
        "test_refund_twice passes again",
        "useState moved into the hook",
        "config.toml is read first",
        "h2 support is on",
        "`cargo dist` builds the tarballs",
    ):
        assert _capital(text) == text
    assert _capital("webhooks fail in staging") == "Webhooks fail in staging"


def test_an_agent_working_on_alone_is_titled_by_what_it_says_it_did() -> None:
    """A token-budget cut leaves segments where only the agent speaks (``make bench-real``:
    "Session, perfect, metadata"); what it says it did names the work, not key phrases."""
    alone = session(
        [
            ("assistant", "message", "Let me look at the README first."),
            ("tool", "tool_call", "Read /mnt/c/python/cctrace/README.md"),
            (
                "assistant",
                "message",
                "Perfect! I've updated the README to make it crystal clear that the export "
                "includes:\n\n1. **Session ID** in every file\n2. **Complete metadata**",
            ),
            ("assistant", "message", "This ensures users get the complete export metadata."),
        ]
    )
    title = summarize_segment(alone, "fallback").title
    assert title == "Updated the README to make it crystal clear that the export includes"
    lead = session(
        [("assistant", "message", "Based on my research, I've discovered exactly where Claude "
          "Code stores chat session data: ~/.claude/projects.")]
    )  # fmt: skip
    assert summarize_segment(lead, "x").title.startswith("Discovered exactly where Claude Code")
    # an announced step is not a result: "Now let me ..." says nothing is done yet
    ahead = session(
        [
            ("assistant", "message", "I see there's already an export script in the folder."),
            ("assistant", "message", "Now let me create the directory structure for the package."),
        ]
    )
    assert not summarize_segment(ahead, "x").title.startswith("Now let me")
    # nothing said it did: the key phrases stay; and people talking keep theirs
    idle = session([("assistant", "message", "I see there's already a script in the folder.")])
    assert summarize_segment(idle, "x").title == "Folder, script"
    talk = session([("user", "message", "I've updated my resume and moved to Boston.")])
    assert summarize_segment(talk, "x").title == "Boston, moved, resume"


def test_an_agent_that_says_nothing_done_is_titled_by_what_it_found_or_set_out_to_make() -> None:
    """Most agent-only segments of real sessions say no "I've ..." (``make bench-real``: 12 of
    32 titles were key phrases, "Api, pymodbus, issue"); the cause it found, else the first
    thing it set out to make, names the work."""
    found = session(
        [
            ("assistant", "message", "Now let me create a verification script for the server:"),
            ("tool", "tool_result", "ImportError: cannot import name 'ModbusServerContext'"),
            ("assistant", "message", "I see the issue - pymodbus 3.x has changed their API."),
            ("assistant", "message", "Let me fix the imports:"),
        ]
    )
    assert summarize_segment(found, "x").title == "Pymodbus 3.x has changed their API"
    # a short "I see the issue!" is no sentence of its own: the next one is the cause
    after = session([("assistant", "message", "Now I see the issue! The runner is on Ubuntu "
                      "24.04, but the rock's base is `ubuntu@22.04`.")])  # fmt: skip
    assert summarize_segment(after, "x").title.startswith("The runner is on Ubuntu 24.04")
    steps = session(
        [
            ("assistant", "message", "Let me check the existing conftest first."),
            ("tool", "tool_call", "Read tests/integration/conftest.py"),
            ("assistant", "message", "Now let me add the mock server fixture to `conftest.py`:"),
            ("assistant", "message", "Then let me update the CHANGELOG."),
        ]
    )
    assert summarize_segment(steps, "x").title == "Add the mock server fixture to conftest"
    # with a reported result, both halves
    both = session(
        [
            ("assistant", "message", "I'll help you set up CI to build and push the rock."),
            ("assistant", "message", "The CI pipeline now passes on every push."),
        ]
    )
    title = summarize_segment(both, "x").title
    assert title.split(WORK_SEPARATOR) == [
        "Set up CI to build and push the rock",
        "The CI pipeline now passes on every push",
    ]


def test_a_prompt_waiting_for_its_reply_is_titled_by_its_request() -> None:
    """A prompt, then a break before the agent answers, is a segment of its own (``make
    bench-real``: "Build, part, push"); people talking keep their key phrases."""
    asked = session(
        [("user", "message", "It seems like we should build the rock and push it as part of CI.")]
    )
    assert summarize_segment(asked, "x").title == "Build the rock and push it as part of CI"
    chat = session(
        [
            ("user", "message", "Can you believe the concert was sold out in ten minutes?"),
            ("user", "message", "I was so disappointed, I had been waiting all year."),
            ("user", "message", "Maybe next time we should queue online earlier."),
        ]
    )
    assert WORK_SEPARATOR not in summarize_segment(chat, "x").title
    assert not summarize_segment(chat, "x").title.startswith("Believe")
    alone = [summarize_segment([said], "x").title for said in chat]
    assert alone == [
        "Ten minutes, concert, sold",
        "Disappointed, year, waiting",
        "Queue online earlier, time",
    ]


def test_a_title_keeps_short_inline_code_and_drops_a_shell_escape() -> None:
    """`ubuntu-latest` removed left "running on (Ubuntu 24.04), but when using"; a name in
    backticks is kept, a path still becomes its last name, and a command the user ran from
    the prompt ("!python3 export.py") is not the request."""
    assert plain("Tests run on `ubuntu-latest` with `--destructive-mode`.") == (
        "Tests run on ubuntu-latest with --destructive-mode."
    )
    assert plain("The tests in `tests/integration/test_charm.py` pass") == (
        "The tests in test_charm pass"
    )
    assert plain("Run `for f in *.py; do ruff check $f; done` now") == "Run now"
    # a format named in capitals is prose; the same word in a path is a suffix
    assert plain("We switch from YAML to TOML: ~/.config/tdk/config.toml") == (
        "We switch from YAML to TOML: config"
    )
    escape = session(
        [
            ("user", "message", "!python3 ~/claude_sessions/export_claude_session.py"),
            ("user", "message", "Please add the XML file to the list of files created."),
            ("assistant", "message", "Done: the list now shows the XML file."),
        ]
    )
    title = summarize_segment(escape, "x").title
    assert title.startswith("Add the XML file to the list of files created"), title


def test_a_thin_request_is_named_by_its_label_or_by_the_agent_restating_it() -> None:
    """ "Subscriptions next." labels the sentence after it in the same prompt (the summarizer
    sees sentences, so the label stood alone in ``make bench-coding``); a request of two words
    ("Can you organise thst?") gives way to the agent's restatement in its first reply; a
    question names its topic and stays."""
    label = session(
        [
            ("user", "message", "Subscriptions next. Failed renewals need dunning."),
            ("assistant", "message", "I'll model a DunningAttempt per retry."),
        ]
    )
    assert summarize_segment(label, "x").title == "Subscriptions next: Failed renewals need dunning"
    thin = session(
        [
            ("user", "message", "Can you organise thst?"),
            ("assistant", "message", "I'll help you set up CI to build and push the rock."),
            ("tool", "tool_call", "Edit .github/workflows/ci.yaml\n@@ -1 +1 @@\n-a\n+b"),
            ("assistant", "message", "Let me add a job that pushes the image to the registry."),
        ]
    )
    assert summarize_segment(thin, "x").title == "Set up CI to build and push the rock"
    asked = session(
        [
            ("user", "message", "How do we draw the panes?"),
            ("assistant", "message", "I'll write a small layout module that splits the screen."),
        ]
    )
    assert summarize_segment(asked, "x").title == "How do we draw the panes?"
