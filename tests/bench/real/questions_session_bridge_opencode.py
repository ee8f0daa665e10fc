"""Questions about a Session Bridge session of OpenCode (dev split), written from the transcript
alone.

Session Bridge is an unofficial VS Code extension for browsing Entire checkpoints (see
``questions_session_bridge_gemini.py``; one module per runtime). ses_277daa81, OpenCode 1.4.3
(claude-sonnet-4.6), 2026-04-13: the commands of Entire's CLI documentation wrapped as VS Code
commands (interactive ones in a terminal), compile errors from leftover fragments, the commands
moved into their own module (one compaction), then every command run in the terminal and the
agent picker dropped. The transcript is OpenCode's storage written back from the published
``opencode export`` (``SOURCES.md``). Written on 2026-12-07 by reading the transcript, before any
change it could inform; the format and the rules are those of ``questions.py``, except the refs:
a message's id (``msg_...``: a prompt or a reply, its text parts joined) or a tool part's
``callID`` (``tooluse_...``: the call and its result). OpenCode's times are epoch milliseconds,
so no question here is asked by ``day`` or ``since``.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "dev"
RUNTIME = "opencode"
PROJECT = "session-bridge"
HERE = Path(__file__).resolve().parent / "transcripts" / "session-bridge"
SESSION = "ses_277daa810ffePOBsdfS6gm8uA2"
SOURCES: tuple[tuple[str, Path], ...] = (
    (
        PROJECT,
        HERE
        / "ses_277daa81"
        / "session"
        / "3ad407f6a7c5123f405fb21a3759114ca4c01364"
        / f"{SESSION}.json",
    ),
)

IMPLEMENTED = "msg_d882dd010001xyrkepd3Rx50DV"  # the table of the commands and how each runs
COMPACTED = "msg_d883a0c34001CAhfI12hNovc9Z"  # the compaction summary: goal, discoveries, done
IN_TERMINAL = "msg_d89150124001DTh5G5Sm1VijDZ"  # show status runs entire status; all in terminal
TERMINAL_DONE = "msg_d891921f9001u10DFjzFl8iFmV"  # what changed when everything moved there

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "fact",
        "Which Entire CLI commands did we wrap as VS Code commands?",
        PROJECT,
        ("msg_d882557f6001Ren11Exkxeq6Yw", IMPLEMENTED, COMPACTED),
    ),
    RealQ(
        "decision",
        "Why did some Entire commands open an integrated terminal from the start?",
        PROJECT,
        (IMPLEMENTED, COMPACTED),
    ),
    RealQ(
        "preference",
        "How do I want the extension to run the entire commands?",
        PROJECT,
        (IN_TERMINAL, TERMINAL_DONE),
    ),
    RealQ(
        "preference",
        "What should Show Status do?",
        PROJECT,
        (IN_TERMINAL, TERMINAL_DONE),
    ),
    RealQ(
        "decision",
        "What happened to the agent picker of the enable command once commands ran in the "
        "terminal?",
        PROJECT,
        ("msg_d8916899b0015u8RWcpbGBMF0t", TERMINAL_DONE),
    ),
    RealQ(
        "paraphrase",
        "Which risky operations still ask me before anything happens?",
        PROJECT,
        (TERMINAL_DONE,),
    ),
    RealQ(
        "how",
        "How does the rewind command let me choose where to go back to?",
        PROJECT,
        (IMPLEMENTED, TERMINAL_DONE),
    ),
    RealQ(
        "artifact",
        "Where do the Entire command implementations live now?",
        PROJECT,
        ("msg_d88347ff1001Z7BhAUQtpaZF2N", "tooluse_yPCMab8w49NHb0Gt4vG0To", COMPACTED),
    ),
    RealQ(
        "fix",
        "Why did the first compile fail after the new command handlers went into extension.ts?",
        PROJECT,
        (
            "tooluse_3elJDQTJfFWtA4mkLwLV1i",
            "msg_d882aa781001V9m5oLPgjCQxzL",
            "msg_d882b3913001cOQDJvzzUJp8bl",
            "msg_d882d39c2001hJQqzYN0CzWHLt",
        ),
    ),
    RealQ(
        "fix",
        "Why could the commands module not be rewritten on the first try?",
        PROJECT,
        (
            "tooluse_QDlsDuYMlXkQA0tM1fuzuT",
            "tooluse_PilcRY5hG4NdjMjsCADQKX",
            "tooluse_rNi6J7xTI5AhPsw3t74Xfa",
        ),
    ),
    RealQ(
        "fix",
        "What broke the compile after the commands moved to the terminal, and how was it fixed?",
        PROJECT,
        ("tooluse_9Nyoa2NVfx6wwWNWNMRv8K", "msg_d89184615001Aas8I9Ais34kOh"),
    ),
    RealQ(
        "fact",
        "What does the Checkpoints view offer when Entire is disabled in the repository?",
        PROJECT,
        (IMPLEMENTED, COMPACTED),
    ),
)

UNANSWERABLE: tuple[tuple[str, str], ...] = ()  # the project's are in the Gemini CLI module
