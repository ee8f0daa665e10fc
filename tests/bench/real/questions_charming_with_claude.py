"""Blind test questions for charming-with-claude (a code-review experiment over charm repositories).

Two sessions (``SOURCES.md``): 58b4f056 (2026-03-14) fixes the Textual TUI for reviewing the
findings (crash logging, duplicate widget ids, advancing after a review, a highlight race,
round 5 imported, a Rich markup error); 0a0eb7b7 (2026-03-15 to 03-16) turns the bug findings
into a write-up per team (security findings set aside, false positives and a wrong logging fix
taken out, team folders with a draft email), then one git worktree per security fix, nothing
committed. Written from the transcripts alone, before any change they could inform, on
2026-12-07; refs point at the people's and the assistant's own lines (not at task
notifications or runtime notices), a ``toolu_`` id only where the answer is in a tool call or
its result.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "test"
PROJECT = "charming-with-claude"
HERE = Path(__file__).resolve().parent
SOURCES: tuple[tuple[str, Path], ...] = (
    (PROJECT, HERE / "transcripts" / "heldout" / "charming-with-claude-0a0eb7b7.jsonl"),
    (PROJECT, HERE / "transcripts" / "heldout" / "charming-with-claude-58b4f056.jsonl"),
)

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "constraint",
        "What did I say about opening issues, PRs or commits for the review findings?",
        PROJECT,
        (
            "9c9d12dd-c741-47db-9256-cd6a9f706838",
            "13572231-7376-44da-8949-e11ce23bd42c",
            "e0b32a40-1be1-465e-9f2e-c0cda9059a5c",
        ),
    ),
    RealQ(
        "fact",
        "Which of the security findings looked like they needed private disclosure?",
        PROJECT,
        ("d65bcc84-8047-467b-818b-2f36113e576e", "09eae476-d49c-494d-9aa6-f5de9264cb3f"),
    ),
    RealQ(
        "decision",
        "What did we decide to send the teams instead of issues or PRs?",
        PROJECT,
        ("13572231-7376-44da-8949-e11ce23bd42c", "17756dde-e9a8-4274-9c5c-88f20fd36ffb"),
    ),
    RealQ(
        "artifact",
        "Which script generates the team write-ups, and what needs committing for it?",
        PROJECT,
        (
            "toolu_01MsyPpYixS3eeoGDFF7z588",
            "8a18317d-1017-4dd9-90ad-d162e19ed16f",
            "1142094b-4d58-4e8d-955f-83c47b7619f6",
        ),
    ),
    RealQ(
        "how",
        "How did we handle the Pebble non-string environment findings in the write-ups?",
        PROJECT,
        (
            "f19eab5e-1b83-4ddd-b534-1841e194f1c4",
            "27c33f84-1416-48b4-a829-f3c8ce89b0c8",
            "2bba8da0-b834-4d8e-bd0d-8ae677daed97",
            "3957dd94-085a-4db9-b419-90c3515b43ea",
        ),
    ),
    RealQ(
        "constraint",
        "What's the right fix for a logging call that is missing an f prefix?",
        PROJECT,
        (
            "b8b09e28-82f9-4302-a72b-4581af6a33f7",
            "9dabb995-03b4-4f6a-95ee-59d93332a5a8",
            "8cfac511-37c4-460d-9d86-efe359b68deb",
            "69df2a01-28c6-4368-b769-d62d83e35073",
        ),
    ),
    RealQ(
        "paraphrase",
        "A charm emits diagnostics with variables: which interpolation approach did I insist on?",
        PROJECT,
        (
            "b8b09e28-82f9-4302-a72b-4581af6a33f7",
            "9dabb995-03b4-4f6a-95ee-59d93332a5a8",
            "8cfac511-37c4-460d-9d86-efe359b68deb",
            "69df2a01-28c6-4368-b769-d62d83e35073",
        ),
    ),
    RealQ(
        "decision",
        "What did we conclude about the finding that snap revisions were quoted?",
        PROJECT,
        (
            "c2d1ffc0-9c0a-4b45-860e-5e30f42d584e",
            "26f582c1-46c1-478d-aa5f-52c9dd7fcbd8",
            "4cad81a1-d905-4c90-af55-d01b966eac31",
            "95327c14-0852-4af6-9254-cc8be07cedce",
            "735f450b-948b-48c5-b248-6f5ff5b933a2",
        ),
    ),
    RealQ(
        "fact",
        "Which findings about relation.app did we remove as false positives, and why?",
        PROJECT,
        (
            "bbb449fc-b678-4b88-8837-6fbf3053b6ad",
            "dfcafc5d-5fdc-49b1-8dd5-1a9faf380425",
            "cafa47be-1ee7-4f5c-aff9-6bbb6adca166",
            "80311936-0a86-4220-855b-1d9112983266",
            "caa19f8c-b970-442f-a340-736f1dcae169",
        ),
    ),
    RealQ(
        "preference",
        "How did I want the write-ups organised and the email worded?",
        PROJECT,
        ("2a3c2653-41c6-4d02-913f-9fe09854e5af", "216468b6-e9b5-463e-b4a9-e4d5e0e36689"),
    ),
    RealQ(
        "how",
        "How were the fixes for the security findings prepared for me to review?",
        PROJECT,
        (
            "e0b32a40-1be1-465e-9f2e-c0cda9059a5c",
            "09eae476-d49c-494d-9aa6-f5de9264cb3f",
            "8c38a9cd-1a6b-4170-8e1c-673e73602d26",
            "78aea9be-fdbc-40c7-aafc-0878b05a6b6f",
            "59d6f8a4-68ce-4d6c-a597-5f1e3660dc44",
        ),
    ),
    RealQ(
        # a fact, not an artifact: the branch is named in a reply, not in a tool call (the kind
        # corrected before the split was first scored; question and gold unchanged)
        "fact",
        "Which worktree branch has the fix for the WordPress DB password injection?",
        PROJECT,
        ("59d6f8a4-68ce-4d6c-a597-5f1e3660dc44",),
    ),
    RealQ(
        "resume",
        "Where did we leave off?",
        PROJECT,
        since="2026-03-16T09:53:00Z",
        now="2026-03-18T09:00:00Z",
    ),
    RealQ(
        "fix",
        "Why was the review TUI's crash log nearly empty after it crashed?",
        PROJECT,
        (
            "8a57d194-f195-42ae-b1fd-b39f7bd92491",
            "3b621dab-9188-44f2-a119-b02064c4c170",
            "7f5a1b3c-fc88-4f27-a998-4fc9175d0169",
            "b4fa5b1e-1ff4-4cff-ac24-2c6c6d7e550d",
        ),
    ),
    RealQ(
        "fix",
        "What caused the DuplicateIds error in the review TUI?",
        PROJECT,
        (
            "eb100fe3-b51a-449f-af31-69321eef6562",
            "246c1b6f-6b43-4470-b750-7d0609d05d3e",
            "73b6e508-33d1-4738-9ed0-8f2a2866ad07",
            "c0338351-55a1-4ed0-964b-4fcdbb2387e3",
        ),
    ),
    RealQ(
        "paraphrase",
        "Why did the terminal app throw an identifier clash right after I saved a verdict?",
        PROJECT,
        (
            "eb100fe3-b51a-449f-af31-69321eef6562",
            "246c1b6f-6b43-4470-b750-7d0609d05d3e",
            "73b6e508-33d1-4738-9ed0-8f2a2866ad07",
            "c0338351-55a1-4ed0-964b-4fcdbb2387e3",
        ),
    ),
    RealQ(
        "preference",
        "Do notes typed in the review TUI save on their own?",
        PROJECT,
        (
            "e5141bac-8f04-43e2-a297-9f585d88d092",
            "e02589fb-0c44-48dc-99db-21a4ab9de3a0",
            "f8b7bd26-9693-4fb6-a9b5-d9cd140ab021",
        ),
    ),
    RealQ(
        "fix",
        "Why did some findings fail to get marked as reviewed?",
        PROJECT,
        (
            "44e82cf0-089a-4256-9a85-d0e02b5186dd",
            "9d7bb310-2c71-4f2f-9f0b-e82ca63d531b",
            "2b795cbb-41b3-4aaa-895a-2d83f8c347ec",
        ),
    ),
    RealQ(
        "fix",
        "Why did the findings pane keep going back to the first item even after the reload fix?",
        PROJECT,
        (
            "6e61b4ab-4b02-4211-83f6-c527e93bb8a8",
            "fc9cc7ef-c33e-4bf8-bfa4-70ef4e378403",
            "48d11816-e463-4708-8c7c-34b06823377a",
            "5a1aa3e5-bdbd-4923-8742-f234fb706fb2",
        ),
    ),
    RealQ(
        "constraint",
        "What did I warn you about when you looked into the review database?",
        PROJECT,
        ("44e82cf0-089a-4256-9a85-d0e02b5186dd",),
    ),
    RealQ(
        "fix",
        "Why didn't import-all pick up round 5?",
        PROJECT,
        (
            "e84adb9b-a0d1-4c5a-aa73-19baa583c2ca",
            "f9e77624-9241-465a-abda-da081c0092bd",
            "2b05c080-8b3e-460b-b7de-af217e8709a4",
            "80a15a2d-db54-4dc1-9487-7397ae1c27a4",
        ),
    ),
    RealQ(
        "fix",
        "What caused the MarkupError crash in the TUI?",
        PROJECT,
        (
            "239b3119-9a37-4794-941b-5077939d5905",
            "28dae80b-24c0-4191-99bd-3d6f891766ac",
            "cee44312-340b-4894-85ca-e5a97cc2b6b6",
        ),
    ),
    RealQ("temporal", "What did we do on 2026-03-14?", PROJECT, day="2026-03-14"),
)

# Plausible for the project, answered nowhere in its sessions (checked by grep).
UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (PROJECT, "How much did running the review skill across all the repositories cost?"),
    (PROJECT, "Which Juju version did we test the security fixes against?"),
)
