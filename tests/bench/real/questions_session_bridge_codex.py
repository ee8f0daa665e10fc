"""Questions about two Session Bridge sessions of Codex (dev split), written from the transcripts
alone.

Session Bridge is an unofficial VS Code extension for browsing Entire checkpoints (see
``questions_session_bridge_gemini.py``; one module per runtime). 019d683e, Codex (gpt-5.4),
2026-04-07: the Recovery tree view removed (its actions stay VS Code commands), a patch that did
not apply, a ``package.json`` left invalid and fixed, compile and tests, then a commit of only
those hunks while the user's other work stayed in the worktree. 019d6bdc, Codex CLI (gpt-5.4),
2026-04-08: a committed session's ``createdAt`` taken from its transcript's first event instead
of the metadata's ``created_at`` (written when the session ended), the latest snapshot picked by
last activity, regression tests, ``pnpm test`` aborting in the VS Code harness so the compiled
tests were run under Mocha directly. Written on 2026-12-07 by reading the transcripts, before any
change they could inform; the format and the rules are those of
``questions.py``, except the refs: ``<session id>:line:N`` is the message on line N of that
session's rollout (a prompt or a reply; the reader's ``metadata.line``, which alone is not
unique: both rollouts have a prompt on line 6), a ``call_...`` id is a tool call and its output.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "dev"
RUNTIME = "codex"
PROJECT = "session-bridge"
HERE = Path(__file__).resolve().parent / "transcripts" / "session-bridge"
SOURCES: tuple[tuple[str, Path], ...] = (
    (PROJECT, HERE / "019d683e.jsonl"),
    (PROJECT, HERE / "019d6bdc.jsonl"),
)

RECOVERY = "019d683e-1ac9-7fb1-99eb-e46acbee7ff0"  # the Recovery view's session
TIMES = "019d6bdc-2d03-7101-9dfa-7b3497471549"  # the session timestamps' session


def line(session: str, number: int) -> str:
    """The ref of the message on line ``number`` of ``session``'s rollout."""
    return f"{session}:line:{number}"


ASKED = line(RECOVERY, 6)  # remove the Recovery tree view
REMOVED = line(RECOVERY, 171)  # what was removed, what stays, validation
COMMITTED = line(RECOVERY, 258)  # the commit, and what is still uncommitted
TIMES_ASKED = line(TIMES, 6)  # created_at is the session's end; the first event its start
TIMES_DONE = line(TIMES, 292)  # the summary of the timestamp change

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "decision",
        "Why did we get rid of the Recovery tree view?",
        PROJECT,
        (ASKED, REMOVED),
    ),
    RealQ(
        "paraphrase",
        "Why did the panel of restore actions disappear from the sidebar?",
        PROJECT,
        (ASKED,),
    ),
    RealQ(
        "fact",
        "Which views does the extension still register after the Recovery view went away?",
        PROJECT,
        (REMOVED,),
    ),
    RealQ(
        "how",
        "How does the test suite make sure the Recovery view stays gone?",
        PROJECT,
        (line(RECOVERY, 71), REMOVED),
    ),
    RealQ(
        "fix",
        "Why did the first patch removing the Recovery view not apply?",
        PROJECT,
        ("call_UHViFuA2rDsDbk14FuIb7C9J", line(RECOVERY, 91)),
    ),
    RealQ(
        "fix",
        "Why did pnpm compile fail right after the Recovery view was removed?",
        PROJECT,
        ("call_iNUL18W6AaTKcn3tyoVdg0Xc", line(RECOVERY, 141), "call_3TaAf0EtO7IJxXm2bvMmnm9C"),
    ),
    RealQ(
        "artifact",
        "Which icon files were deleted along with the Recovery view?",
        PROJECT,
        (line(RECOVERY, 85), REMOVED, "call_fssBlPXKrlkaGEsy9zdKP9we"),
    ),
    RealQ(
        "constraint",
        "When the Recovery removal was committed, what had to stay out of the commit?",
        PROJECT,
        (
            line(RECOVERY, 171),
            line(RECOVERY, 181),
            line(RECOVERY, 191),
            line(RECOVERY, 201),
            COMMITTED,
        ),
    ),
    RealQ(
        "how",
        "How did we stage only the Recovery hunks of package.json and extension.ts?",
        PROJECT,
        (
            line(RECOVERY, 207),
            line(RECOVERY, 215),
            line(RECOVERY, 221),
            line(RECOVERY, 228),
            "call_GOcxFTrm6z2tPDGksTpV8WXz",
        ),
    ),
    RealQ(
        "artifact",
        "What is the commit that removed the Recovery view?",
        PROJECT,
        ("call_T6CfEmJ9iJQ0zMvGez3eHpab", COMMITTED),
    ),
    RealQ(
        "temporal",
        "What did we do on 2026-04-07?",
        PROJECT,
        day="2026-04-07",
    ),
    RealQ(
        "fact",
        "When is a session's created_at written in Entire's metadata, and where does the "
        "session's start time come from instead?",
        PROJECT,
        (TIMES_ASKED, line(TIMES, 11), TIMES_DONE),
    ),
    RealQ(
        "decision",
        "Why did the comparison that picks a session's latest checkpoint snapshot change too?",
        PROJECT,
        (line(TIMES, 72), line(TIMES, 125), TIMES_DONE),
    ),
    RealQ(
        "paraphrase",
        "How does a card tell when a conversation began apart from when it was last busy?",
        PROJECT,
        (TIMES_DONE,),
    ),
    RealQ(
        "artifact",
        "Which helper reads a session's start time from its transcript?",
        PROJECT,
        ("call_3GrTPuxRJxtMe5D9ZXMM5rdO", TIMES_DONE),
    ),
    RealQ(
        "constraint",
        "What had to be kept when transcript.ts was patched for the start time?",
        PROJECT,
        (line(TIMES, 145), "call_Qt7HsKWckILUdsUP3aW2dkuu", line(TIMES, 156)),
    ),
    RealQ(
        "how",
        "How are the new timestamps covered by tests?",
        PROJECT,
        (line(TIMES, 135), line(TIMES, 183), "call_rCIQYj17grzFwsS99FR8h2yf", TIMES_DONE),
    ),
    RealQ(
        "fix",
        "Why couldn't pnpm test check the timestamp change, and how were the tests run instead?",
        PROJECT,
        (
            "call_LERbL7Fm8XEdg9lEStpWDPpx",
            line(TIMES, 231),
            line(TIMES, 256),
            "call_Otdkf3kNW6WaytdmrpdgNJfh",
            TIMES_DONE,
        ),
    ),
    RealQ(
        "temporal",
        "What did we do on 2026-04-08?",
        PROJECT,
        day="2026-04-08",
    ),
)

UNANSWERABLE: tuple[tuple[str, str], ...] = ()  # the project's are in the Gemini CLI module
