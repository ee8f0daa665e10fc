"""Questions about one mcp-server-operator session (test split), written from the transcript alone.

The session (``SOURCES.md``): Claude Code, 2026-03-07, mcp-server-operator (a Juju subordinate
charm serving MCP): the user's ``# CLAUDE`` review comments applied and committed, the roadmap
(phase 9's documentation, phase 6's SLOs through sloth, phase 8's demos), then a PostgreSQL demo
charm deployed by hand (bases, co-location, the snap's psql) and committed. Written on
2026-12-07 by reading the transcript, before any change it could inform; the format and the
rules are those of ``questions.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "test"
PROJECT = "mcp-server-operator"
HERE = Path(__file__).resolve().parent / "transcripts" / "heldout"
SOURCES: tuple[tuple[str, Path], ...] = ((PROJECT, HERE / "mcp-server-operator-21893a05.jsonl"),)

REVIEW_COMMENTS = "toolu_01AZRdCQoQiwPbJtv3KFZA1T"  # the grep that lists the user's comments
# Moments two questions ask about, in the session's words and in others.
SAME_MACHINE = (  # postgresql-mcp runs its psql locally, so it goes on PostgreSQL's machine
    "47b5bf3e-e7b6-41a1-af29-ebd2b8149551",
    "aa9ac876-dce0-476c-926e-9b6a4c3d9d01",
    "07d27721-472f-4d5d-b7df-f3a45794ca7d",
    "894d33b0-6d7e-428c-8ee4-9b738317a6b7",
)

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "preference",
        "How do I want the mcp charm library imported in code and tests?",
        PROJECT,
        (
            REVIEW_COMMENTS,
            "5e71640b-9863-423d-b4a9-fc561fab6b3f",
            "2940fb4d-ebd0-4a05-9ae8-efe19980487d",
        ),
    ),
    RealQ(
        "preference",
        "Which spelling do I want in names, US or UK English?",
        PROJECT,
        (
            REVIEW_COMMENTS,
            "5e71640b-9863-423d-b4a9-fc561fab6b3f",
            "2940fb4d-ebd0-4a05-9ae8-efe19980487d",
        ),
    ),
    RealQ(
        "decision",
        "Why is pydantic still in the charm's dependencies, and what did we do about it?",
        PROJECT,
        (
            REVIEW_COMMENTS,
            "8359f718-2fb8-4d13-828c-6bc83d177e2c",
            "2940fb4d-ebd0-4a05-9ae8-efe19980487d",
        ),
    ),
    RealQ(
        "artifact",
        "Which commit holds the fixes for my review comments?",
        PROJECT,
        ("be256045-16e7-4343-99f9-5b2a00abe683", "toolu_01GDK4VwG6xCHqBHFPjkLsAz"),
    ),
    RealQ(
        "decision",
        "How did we structure the documentation written for phase 9?",
        PROJECT,
        (
            "4891a071-5623-4950-94bd-160eb1bb2535",
            "22d9ee2e-841a-4d4d-baef-441a4e7786de",
            "a5da407c-078e-40fe-b53d-bd3c30210fd4",
        ),
    ),
    RealQ(
        "decision",
        "How did we finish the SLO item of phase 6?",
        PROJECT,
        (
            "10e8295b-d7c9-46ba-8ddd-e730daefc93a",
            "981bab7a-66ec-47fc-8b40-e4cb6f015664",
            "14742781-1ac8-4a96-ba58-2a0a1b30fead",
            "73d69573-0967-4760-b79b-c3f98639991b",
        ),
    ),
    RealQ(
        "fact",
        "What objectives do the SLOs we ship set?",
        PROJECT,
        ("73d69573-0967-4760-b79b-c3f98639991b", "toolu_0175nbCixh26eajRySJa3qbh"),
    ),
    RealQ(
        "preference",
        "What did I want the second demo to show?",
        PROJECT,
        ("fdfba66e-f86e-4ff7-9a48-21ca8a354837",),
    ),
    RealQ(
        "decision",
        "Did we vendor or submodule the PostgreSQL operator for the real-world demo?",
        PROJECT,
        ("5bb22aa8-36c6-4dad-96cc-821749d4a078", "ddc27b5d-83e6-4490-b349-0ae9951844f9"),
    ),
    RealQ(
        "fix",
        "Why couldn't mcp-server be related to postgresql-mcp at first, and how did we get around "
        "it?",
        PROJECT,
        (
            "toolu_01MDsGfbDMJ9mfgrXkXtFk3r",
            "0801a960-2037-4e31-abbc-9e4ce281287d",
            "6ed591e3-7dee-462f-bdf5-daf3e8b36505",
            "35099d85-52cc-4493-b682-623fdc3fb893",
            "26edc898-403c-4f4d-bbb0-e895b956b1b2",
            "fdc98df3-5e3d-404f-9fb7-c658a3c70109",
            "9d3aa48a-13c9-4301-a62c-820c1ef4030e",
            "61a73ddd-250d-4f50-b94d-b8011e9ffea0",
        ),
    ),
    RealQ(
        "how",
        "Which psql command works against the charmed PostgreSQL snap?",
        PROJECT,
        (
            "dc07a53e-be66-43b0-bd54-e9bcf1d4413e",
            "f0b5f499-6e13-4e41-9fdd-8eb435fe2103",
            "c8f20518-d5e0-480b-a179-1837e3d447f4",
            "757d99a7-ac67-4bf8-8636-125707506e0c",
            "39b9570c-9dca-4d4f-9064-6939d7acba5d",
            "4347ee88-9503-4076-86c7-0835cef1df5e",
            "61a73ddd-250d-4f50-b94d-b8011e9ffea0",
        ),
    ),
    RealQ(
        "how",
        "After refreshing the principal charm, how did we get mcp-server to pick up the new tool "
        "definitions?",
        PROJECT,
        (
            "011821a4-0e1a-416a-acf2-ef36f13d906b",
            "f4830865-e617-4b44-8082-d895c1ca7bdf",
            "25249a0b-82fa-4ba1-a181-c37856c226b1",
        ),
    ),
    RealQ(
        "paraphrase",
        "Why did the SQL add-on have to live alongside the DB on one host?",
        PROJECT,
        SAME_MACHINE,
    ),
    RealQ(
        "resume",
        "Where did we leave off?",
        PROJECT,
        since="2026-03-07T10:15:30Z",
    ),
)

UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (PROJECT, "How do we rotate the MCP server's bearer token without downtime?"),
    (PROJECT, "Which theme did we pick for the documentation site?"),
)
