"""Questions about two CipherBox sessions (dev split), written from the transcripts alone.

The sessions (``SOURCES.md``): Claude Code in CipherBox (privacy-first cloud storage on IPFS:
a NestJS API, a web app, a Rust desktop client), captured by Entire. 0fe553fc, 2026-02-11: was
AES-CTR streaming encryption ever built (no: planning only), how big a phase it would be, and
the user's call to insert it as phase 12.1, after MFA. c621c551, 2026-02-22, branch
``fix/staging-shares-migration``: a database schema evolution protocol written from a plan,
``device_approvals`` added to the FullSchema baseline and taken back out at the user's
objection, a markdown lint fix, pushed to the open PR, then ``synchronize: false`` in dev and CI
discussed and left as a todo. Written on 2026-12-07 by reading the transcripts, before any
change they could inform; the format and the rules are those of ``questions.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "dev"
RUNTIME = "claude-code"
PROJECT = "cipher-box"
HERE = Path(__file__).resolve().parent / "transcripts" / "cipher-box"
SOURCES: tuple[tuple[str, Path], ...] = (
    (PROJECT, HERE / "0fe553fc.jsonl"),
    (PROJECT, HERE / "c621c551.jsonl"),
)

NOTHING_BUILT = "f2a0c66e-2f50-4fd9-a5ff-78022504e8dc"  # AES-CTR: documents only, GCM today
SIZED = "058be915-af96-49fb-ae71-527cf2ffd505"  # what CTR streaming touches, a phase of 3-5 plans
AFTER_MFA = "015267f0-ac36-43d0-8c79-565fc4b4a54b"  # the user: early, but MFA stays first
INSERTED = "6ab27366-954f-4d02-9b43-612e83d1ab3c"  # phase 12.1 inserted, next steps
PROTOCOL_PLAN = "6d3c4456-c71c-4306-b619-4e9d0a49c03c"
PROTOCOL_DONE = "ec1c1113-9522-474a-9203-37e02c0f6707"
WHY_REPEAT = "5bcfc676-e507-4356-ba9f-b1695b02949e"  # the user's objection
REVERTED = "0b2aa61a-e6e7-4767-a48a-1a56ed00c525"
SYNC_OFF = "8fb57342-11ea-4e60-83f2-4d5c8a97bb5f"  # synchronize: false, trade-offs
TODO_SAVED = "6fe41f5e-8d19-4e39-b975-160ec8cee935"

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "fact",
        "Was any AES-CTR streaming encryption implemented for media files?",
        PROJECT,
        ("fcd45a59-7879-42aa-b63f-2526f55481d3", NOTHING_BUILT),
    ),
    RealQ(
        "fact",
        "How are files encrypted today, and how large can they be?",
        PROJECT,
        (NOTHING_BUILT,),
    ),
    RealQ(
        "how",
        "Which parts of the system would AES-CTR streaming have to touch?",
        PROJECT,
        (SIZED,),
    ),
    RealQ(
        "paraphrase",
        "Would playing encrypted videos on the fly be a large job, one that deserves its own "
        "stage?",
        PROJECT,
        (SIZED,),
    ),
    RealQ(
        "decision",
        "Where did AES-CTR streaming go in the M2 roadmap?",
        PROJECT,
        (AFTER_MFA, "016d2bd0-6841-44d4-ad63-0c28d30e841a", INSERTED),
    ),
    RealQ(
        "preference",
        "What did I say stays the top priority ahead of streaming encryption, and why?",
        PROJECT,
        (AFTER_MFA,),
    ),
    RealQ(
        "artifact",
        "Which planning files changed when phase 12.1 was inserted?",
        PROJECT,
        (
            "toolu_01Xt8kCRkTimm519wBSVgTYq",
            "toolu_018n6fdCx3CqmngBT9WnWVoq",
            "toolu_015je5QXMGNfgkGMycXegnoY",
            "toolu_018WfEPd5GtMPuTRgSk3iD3t",
            INSERTED,
        ),
    ),
    RealQ(
        "temporal",
        "What did we do on 2026-02-11?",
        PROJECT,
        day="2026-02-11",
    ),
    RealQ(
        "fix",
        "What broke the staging deploy in phase 14?",
        PROJECT,
        (PROTOCOL_PLAN,),
    ),
    RealQ(
        "how",
        "What does the database evolution protocol cover?",
        PROJECT,
        (PROTOCOL_PLAN, PROTOCOL_DONE),
    ),
    RealQ(
        "decision",
        "Did fixing the device_approvals gap need a staging reset?",
        PROJECT,
        (
            "86ede8f8-2d8e-4ab6-9104-1bf256d0e7b2",
            "e2c049f3-9115-4ae4-bec4-ad9626303626",
            "d4462a54-e908-4d65-bcdb-ef9bf0093762",
        ),
    ),
    RealQ(
        "decision",
        "Why did device_approvals come back out of the FullSchema migration?",
        PROJECT,
        (
            WHY_REPEAT,
            REVERTED,
            "13c1eb79-b41e-48ac-a872-ef606e25248f",
            "c2ab9b72-70f6-4247-9326-7a7acb8306f7",
        ),
    ),
    RealQ(
        "paraphrase",
        "Why shouldn't a newly added relation also be declared in the very first bulk migration?",
        PROJECT,
        (REVERTED,),
    ),
    RealQ(
        "fix",
        "Why was the first commit of the protocol doc rejected?",
        PROJECT,
        (
            "toolu_01M2RaDibUjt4w1JdrpHckeN",
            "24ef946f-af2a-4c08-99fc-2485336e620f",
            "toolu_01UmPU8F66Kckv1ePYu9SSe2",
        ),
    ),
    RealQ(
        "artifact",
        "Which pull request carries the database evolution protocol?",
        PROJECT,
        (
            "toolu_013G8XobedF2RguFnECNkfMQ",
            "85492d02-24b9-460b-9867-1172aa7bf31e",
            "18360ba5-e4ed-4392-b5f3-7dc8f82809ee",
        ),
    ),
    RealQ(
        "decision",
        "What did we decide about turning synchronize off in dev and CI?",
        PROJECT,
        (
            "ef90d1a7-4d9f-4938-af86-9ae853349e55",
            SYNC_OFF,
            "9cd26b3e-7e79-4c4a-bfb7-63602d83bc6f",
            TODO_SAVED,
        ),
    ),
    RealQ(
        "artifact",
        "Where is the todo about disabling synchronize saved?",
        PROJECT,
        ("toolu_01WBFVmS3e5oqdv1QxY7kBBf", TODO_SAVED),
    ),
    RealQ(
        "resume",
        "Where did we leave off in the last session?",
        PROJECT,
        since="2026-02-22T02:19:49Z",
    ),
)

# Plausible questions about CipherBox that neither session answers (checked by grep).
UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (PROJECT, "How is the desktop app signed and notarized for macOS?"),
    (PROJECT, "Is the API deployed on Kubernetes, and how is it scaled?"),
)
