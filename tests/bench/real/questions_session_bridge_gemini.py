"""Questions about two Session Bridge sessions of Gemini CLI (dev split), written from the
transcripts alone.

Session Bridge is an unofficial VS Code extension for browsing Entire checkpoints; its author
worked on it with three agents, and Entire published the sessions (``SOURCES.md``). This module
holds the Gemini CLI ones (``questions_session_bridge_codex.py`` and
``questions_session_bridge_opencode.py`` the others; one module per runtime, since a module names
the one reader its transcripts are read with). 970c70a7, 2026-04-14: the demo GIFs shrunk with
ffmpeg, linked to their features in the README, and a callout that the extension is unofficial.
d0ed8c54, 2026-04-14: a contribution guide, "discuss a change before the PR", GitHub issue
forms. Written on 2026-12-07 by reading the transcripts, before any change they could inform; the
format and the rules are those of ``questions.py``, except the refs: a Gemini CLI message's
``id`` (a prompt or a reply) or a tool call's ``id`` (``run_shell_command_...``,
``write_file_...``: the call and its result).
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "dev"
RUNTIME = "gemini-cli"
PROJECT = "session-bridge"
HERE = Path(__file__).resolve().parent / "transcripts" / "session-bridge"
SOURCES: tuple[tuple[str, Path], ...] = (
    (PROJECT, HERE / "970c70a7.json"),
    (PROJECT, HERE / "d0ed8c54.json"),
)

GIFS_DONE = "49a3a790-d7a0-4c3f-ba57-6ff80c795465"  # how the GIFs were shrunk, one figure
FORMS_DONE = "93326e1f-a29d-40c7-8d5f-99867284e325"  # the issue forms, summed up

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "how",
        "How did we shrink the demo GIFs?",
        PROJECT,
        (
            "e172b608-f54b-45ed-83b5-4b70094d544c",
            "656b7ee3-99a2-4bed-bee5-ef8b559221b8",
            "run_shell_command_1776125816882_0",
            GIFS_DONE,
        ),
    ),
    RealQ(
        "fact",
        "How big were the demo GIFs before and after we shrank them?",
        PROJECT,
        ("run_shell_command_1776125789767_0", "run_shell_command_1776125827905_0", GIFS_DONE),
    ),
    RealQ(
        "paraphrase",
        "What did we do to make the animated screen recordings lighter?",
        PROJECT,
        (GIFS_DONE,),
    ),
    RealQ(
        "artifact",
        "What else changed in the README when each GIF was tied to its feature?",
        PROJECT,
        (
            "f13c8160-c2f1-42fc-af1b-53235682b2fe",
            "replace_1776125936200_0",
            "a8b5db33-ea68-4872-a6bd-68dbadbb33ee",
        ),
    ),
    RealQ(
        "preference",
        "What did I want the README to say about the extension's relation to Entire?",
        PROJECT,
        (
            "eeca91d0-c0dd-4616-a68f-2301e23f0136",
            "replace_1776126567424_0",
            "1f29ae21-cd28-4b19-bfaf-3c1b59a3c0b0",
        ),
    ),
    RealQ(
        "how",
        "What did the assistant read before writing the contribution guide?",
        PROJECT,
        (
            "91c4aa01-8a07-42a6-b0f3-de813a23a750",
            "read_file_1776160531737_0",
            "read_file_1776160531759_1",
            "read_file_1776160531785_2",
        ),
    ),
    RealQ(
        "fact",
        "What does the contribution guide cover, and where is it linked from?",
        PROJECT,
        (
            "5b227bcb-ee89-4581-aa18-5d4291b4f37a",
            "40ebb635-004d-4420-a8d0-54b27a4c093a",
        ),
    ),
    RealQ(
        "constraint",
        "What has to happen before someone opens a pull request?",
        PROJECT,
        (
            "0ee77e18-8763-4e57-adac-60335531b96e",
            "0bcbbc29-ecee-44eb-a7cd-085a19c171e4",
            "0d14327a-ea18-432a-af6f-dca43f1432dc",
        ),
    ),
    RealQ(
        "artifact",
        "Where are the issue templates we added?",
        PROJECT,
        ("write_file_1776161315763_0", "write_file_1776161316093_1", FORMS_DONE),
    ),
    RealQ(
        "paraphrase",
        "When somebody files a problem or an idea on our tracker, what are they asked for?",
        PROJECT,
        (FORMS_DONE,),
    ),
    RealQ(
        "temporal",
        "What did we do on 2026-04-14?",
        PROJECT,
        day="2026-04-14",
    ),
)

# Plausible questions about Session Bridge that none of its sessions answers (checked by grep
# over the four transcripts).
UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (PROJECT, "Is Session Bridge published on Open VSX as well as the VS Code Marketplace?"),
    (PROJECT, "Which keyboard shortcuts does Session Bridge define?"),
)
