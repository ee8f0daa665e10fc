"""Dev questions about one more sungather-operator session (``SOURCES.md``), with what answers them.

51bf92be (2026-01-04, resumed on 2026-01-09): the SunGather service would not start in the
deployed charm; the charm pointed at the rock's paths, the cluster made to run the rock from
Docker Hub (a login, stale cached images, the workload container rather than the charm's), the
rock's virtualenv replaced by the system Python with its dependencies in ``/opt/sungather-lib``,
a working directory for the service and the actions, then the unit and integration tests fixed.
The project's other sessions have their questions in ``questions.py``.

Written on 2026-12-07 from the transcript alone, by reading it, before any change of the product
it could inform; the conventions are those of ``questions.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "dev"
PROJECT = "sungather"
SOURCES: tuple[tuple[str, Path], ...] = (
    (
        PROJECT,
        Path(__file__).resolve().parent / "transcripts" / "heldout" / "sungather-51bf92be.jsonl",
    ),
)

NO_VENV = (  # the venv's python was a symlink to a build-time path: system Python instead
    "f7270605-e952-4487-a673-ac4466dc5777",
    "6b61110f-9681-44da-89b9-5ee4e5d199cb",
    "cc58688a-0fd2-4ffb-b913-6160cda2e1ec",
)

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "fix",
        "Why couldn't Pebble start the sungather service at the beginning of the session?",
        PROJECT,
        (
            "a829ccec-686a-4328-871b-882d4fb8a432",
            "700b2ccd-b7eb-4eba-a3d4-e1297420e32d",
            "20cb15da-c3c5-45db-b609-70f318e155ff",
            "719e9f5b-44cf-4048-b166-1a734ea771f3",
        ),
    ),
    RealQ(
        "constraint",
        "Which image must the charm run, and why not the upstream SunGather image?",
        PROJECT,
        (
            "toolu_0162TDW8WtdVdVrwsuNRR9d7",
            "d70930e2-3ba5-43bb-8c34-81a048945d56",
            "toolu_01WBTsv9bMFxGqn3UYFQLMxA",
        ),
    ),
    RealQ(
        "fix",
        "Why did /opt look empty when you checked the deployed unit?",
        PROJECT,
        (
            "63e81afc-b92e-485a-bbf7-bb6116320bfc",
            "fa8ff420-e075-46b1-b57e-191dbbdd19ac",
            "6b777321-33b7-442a-9ea0-b269c461e553",
        ),
    ),
    RealQ(
        "decision",
        "Why did we stop using a virtualenv in the rock?",
        PROJECT,
        (*NO_VENV, "5c3c82ce-73e4-4156-a3a7-45de451bd178", "toolu_01G2EYk98RF5yw66ZYkhZH4W"),
    ),
    RealQ(
        "paraphrase",
        "The interpreter link inside the image pointed at a location from packing time; what did"
        " we switch to?",
        PROJECT,
        NO_VENV,
    ),
    RealQ(
        "fix",
        "Why couldn't you push the rock to Docker Hub at first, and what fixed it?",
        PROJECT,
        (
            "toolu_013nUBXy9HfUk2u48NywQRKr",
            "7a3a5bbb-8806-4f50-ba00-6ccefbff8931",
            "4157f736-9563-4b0d-93cd-b716024d250d",
            "1290b790-e903-40f9-a3eb-4a4c4701b126",
            "d5b6756b-d492-4aaa-8519-7b29cde4f2bd",
            "toolu_01AGr1RjZnkd3zTbJn8jwDvd",
        ),
    ),
    RealQ(
        "fact",
        "Where does the rock install SunGather's Python dependencies now?",
        PROJECT,
        (
            "toolu_019RJCzUETmKnrbsfg33tFRG",
            "cc58688a-0fd2-4ffb-b913-6160cda2e1ec",
            "d9468558-25a9-4085-816b-d431c74bc886",
            "8dc32cf2-b8f4-4640-966c-d3529fe737a7",
        ),
    ),
    RealQ(
        "fix",
        "Why did the test-connection action not find registers-sungrow.yaml?",
        PROJECT,
        (
            "8439407a-a27c-4051-81b6-da963595e580",
            "288b6908-45a2-43f9-84e4-5c9d01aa8602",
            "toolu_01HcvmRhCg4CRncriGXuKcob",
            "d9468558-25a9-4085-816b-d431c74bc886",
        ),
    ),
    RealQ(
        "fact",
        "What did the 'Address already in use' error from run-once mean?",
        PROJECT,
        ("d8d43871-469a-4c66-911c-e7bae65a0f6f", "739e02d0-7007-4936-a118-306cf2abb16b"),
    ),
    RealQ(
        "fix",
        "Why did every integration test error out during setup?",
        PROJECT,
        (
            "c04f405b-d465-404b-8ecc-78b8e626f37e",
            "7df4b4b2-695b-42c4-80b0-19d473ce5e4e",
            "toolu_01KADT27rKMmUGGZKVa8BCSC",
        ),
    ),
    RealQ(
        "fix",
        "What did the unit tests need after the path changes?",
        PROJECT,
        (
            "85216124-0c6f-4c1b-86ab-c6e007d51a09",
            "d7c266de-f4bc-4261-aab4-9e51ab4f0fdd",
            "8dc32cf2-b8f4-4640-966c-d3529fe737a7",
        ),
    ),
    RealQ(
        "artifact",
        "Which commit gave the actions their working directory?",
        PROJECT,
        ("toolu_01HcvmRhCg4CRncriGXuKcob", "d9468558-25a9-4085-816b-d431c74bc886"),
    ),
    RealQ("temporal", "What did we do on 2026-01-04?", PROJECT, day="2026-01-04"),
)

# Questions the project's sessions cannot answer (checked by grep over all of them).
UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (PROJECT, "How do we roll back to an earlier charm revision when an upgrade fails?"),
    (PROJECT, "Which Prometheus metrics does the charm expose?"),
)
