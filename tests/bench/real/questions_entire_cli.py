"""Blind test questions for entire-cli (Entire's CLI: agent sessions kept as git checkpoints).

Two sessions of 2026-01-23 (``SOURCES.md``): 79e9becd (00:41-04:37 UTC, alex) works through
soph's stacked PRs #89-#91 (full transcripts, chunking and its archive fix, Copilot's review
comments, the agent type wired through, ``Type()`` on the Agent interface); 6113e919
(14:21-17:51 UTC, soph) compares git-ai's git notes with Entire's trailers, then designs and
builds line-level agent/human attribution for manual-commit checkpoints. Written from the
transcripts alone, before any change they could inform, on 2026-12-07; refs point at the
people's and the assistant's own lines (not at compaction summaries or runtime notices), a
``toolu_`` id only where the answer is in a tool call or its result.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "test"
PROJECT = "entire-cli"
HERE = Path(__file__).resolve().parent
SOURCES: tuple[tuple[str, Path], ...] = (
    (PROJECT, HERE / "transcripts" / "heldout" / "entire-cli-6113e919.jsonl"),
    (PROJECT, HERE / "transcripts" / "heldout" / "entire-cli-79e9becd.jsonl"),
)

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "fact",
        "Does a GitHub squash merge keep our Entire-Checkpoint trailer, unlike git-ai's notes?",
        PROJECT,
        (
            "d946663f-e8fa-4217-84f0-c40a1686185f",
            "f03d8f68-4083-486c-a618-5b18e1ab37d1",
            "ce7f0b30-176f-4fd5-ac00-feaec6698249",
            "7f23e60b-f766-447c-ab3f-673e2f658406",
        ),
    ),
    RealQ(
        "decision",
        "Where did we decide to store the agent/human line attribution for manual commits?",
        PROJECT,
        (
            "8212e754-68fe-4378-bc4a-f4b44d39ed8b",
            "6ebd54d5-cf29-4953-a996-cdad42437e2b",
            "1bf06653-a143-4e9d-85ad-67ee7bc6ad15",
            "667f5b8f-b388-4c25-884f-855d8d3f0ef3",
        ),
    ),
    RealQ(
        "preference",
        "Should the attribution metadata break the numbers down per file?",
        PROJECT,
        ("d62bcb5e-4d40-4c22-b504-84f5b19c4161", "b2eed2a8-0d34-45f2-8d00-36936fb37cc8"),
    ),
    RealQ(
        "decision",
        "Why doesn't the attribution metadata include the commit SHA?",
        PROJECT,
        (
            "8b63d8a6-e709-4229-8fdd-8da26a85aad1",
            "d55c28f6-820e-42ee-af47-c9af7a64c9b2",
            "da8dd313-3e39-4d27-9d7a-30e4368e234f",
            "fdb01361-a5e5-443e-be6a-3805af6b8258",
        ),
    ),
    RealQ(
        "decision",
        "What happens to the attribution on a later amend, and why is it initial_attribution?",
        PROJECT,
        ("e64cb5d8-1189-4ac7-baa7-218055093c65", "43fd02af-8ad1-47fd-a8dd-2c80d003446e"),
    ),
    RealQ(
        "decision",
        "What did we decide to record as attribution for auto-commit checkpoints?",
        PROJECT,
        (
            "c62548aa-6ee2-4e02-8303-868e6ec05b88",
            "6926938a-0290-4e68-b447-bae966c3fb8e",
            "9308d8a7-00db-4a34-9ca7-e17f81bc122f",
        ),
    ),
    RealQ(
        "preference",
        "What did I think of the checkpoint metadata tests you first added for attribution?",
        PROJECT,
        (
            "fe2cb6ab-c2aa-4d9e-af2f-900c82d75ea7",
            "1ad917e3-7ed8-4ee7-9e9c-4355c4d273ce",
            "ff48c264-7833-4e19-8b19-51c32722e372",
            "52256def-e1cc-4df6-be0f-8f40a7e993ea",
        ),
    ),
    RealQ(
        "fix",
        "Why did the attribution report 4617 lines when GitHub showed +582 for the commit?",
        PROJECT,
        (
            "bf618a67-f132-4976-b303-7462c8026efe",
            "a7859c68-885d-4412-828d-ba559019695f",
            "00cbc474-8d7c-4ad5-af79-d2f963e80c2e",
            "4248b1e3-1cba-41f1-8131-f21804b91644",
        ),
    ),
    RealQ(
        "paraphrase",
        "Our authorship tally dwarfed the pull request page's figure; what was miscounted?",
        PROJECT,
        (
            "bf618a67-f132-4976-b303-7462c8026efe",
            "a7859c68-885d-4412-828d-ba559019695f",
            "00cbc474-8d7c-4ad5-af79-d2f963e80c2e",
            "4248b1e3-1cba-41f1-8131-f21804b91644",
        ),
    ),
    RealQ(
        "fix",
        "Why did the metadata show 77 attributed lines while git reported 627 insertions?",
        PROJECT,
        (
            "e6329a69-5c56-4bbe-9865-d27546835b06",
            "edfcf59f-a7f2-4b58-80d6-e2e938f02ba5",
            "fec2454c-bc3b-4c50-9d2d-4a2cacea83ca",
            "95bcfcaa-3e73-4b07-9f49-e6082f4a060f",
        ),
    ),
    RealQ(
        "decision",
        "Two sessions condense into one checkpoint: whose attribution do we keep, and why?",
        PROJECT,
        (
            "f8cebef9-82e9-471c-95de-35d52ec3108e",
            "551cc696-852c-478a-a58d-10f52aaf6443",
            "32bd7264-2994-4da9-b9dc-6e9d8a7931ff",
            "2cb1af32-68ca-4c8a-bda2-1c73f374060a",
        ),
    ),
    RealQ(
        "how",
        "How do we tell user edits made between two agent checkpoints apart from the agent's work?",
        PROJECT,
        (
            "003a26a1-213e-4dae-9b09-db71ec641456",
            "5f0133e5-5263-41cb-a12a-b7fbb7c921de",
            "109f53f9-c105-495b-ab84-d3469e8f98c5",
            "4a77fd60-aed8-4261-a5c7-379fa9012edd",
            "c5161400-c448-4818-afb4-cb598b3753d2",
            "d8cd450b-178d-4b57-8198-881c958beceb",
            "676330ce-1f71-4573-b09a-c298b63b4a10",
        ),
    ),
    RealQ(
        "how",
        "What logging did we add around the attribution calculation?",
        PROJECT,
        (
            "d034be4e-355a-453e-8281-07b5719a53f7",
            "63954bc6-0a05-4951-b655-7430bbf853dd",
            "b9c177e5-5e32-4047-b421-da29386bb3b1",
        ),
    ),
    RealQ(
        "fix",
        "What was wrong with how actualHumanRemoved was calculated, and how was it fixed?",
        PROJECT,
        (
            "ed4678b4-0cc7-445c-a865-1fd574d344b1",
            "04d65193-98ee-4ab2-8862-3b90d5b9c8cc",
            "220f47f2-f018-462c-afc9-672177507d4c",
        ),
    ),
    RealQ(
        "artifact",
        "Which new file holds the manual-commit line attribution calculation?",
        PROJECT,
        ("toolu_01TMwNFzGQp1upkjFEerb4D1", "abd9bbab-afe9-4b75-8645-700103b0b909"),
    ),
    RealQ(
        "fact",
        "In which order did soph's stacked PRs need to be merged?",
        PROJECT,
        ("a4340b43-bf69-4f11-a13e-1ee12dfa28b0", "c67b4e85-94b6-4954-b57e-7997174e2058"),
    ),
    RealQ(
        "constraint",
        "Should you merge the stacked PRs yourself once they're ready?",
        PROJECT,
        (
            "5c539db0-8857-46ec-a8fb-6283b1a64250",
            "cf3224eb-9f26-4113-9988-575cb9025367",
            "de0e1cf3-f9db-4d65-991b-00c64a463db9",
        ),
    ),
    RealQ(
        "fix",
        "Why were transcript chunk files lost when a second session was archived?",
        PROJECT,
        (
            "06337f0a-90a2-4cc4-8de0-64ebc5d3e21c",
            "cbb44e6d-5e85-4596-9e32-a87a3fc6d5e0",
            "eba9a652-be04-4510-98f6-392e0dc06293",
        ),
    ),
    RealQ(
        "preference",
        "How did I want the archiveExistingSession chunk fix written?",
        PROJECT,
        (
            "d85fea73-5a73-4e9b-9c66-6777761342cb",
            "toolu_0173UpJoLSzhXz1Qkikt9UQV",
            "toolu_01VfCgwiftibeD5fAMRQjvKy",
            "toolu_01QyESnxA2q7nmBZXC1AQ2B5",
        ),
    ),
    RealQ(
        "constraint",
        "What should happen when transcript chunking or reading a chunk fails?",
        PROJECT,
        ("b0163969-2dd2-4ee7-9880-28f8257a7232", "75dc1891-b63e-41be-bd51-6fbb3aa89139"),
    ),
    RealQ(
        "paraphrase",
        "When persisting the conversation record breaks, should the developer be halted?",
        PROJECT,
        ("b0163969-2dd2-4ee7-9880-28f8257a7232", "75dc1891-b63e-41be-bd51-6fbb3aa89139"),
    ),
    RealQ(
        "fix",
        "Why could chunked Gemini transcripts be reassembled into invalid JSON when rewinding?",
        PROJECT,
        (
            "a9d888a0-6fbd-48a2-a260-53174e0fd001",
            "a13e94a1-9dbc-4985-9040-4dc255aea57d",
            "e73892c7-12f9-4e35-8456-f99aaf2476fc",
            "da7171b6-0f10-4aac-9a87-1d7e98c25292",
        ),
    ),
    RealQ(
        "decision",
        "What did we decide to do about the agent type mismatch in #90 versus #91?",
        PROJECT,
        (
            "d92c125e-6ec6-4d53-9f14-f6c98ce22e50",
            "51462b8b-0c70-403c-a3a4-455c675f9664",
            "538a9258-6b89-4783-84e4-ef6f5495d65b",
            "f559e8cd-00e8-421f-b47f-4e24f20ed7fa",
            "5849e649-dd5f-47a6-a9c4-5296d15a2ba4",
            "1248b449-7a59-4f2c-8361-df8d176f6114",
            "c5ac8fc2-49d4-407d-aa94-0f8bce1ad38e",
            "8faf43a4-3f4b-47d1-812a-17c86097da2a",
        ),
    ),
    RealQ(
        "decision",
        "Where did the agent name and type constants end up living, and why?",
        PROJECT,
        (
            "101750e6-a45d-4b1d-a1fc-29d3761b27de",
            "toolu_01AriinHxWADUftxfUNFJyXR",
            "0f344699-690c-40ca-b129-f4cbae78ab68",
            "4c4a1b4f-dae6-4aac-aeee-1a2b5be0b376",
            "95072dba-f60c-499b-9d4f-6df3d1fb15ad",
            "961d43a1-514b-475b-af86-ef430e863a4f",
            "4cbb5371-2ee1-4354-a51e-bff849b2d2e0",
        ),
    ),
    RealQ(
        "fact",
        "Why does an agent have both Name() and Type()?",
        PROJECT,
        (
            "6374fd61-35fd-4c08-af9f-3e92eb7b2356",
            "eadec7a9-2857-4867-9d1e-4dd42849e21b",
            "0bfc9078-0c88-42dd-ab66-2a6f86578e9a",
            "a0376320-0c6d-43c0-bfae-1d3ff110f16a",
            "1fbb5ed6-9abd-4e8e-815f-087e5d3d0373",
        ),
    ),
    RealQ(
        "artifact",
        "Which commit added Type() to the Agent interface, and to which branch was it pushed?",
        PROJECT,
        ("toolu_0162F64jPiZXEJZ4Q4QH6A3i", "toolu_01U8dmsCNYNrJcciKnMie8r4"),
    ),
    RealQ("temporal", "What did we do on 2026-01-23?", PROJECT, day="2026-01-23"),
    RealQ(
        "resume",
        "Where did we leave off?",
        PROJECT,
        since="2026-01-23T17:25:00Z",
        now="2026-01-26T09:00:00Z",
    ),
)

# Plausible for the project, answered nowhere in its sessions (checked by grep).
UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (PROJECT, "What backoff policy do we use when pushing checkpoints to the remote fails?"),
    (PROJECT, "How do we export checkpoint traces to OpenTelemetry?"),
)
