"""The extractive summarizer and the calendar: pure functions, checked directly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from datetime import UTC, date, datetime, timedelta

from agent_memory_summarizer.calendar import (
    chain,
    month_bucket,
    project_key,
    title_prefix,
    week_bucket,
    year_bucket,
)
from agent_memory_summarizer.extractive import (
    bullet_count,
    summarize_rollup,
    summarize_segment,
)
from agent_memory_summarizer.headline import narrates
from agent_memory_summarizer.model import Bullet, ChildDigest, SourceEvent
from agent_memory_summarizer.text import split_sentences, tokens

T0 = datetime(2026, 3, 10, 9, tzinfo=UTC)

SESSION = [
    "Let's fix the migration lock today. The recorder must acknowledge only after the commit.",
    "I looked at the migration runner. It takes an advisory lock so that two replicas starting "
    "together do not race.",
    "Running the tests now.",
    "```python\nconn.execute('SELECT pg_advisory_lock(%s)', (LOCK,))\n```",
    "The tests passed. The migration lock holds when three replicas start at once.",
    "We prefer plain SQL files over an ORM; avoid SQLAlchemy in the services.",
    "Next: the summarizer. A grip means a link from a bullet to the events it came from.",
    "First run make install, then start the stack with agent-memory up.",
    "The advisory lock is released in a finally block, so a crash does not leave it held.",
    "The recorder must acknowledge only after the commit.",
    "Benchmarks: the recorder stores 8,000 events per second on two cores.",
    "The query service reads the migration state at start and refuses an unknown version.",
]


def events(texts: list[str]) -> list[SourceEvent]:
    return [
        SourceEvent(f"e{i}", T0 + timedelta(minutes=i), "user", "message", t)
        for i, t in enumerate(texts)
    ]


def test_bullets_are_real_sentences_with_grips_in_spoken_order() -> None:
    evs = events(SESSION)
    summary = summarize_segment(evs, "fallback")
    assert 3 <= len(summary.bullets) <= 7
    by_id = {e.event_id: e for e in evs}
    positions = []
    for bullet in summary.bullets:
        assert bullet.grips, bullet
        for grip in bullet.grips:
            (event_id,) = grip.event_ids
            source = by_id[event_id].text
            assert bullet.text.rstrip("…") in source or bullet.text.startswith("Code: ")
            assert grip.excerpt.strip("…") in " ".join(source.split())
        positions.append(min(int(g.event_ids[0][1:]) for g in bullet.grips))
    assert positions == sorted(positions), "bullets keep the order things were said"
    assert summary.title != "fallback" and summary.keywords
    assert "migration lock" in summary.keywords or "advisory lock" in summary.keywords


def test_repeated_sentence_is_one_bullet_with_a_grip_per_occurrence() -> None:
    rule = "The recorder must acknowledge only after the commit."
    summary = summarize_segment(events([rule, "Something else entirely here.", rule]), "x")
    same = [b for b in summary.bullets if b.text == rule]
    assert len(same) == 1
    assert [g.event_ids for g in same[0].grips] == [("e0",), ("e2",)]
    assert same[0].kind == "constraint" and same[0].salience > 0.2


def test_events_without_words_still_get_a_gripped_bullet() -> None:
    evs = [
        SourceEvent("a", T0, "system", "session_start", ""),
        SourceEvent("b", T0, "system", "session_end", " "),
    ]
    summary = summarize_segment(evs, "Session s #0")
    assert summary.title == "Session s #0"
    (bullet,) = summary.bullets
    assert bullet.grips[0].event_ids == ("a", "b")


def test_a_line_announcing_numbered_steps_is_a_procedure() -> None:
    """Split into sentences, a numbered how-to is an intro and lines that each state nothing;
    the intro is the procedure's bullet (its grip holds the steps). A numbered report of what
    was done is not."""
    howto = (
        "Write down how to add a widget:\n1. implement the Widget trait in src/widgets/\n"
        "2. register it in widgets/mod.rs\n3. add a snapshot test for its rendering"
    )
    report = "Here is what I changed in the widgets:\n1. added the net widget\n2. fixed its test"
    summary = summarize_segment(events([howto, report]), "x")
    kinds = {b.text: b.kind for b in summary.bullets}
    assert kinds["Write down how to add a widget:"] == "procedure"
    assert kinds.get("Here is what I changed in the widgets:", "observation") == "observation"
    assert "procedure" not in {k for t, k in kinds.items() if t[:2] in ("1.", "2.", "3.")}


def test_code_is_one_unit_and_never_a_rule() -> None:
    text = "Patched it:\n```python\nif must_retry:\n    never_ack()\n```\nDone."
    sentences = split_sentences(text)
    assert [s.is_code for s in sentences] == [False, True, False]
    code = sentences[1]
    assert text[code.start : code.end] == code.text


def test_bullet_count_rule() -> None:
    assert [bullet_count(n) for n in (1, 2, 3, 10, 13, 20, 28, 500)] == [1, 2, 3, 3, 4, 5, 7, 7]


def test_same_input_same_output_whatever_the_hash_seed() -> None:
    """Set iteration order changes with PYTHONHASHSEED; the summary must not."""
    script = (
        "import json, sys\n"
        "from dataclasses import asdict\n"
        "from datetime import datetime, timedelta, UTC\n"
        "from agent_memory_summarizer.extractive import summarize_segment\n"
        "from agent_memory_summarizer.model import SourceEvent\n"
        "texts = json.loads(sys.stdin.read())\n"
        "t0 = datetime(2026, 3, 10, 9, tzinfo=UTC)\n"
        "evs = [SourceEvent(f'e{i}', t0 + timedelta(minutes=i), 'user', 'message', t)"
        " for i, t in enumerate(texts)]\n"
        "print(json.dumps(asdict(summarize_segment(evs, 'x'))))\n"
    )
    outputs = set()
    for seed in ("1", "2", "3"):
        out = subprocess.run(
            [sys.executable, "-c", script],
            input=json.dumps(SESSION),
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        outputs.add(out)
    here = json.dumps(asdict(summarize_segment(events(SESSION), "x")))
    assert outputs == {here + "\n"}


def test_rollup_spreads_over_children_and_keeps_their_grips() -> None:
    children = [
        ChildDigest(
            node_id=f"segment:s{c}",
            version=1,
            title=f"child {c}",
            keywords=["migration lock", f"topic{c}"],
            bullets=[
                Bullet(
                    text=f"Child {c} says thing {k} about the migration lock and topic{c}.",
                    kind="observation",
                    salience=0.1,
                    grip_ids=(f"grip:{c}{k}",),
                )
                for k in range(4)
            ],
        )
        for c in range(3)
    ]
    summary = summarize_rollup("Tue 2026-03-10", children)
    # a day names its pieces of work: one bullet per child segment first, citing its grips
    assert summary.title == "Tue 2026-03-10: child 0; child 1; child 2"
    assert [b.text for b in summary.bullets[:3]] == ["child 0", "child 1", "child 2"]
    assert all(b.work for b in summary.bullets[:3])
    assert summary.bullets[0].grip_ids == ("grip:00", "grip:01", "grip:02", "grip:03")
    assert 3 <= len(summary.bullets) <= 7
    assert {b.source_node_id for b in summary.bullets} == {"segment:s0", "segment:s1", "segment:s2"}
    for bullet in summary.bullets:
        assert bullet.source_node_id is not None
        child = int(bullet.source_node_id[-1])
        assert bullet.grip_ids[0].startswith(f"grip:{child}")


def test_iso_weeks_belong_to_the_month_of_their_thursday() -> None:
    # Tue 2026-03-31 is in W14 (Mon 03-30 .. Sun 04-05), Thursday 04-02: April
    assert week_bucket(date(2026, 3, 31)).bucket == "2026-W14"
    assert month_bucket(date(2026, 3, 31)).bucket == "2026-04"
    assert month_bucket(date(2026, 3, 29)).bucket == "2026-03"  # Sunday of W13
    # Tue 2025-12-30 is in 2026-W01 (Thursday 2026-01-01): January 2026, year 2026
    assert week_bucket(date(2025, 12, 30)).bucket == "2026-W01"
    assert month_bucket(date(2025, 12, 30)).bucket == "2026-01"
    assert year_bucket(date(2025, 12, 30)).bucket == "2026"
    # Fri 2027-01-01 is in 2026-W53 (Thursday 2026-12-31): December 2026
    assert week_bucket(date(2027, 1, 1)).bucket == "2026-W53"
    assert month_bucket(date(2027, 1, 1)).bucket == "2026-12"
    assert year_bucket(date(2027, 1, 1)).bucket == "2026"


def test_a_month_is_whole_weeks_and_months_tile_the_year() -> None:
    april = month_bucket(date(2026, 4, 15))
    assert april.start == datetime(2026, 3, 30, tzinfo=UTC)  # Monday of W14
    assert april.end == datetime(2026, 5, 4, tzinfo=UTC)  # Monday of W19 (Thursday May 7)
    year = year_bucket(date(2026, 6, 1))
    cursor, months = year.start, []
    while cursor < year.end:
        month = month_bucket(cursor.date())
        assert month.start == cursor
        months.append(month.bucket)
        cursor = month.end
    assert cursor == year.end
    assert months == [f"2026-{m:02d}" for m in range(1, 13)]
    # every day of the year lands inside its own chain's ranges
    day = datetime(2026, 1, 1, 12, tzinfo=UTC)
    for _ in range(400):
        for bucket in chain(day):
            assert bucket.start <= day < bucket.end, (day, bucket)
        day += timedelta(days=1)


def test_node_ids_and_titles() -> None:
    day, week, month, year = chain(datetime(2026, 3, 31, 23, 59, tzinfo=UTC))
    assert [b.node_id("proj") for b in (day, week, month, year)] == [
        "day:2026-03-31@proj",
        "week:2026-W14@proj",
        "month:2026-04@proj",
        "year:2026@proj",
    ]
    assert project_key("my-proj.v2") == "my-proj.v2"
    unsafe = project_key("/home/ann/src/my project")
    assert unsafe.startswith("~") and unsafe == project_key("/home/ann/src/my project")
    assert "/" not in unsafe and " " not in unsafe
    assert title_prefix(day) == "Tue 2026-03-31"
    assert title_prefix(week) == "Week 2026-W14 (Mar 30 - Apr 5)"
    assert title_prefix(month) == "April 2026"
    assert title_prefix(year) == "2026"


def test_rollup_merges_a_bullet_said_on_several_days() -> None:
    rule = "Never store secrets in the event metadata."
    children = [
        ChildDigest(
            node_id=f"day:2026-03-1{d}@p",
            version=1,
            title="",
            keywords=["secrets"],
            bullets=[
                Bullet(text=rule, kind="constraint", salience=0.3, grip_ids=(f"grip:{d}",)),
                Bullet(
                    text=f"Day {d} fixed bug {d}.",
                    kind="observation",
                    salience=0.1,
                    grip_ids=(f"grip:x{d}",),
                ),
            ],
        )
        for d in range(3)
    ]
    summary = summarize_rollup("Week", children)
    same = [b for b in summary.bullets if b.text == rule]
    assert len(same) == 1
    assert same[0].grip_ids == ("grip:0", "grip:1", "grip:2")
    assert len(summary.bullets) == 4  # every distinct sentence, within 3..7


def test_redaction_placeholders_never_become_key_phrases() -> None:
    text = "Rotate the key: the secret is [REDACTED:aws_secret_key] and [REDACTED:password]."
    assert tokens(text) == ["rotate", "key", "secret"]


def test_what_people_said_makes_the_bullets_and_the_title_not_tool_output() -> None:
    prose = [
        "The reconciliation job is slow because it scans every payment row each night.",
        "We add a partial index on payments status so the job reads only pending rows.",
        "After the partial index the reconciliation job finishes in forty milliseconds.",
    ]
    tool = [
        "$ uv run pytest tests/test_reconcile.py\nexit 1\nsrc/payments/reconcile.py:88: "
        "AssertionError raised in the reconcile module of the payments package.",
        "Read /home/dev/payments-api/src/payments/reconcile.py from the home dev folder.",
        "Edit /home/dev/payments-api/src/payments/reconcile.py applied to the payments source.",
    ]
    evs = [SourceEvent(f"p{i}", T0 + timedelta(minutes=2 * i), "user", "message", t)
           for i, t in enumerate(prose)]  # fmt: skip
    evs += [SourceEvent(f"t{i}", T0 + timedelta(minutes=2 * i + 1), "tool", "tool_result", t)
            for i, t in enumerate(tool)]  # fmt: skip
    summary = summarize_segment(evs, "fallback")
    cited = {eid for b in summary.bullets for g in b.grips for eid in g.event_ids}
    assert cited == {"p0", "p1", "p2"}
    assert not {"home", "dev", "src"} & set(" ".join(summary.keywords).split())
    assert "home dev" not in summary.title.lower()


def test_an_agent_narrating_its_next_step_is_a_bullet_only_when_little_else_was_said() -> None:
    """From a real session (``make bench-real``): "Let me check ...", "Now let's test it:"
    announce a tool call; what it found is the memory."""
    said = [
        ("user", "Does it check the pid of the current session before it exports?"),
        ("assistant", "Let me check how the session is currently being selected:"),
        ("assistant", "The script detects the Claude PID but never uses it to pick the session."),
        ("assistant", "Since we only have one session, let me create a test scenario."),
        ("assistant", "It now writes a marker file and exports the session whose log grows."),
        ("assistant", "Now let's test it:"),
        ("assistant", "Here are the files that should be moved:"),
        ("assistant", "The export picks the right session with two sessions open in one folder."),
        ("assistant", "Let me look at the export directory."),
        ("assistant", "Now let me update the main logic to use this session identification:"),
        ("assistant", "Good, the LICENSE file exists. Let me create the remaining files:"),
        ("assistant", "Let me verify the PID detection one more time:"),
        ("assistant", "Let's run the export script again."),
        ("assistant", "Perfect! Let me also test with a more recent modification."),
    ]  # 13 sentences: room for four bullets, three of them statements
    evs = [SourceEvent(f"e{i}", T0 + timedelta(minutes=i), role, "message", text)
           for i, (role, text) in enumerate(said)]  # fmt: skip
    bullets = [b.text for b in summarize_segment(evs, "fallback").bullets]
    assert not [b for b in bullets if "let me" in b.lower() or "let's" in b.lower()], bullets
    assert not [b for b in bullets if b.startswith("Here are")], bullets
    assert any("marker file" in b for b in bullets)
    # a person's "let me" is theirs; and with too little else said, narration stays
    few = [SourceEvent("u", T0, "user", "message", "Let me know when the export works.")]
    replies = ("Let me check the exported files.", "It works.")
    few += [SourceEvent(f"a{i}", T0 + timedelta(minutes=i + 1), "assistant", "message", text)
            for i, text in enumerate(replies)]  # fmt: skip
    kept = [b.text for b in summarize_segment(few, "fallback").bullets]
    assert "Let me know when the export works." in kept
    assert "Let me check the exported files." in kept
    # a report that opens a list says what was done
    assert not narrates("assistant", "I've updated the README so that the export includes:")
    assert not narrates("assistant", "Based on my research, Claude Code stores sessions here:")
    assert narrates("assistant", "Here are the files that should be moved to a backup folder:")
