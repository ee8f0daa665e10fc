"""Questions about a Session Bridge session of Codex CLI (dev split), written from the transcript
alone.

Session Bridge is an unofficial VS Code extension for browsing Entire checkpoints (see
``questions_session_bridge_gemini.py``; one module per runtime). 019d683e, Codex (gpt-5.4),
2026-04-07: the Recovery tree view removed (its actions stay VS Code commands), a patch that did
not apply, a ``package.json`` left invalid and fixed, compile and tests, then a commit of only
those hunks while the user's other work stayed in the worktree. Written on 2026-12-07 by reading
the transcript, before any change it could inform; the format and the rules are those of
``questions.py``, except the refs: ``line:N`` is the message on line N of the rollout (a prompt
or a reply; the reader's ``metadata.line``), a ``call_...`` id is a tool call and its output.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "dev"
RUNTIME = "codex"
PROJECT = "session-bridge"
HERE = Path(__file__).resolve().parent / "transcripts" / "session-bridge"
SOURCES: tuple[tuple[str, Path], ...] = ((PROJECT, HERE / "019d683e.jsonl"),)

ASKED = "line:6"  # remove the Recovery tree view
REMOVED = "line:171"  # what was removed, what stays, validation
COMMITTED = "line:258"  # the commit, and what is still uncommitted

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
        ("line:71", REMOVED),
    ),
    RealQ(
        "fix",
        "Why did the first patch removing the Recovery view not apply?",
        PROJECT,
        ("call_UHViFuA2rDsDbk14FuIb7C9J", "line:91"),
    ),
    RealQ(
        "fix",
        "Why did pnpm compile fail right after the Recovery view was removed?",
        PROJECT,
        ("call_iNUL18W6AaTKcn3tyoVdg0Xc", "line:141", "call_3TaAf0EtO7IJxXm2bvMmnm9C"),
    ),
    RealQ(
        "artifact",
        "Which icon files were deleted along with the Recovery view?",
        PROJECT,
        ("line:85", REMOVED, "call_fssBlPXKrlkaGEsy9zdKP9we"),
    ),
    RealQ(
        "constraint",
        "When the Recovery removal was committed, what had to stay out of the commit?",
        PROJECT,
        ("line:171", "line:181", "line:191", "line:201", COMMITTED),
    ),
    RealQ(
        "how",
        "How did we stage only the Recovery hunks of package.json and extension.ts?",
        PROJECT,
        ("line:207", "line:215", "line:221", "line:228", "call_GOcxFTrm6z2tPDGksTpV8WXz"),
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
)

UNANSWERABLE: tuple[tuple[str, str], ...] = ()  # the project's are in the Gemini CLI module
