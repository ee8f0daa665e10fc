"""Questions about three context-evaluator sessions (test split), written from the transcripts
alone.

The sessions (``SOURCES.md``): Claude Code in context-evaluator (PackmindHub's analyzer of
AGENTS.md / CLAUDE.md files, a Bun + React app), captured by Entire. 31b1be44, 2026-02-13: a
plan carried out so that suggestions say whether they create a new ("phantom") file or update
one (the flag kept through the remediation pipeline, evaluators 12/14/15 taught it), a test
assertion fixed, a pre-commit hook failing on someone else's uncommitted files, and the user's
leave to commit with ``--no-verify``. a0af77b8, 2026-02-18 to
2026-02-19: a plan carried out so that "Evaluate Impact" reruns the evaluators of the original
evaluation (both result formats), a Biome format error, then a commit that a pre-commit hook
stopped on a type error and a prepare-commit-msg hook reworded. 5e1ab9a6, 2026-02-20: GitHub
Copilot instruction files shown with an "AGENTS.md" badge, their type fixed and the badge
renamed, then only the session's own two files committed. Written on 2026-12-07 by reading the
transcripts, before any change they could inform; the format and the rules are those of
``questions.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "test"
RUNTIME = "claude-code"
PROJECT = "context-evaluator"
HERE = Path(__file__).resolve().parent / "transcripts" / "context-evaluator"
SOURCES: tuple[tuple[str, Path], ...] = (
    (PROJECT, HERE / "31b1be44.jsonl"),
    (PROJECT, HERE / "a0af77b8.jsonl"),
    (PROJECT, HERE / "5e1ab9a6.jsonl"),
)

PHANTOM_PLAN = "7b388274-9bbd-4af9-a240-36c1f29e184d"  # the plan of the phantom-file session
PHANTOM_DONE = "a2507433-4439-4952-a6b3-21323ef64b04"  # its summary of the changes
PLAN = "f721f8fd-accb-4405-aeab-4548ada57e28"  # the plan the first session carried out
DONE = "9aaea312-bc8a-4619-92e9-2d53811ef335"  # its summary of the change
MISCLASSIFIED = "19679b30-99ed-4538-ba8f-18a0a3a1c5a9"  # why the Copilot files read as AGENTS.md
BADGE_DONE = "a34ad99f-6278-4987-8654-fe12bf73d240"  # the two edits, summed up

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "fact",
        "Which evaluators can now suggest creating a new AGENTS.md in a subdirectory?",
        PROJECT,
        (PHANTOM_PLAN, PHANTOM_DONE),
    ),
    RealQ(
        "fix",
        "Why did the remediation agent never get an explicit instruction to create a suggested "
        "new file?",
        PROJECT,
        (PHANTOM_PLAN, PHANTOM_DONE),
    ),
    RealQ(
        "how",
        "How does the remediation prompt tell creating a file apart from updating one?",
        PROJECT,
        (PHANTOM_PLAN, "toolu_01NJMeVCisJVjCvYoNKhZ6gG", PHANTOM_DONE),
    ),
    RealQ(
        "paraphrase",
        "How does the repair step learn that a proposed doc must be written from scratch in a "
        "subfolder rather than edited?",
        PROJECT,
        (PHANTOM_DONE,),
    ),
    RealQ(
        "artifact",
        "Which evaluator prompt files got the phantom file section?",
        PROJECT,
        (
            "toolu_01LvXxgdLjPcSLj682tgTrck",
            "toolu_014yxH6VsafzsxLqLismgNvL",
            "toolu_01BuvvoBUmxt2vnvFUWNdBMj",
            PHANTOM_DONE,
        ),
    ),
    RealQ(
        "fix",
        "Why did one of the new prompt-generator tests fail at first?",
        PROJECT,
        (
            "toolu_01XPxNncdyPuhZiY4stkjJUj",
            "16e998fc-1d97-4ca5-b9db-b8942c73bba8",
            "toolu_01EdLw49ASWAWd9mGZ11Nzpg",
        ),
    ),
    RealQ(
        "fix",
        "Why did the pre-commit hook block the phantom-file commit?",
        PROJECT,
        ("toolu_01Hbs9GJGVREMSx4GBZgYtXw", "f7b4273a-5613-4644-bce2-27c083736322"),
    ),
    RealQ(
        "constraint",
        "What did I point out about App.tsx when the lint errors were being fixed?",
        PROJECT,
        ("9f9930b4-c2cd-450b-8ccd-cde64fde0d2b", "dd186219-6817-4f12-a3af-39be5817dfd3"),
    ),
    RealQ(
        "decision",
        "How was the phantom-file change committed in the end, and under which commit?",
        PROJECT,
        (
            "175c7e93-dd95-41d2-bf6a-36fbf8a8fe8e",
            "toolu_01C5Ctvd5r63HCCKT7FSyvgM",
            "e176045d-64bc-4a42-805f-1215fa3fd456",
        ),
    ),
    RealQ(
        "temporal",
        "What did we do on 2026-02-13?",
        PROJECT,
        day="2026-02-13",
    ),
    RealQ(
        "fix",
        "What was wrong with Evaluate Impact that made its score comparison misleading?",
        PROJECT,
        (PLAN, DONE),
    ),
    RealQ(
        "how",
        "How does the impact evaluation find out which evaluators the original evaluation ran?",
        PROJECT,
        (PLAN, DONE, "toolu_01G1V4agUFKd8P2BJ8K1uUbz"),
    ),
    RealQ(
        "paraphrase",
        "After a fix is applied to a cloned repo and it gets scored again, how do we keep the "
        "checks identical to the first scoring?",
        PROJECT,
        (DONE,),
    ),
    RealQ(
        "artifact",
        "Which edits to remediation.ts passed the parent's evaluators to the new job?",
        PROJECT,
        ("toolu_01Mak29U5nHfqtLZDiphzMEJ", "toolu_01G1V4agUFKd8P2BJ8K1uUbz"),
    ),
    RealQ(
        "fix",
        "Why did lint fail after the evaluator extraction was added, and what fixed it?",
        PROJECT,
        (
            "toolu_01W8ZGAV6xE6S16TNrUkeLkC",
            "0f933862-3a46-4a43-9dc0-72ba0acf98ee",
            "toolu_01TYaHW9KNhG61bebzUoqj5X",
        ),
    ),
    RealQ(
        "fix",
        "Why did the first attempt to commit the evaluator change fail?",
        PROJECT,
        (
            "toolu_01CMFGX1G6m7sS5cNWn8yS39",
            "273b3d40-b703-4cc2-8b30-6ad8f6791e56",
            "04b89000-d30d-4ca1-aaf7-3a612963287d",
            "240dadee-33aa-4bfb-bd9c-3c3dcd55829c",
        ),
    ),
    RealQ(
        "fact",
        "Which commit ended up holding the evaluator change, and why is its message about "
        "something else?",
        PROJECT,
        (
            "toolu_01FYbEMB2PiTgvRhJAssYgLe",
            "dbe245ea-6473-44c1-964d-fc9953d1cbcd",
            "7c412abe-da0b-49a9-88ad-3116957bce99",
        ),
    ),
    RealQ(
        "fact",
        "Can the test suite be run through rtk?",
        PROJECT,
        ("toolu_01GTwP5cAcCgJsyFTRCiGAkc", "toolu_012hNvtGN4KMAh1sW3777etX"),
    ),
    RealQ(
        "temporal",
        "What did we do on 2026-02-18?",
        PROJECT,
        day="2026-02-18",
    ),
    RealQ(
        "preference",
        "What should the context view call GitHub Copilot instruction files instead of AGENTS.md?",
        PROJECT,
        ("65c80e07-2db7-4a94-9c10-4c2bfb81a80b", BADGE_DONE),
    ),
    RealQ(
        "fix",
        "Why were plain .md files under .github/instructions classified as AGENTS.md files?",
        PROJECT,
        (MISCLASSIFIED, BADGE_DONE),
    ),
    RealQ(
        "paraphrase",
        "Why did some of GitHub's per-topic guidance docs get tagged as if they were meant "
        "for every agent?",
        PROJECT,
        (MISCLASSIFIED,),
    ),
    RealQ(
        "artifact",
        "Where is the function that decides a context file's type, and what did we change in it?",
        PROJECT,
        (MISCLASSIFIED, "toolu_012PVzQVSnz2QCpJABFQNaYg"),
    ),
    RealQ(
        "decision",
        "When I asked to commit all the recent changes, what went into the commit and what "
        "was left out?",
        PROJECT,
        (
            "8f2f7813-7f1a-4752-84e1-287ce834741c",
            "toolu_01JDmTu8gue3Rh9bSfgPm3WA",
            "f4cbd310-6a18-4f52-9373-2debd18c2451",
        ),
    ),
    RealQ(
        "resume",
        "Where did we leave off after the Copilot badge change?",
        PROJECT,
        since="2026-02-20T15:39:00Z",
    ),
)

# Plausible questions about context-evaluator that neither session answers (checked by grep).
UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (PROJECT, "How is the hosted context-evaluator.ai site deployed?"),
    (PROJECT, "Does the web UI have a dark mode, and how is it switched?"),
)
