"""Questions about three concierge-py sessions (test split), written from the transcripts alone.

The sessions (``SOURCES.md``): daadb6cf, 2025-12-31, branch ``add-unit-tests-fix-ty``: ``ty``
run locally and its errors fixed, unit tests written for an empty ``tests/unit``, the Claude
Code post-edit hook that runs ruff repaired. 5956086a, 2025-12-31, branch ``fix-spread-tests``:
the spread integration tests in GitHub Actions (spread from ``go install`` instead of the snap,
zizmor's cache-poisoning findings, a wrapper at ``/root/proj/concierge``, a heredoc that broke
``spread.yaml``, a ``--trace`` flag). 1bad730b, 2025-12-31 to 2026-01-02, the same branch: the
failing spread tests fixed one CI run after another, the user pushing each commit, then a hung
``juju bootstrap`` given a timeout. Written on 2026-12-07 by reading the transcripts, before any
change they could inform; the format and the rules are those of ``questions.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "test"
PROJECT = "concierge-py"
HERE = Path(__file__).resolve().parent / "transcripts" / "heldout"
SOURCES: tuple[tuple[str, Path], ...] = (
    (PROJECT, HERE / "concierge-py-daadb6cf.jsonl"),
    (PROJECT, HERE / "concierge-py-5956086a.jsonl"),
    (PROJECT, HERE / "concierge-py-1bad730b.jsonl"),
)

# Moments two questions ask about, in the session's words and in others.
PUSHING = (  # the user pushes; the agent has no key and must ask
    "56ab9c02-8599-4b3f-9c39-9c8244096c2c",
    "toolu_01X99nnJuRe6eHxY1jXsRABh",
    "toolu_01CWRECn9D982aiSWqoxWuyL",
    "toolu_01Fr7CF6a9FfnkzEhtmU7CUG",
)
DOCKER = (  # Docker's containerd removed from the runner before Canonical K8s bootstraps
    "20388dd0-1563-48f5-b67e-e6b14790a03e",
    "3d8a80d6-7b1d-4a84-97aa-82346459b4a5",
    "toolu_01BYY4UVJJnED29hUGMtngVm",
)
EMPTY_MATRIX = (  # the heredoc in spread.yaml broke the YAML, so spread listed no suites
    "17f03cbb-cb80-4206-b8c5-726e0acb52d3",
    "0686a66f-1a2d-444a-9d1b-dd5de9dbaf9b",
    "dd4b1296-27a6-4729-9c7a-146e3d78a4bc",
)

QUESTIONS: tuple[RealQ, ...] = (
    # daadb6cf: ty, unit tests, the post-edit hook
    RealQ(
        "fact",
        "Did ty have to be added to the dev dependencies, or was it there already?",
        PROJECT,
        ("toolu_01EyyFmbpvJskhCzddsVXbFu", "251a8a88-20a0-4a79-8a01-1e28c9c840cf"),
    ),
    RealQ(
        "artifact",
        "What's the right command to run the ty type checker? Giving it a path directly failed.",
        PROJECT,
        (
            "toolu_01KcTrKZJix7V1HxLgxVYWPF",
            "toolu_01GUso1GnCQofJAdswJvxC8q",
            "toolu_015HjfBcvhs1GB5ASBv7QY95",
            "toolu_0194TE9zKYnZ9ryYXJ5p7zeL",
            "toolu_01A7SD6PCoJc4rHStRfCj3qv",
            "toolu_013ddUAnYuYR1TRi5su3UCRC",
            "toolu_01LdNAHdWw8s5TX9AjvpShWQ",
            "251a8a88-20a0-4a79-8a01-1e28c9c840cf",
        ),
    ),
    RealQ(
        "fix",
        "Why did ty reject the default Juju and K8s configs in presets.py, and how did we make it "
        "pass?",
        PROJECT,
        (
            "45893712-fda6-47b8-a10a-5d48fae254a4",
            "2237021c-9840-4405-b328-01ed7da36c81",
            "7d68fe17-6f6f-4be5-b024-8fa0d76f219a",
            "251a8a88-20a0-4a79-8a01-1e28c9c840cf",
            "2a828b7d-2500-4e75-a3e0-f3a92f85f49b",
        ),
    ),
    RealQ(
        "fix",
        "How did we fix ty's return-type errors in snap.py?",
        PROJECT,
        (
            "7a9043c1-37b2-4efb-aa50-e055bf67e77a",
            "251a8a88-20a0-4a79-8a01-1e28c9c840cf",
            "2a828b7d-2500-4e75-a3e0-f3a92f85f49b",
        ),
    ),
    RealQ(
        "preference",
        "What test coverage did I say I'd like for the unit tests?",
        PROJECT,
        ("2e6f53b1-6c35-4605-b2f8-4e5369502f6d",),
    ),
    RealQ(
        "fact",
        "What coverage did the new unit tests actually reach, and how many tests were there?",
        PROJECT,
        ("fdabf5a7-49bb-4844-9901-613659bb1bc6", "54cc3b75-b978-459f-bd8f-b72785e69933"),
    ),
    RealQ(
        "fix",
        "What was broken in the Claude Code post-edit hook?",
        PROJECT,
        (
            "734b9e21-eb26-4efb-b7af-5d77fafb3736",
            "a5c8043b-395c-4459-bdca-f5414c8c9293",
            "416479f0-763c-447c-8404-00480c77277d",
        ),
    ),
    RealQ(
        "decision",
        "Besides formatting, what else did I want the edit hook to run?",
        PROJECT,
        (
            "6f71670a-89b0-4352-b2a0-b617a0361d01",
            "36d3cf3d-a6eb-4248-9a25-2bf797874898",
            "a5c8043b-395c-4459-bdca-f5414c8c9293",
            "416479f0-763c-447c-8404-00480c77277d",
        ),
    ),
    RealQ(
        "paraphrase",
        "After we changed the automatic formatter step, why did it keep reporting the previous "
        "complaint until I relaunched you?",
        PROJECT,
        (
            "67413c2f-6cfa-402e-bf7a-a70864337f56",
            "b50afca2-bc9b-4a0a-975e-a6a1d33fba64",
            "c047887f-362b-409e-992f-c336a20b204f",
            "354c20f6-48b3-4d0d-ae46-b66299cb740b",
        ),
    ),
    # 5956086a: spread in GitHub Actions
    RealQ(
        "fix",
        "Why did spread fail to allocate the github-ci machine with '/usr/bin/sudo: Permission "
        "denied', and what finally fixed it?",
        PROJECT,
        (
            "e12384e0-0d14-403d-9195-ed58542d5fd2",
            "9f06ab12-01b8-436b-b4e3-20c843fc6ecc",
            "aa04a86c-f35a-41ab-814f-b64774fc4a13",
            "610a1e66-0b70-4435-81a6-38d4abdf51c1",
        ),
    ),
    RealQ(
        "decision",
        "How is spread installed in the CI workflow now?",
        PROJECT,
        (
            "aa04a86c-f35a-41ab-814f-b64774fc4a13",
            "610a1e66-0b70-4435-81a6-38d4abdf51c1",
            "toolu_01HU2JGN8Thq3dxFE5M6qh8L",
            "toolu_017wqVU6MLoh4Fmmpi75QrB9",
        ),
    ),
    RealQ(
        "fix",
        "What did zizmor flag after we added the Go setup step, and how did we fix it?",
        PROJECT,
        (
            "e8a5f475-066c-4b86-b07f-13d76856a9ff",
            "44f2ffa7-b529-44d0-a54a-c43d0d6f731a",
            "toolu_01WWXVyvyjBcZHMtxR4SwozG",
        ),
    ),
    RealQ(
        "how",
        "How do I want zizmor run in this repository?",
        PROJECT,
        ("cdc6b2aa-cfbc-44be-aa72-f2cad54a4a97", "toolu_01Ry5avtYc2fLSKcbdj37D6H"),
    ),
    RealQ(
        "decision",
        "Why is there a concierge script at /root/proj in the spread setup, and what does it run?",
        PROJECT,
        (
            "a85ec2be-1fb4-42d3-aa5f-cdb2ea5f39fd",
            "47af4725-7667-4970-a7b4-ea4e2d3861a4",
            "910aca90-6ac5-42fa-8229-9e974b4f393f",
        ),
    ),
    RealQ(
        "fix",
        "Why did nothing run after the spread matrix was defined, with 'Matrix vector suite does "
        "not contain any values'?",
        PROJECT,
        EMPTY_MATRIX,
    ),
    RealQ(
        "paraphrase",
        "What made the CI job list come out blank once the launcher was in place, and how did we "
        "rewrite it?",
        PROJECT,
        EMPTY_MATRIX,
    ),
    RealQ(
        "decision",
        "Why did we add a --trace flag to the Python CLI, and what does it turn on?",
        PROJECT,
        (
            "2803f053-b434-4f51-ad40-ca3f08c921af",
            "243db745-658a-4af9-8649-e14b6ce041f6",
            "8a4d57a3-f72f-409e-9619-471c628abcdf",
            "0e027405-a8c8-428b-a685-6117db72db62",
        ),
    ),
    RealQ(
        "artifact",
        "Which commit added the --trace flag?",
        PROJECT,
        ("toolu_017eMG3gt3KSXGs1Hc58L8wr", "0e027405-a8c8-428b-a685-6117db72db62"),
    ),
    # 1bad730b: the spread failures, one CI run after another
    RealQ(
        "constraint",
        "What did I say about changing the spread tests while fixing their failures?",
        PROJECT,
        ("e4be64e9-f5a0-4e51-b6fa-4e3d5a2582cd", "5130b242-1d26-4e41-a10e-a8eedef15b96"),
    ),
    RealQ(
        "constraint",
        "Can you push the commits to GitHub yourself?",
        PROJECT,
        PUSHING,
    ),
    RealQ(
        "paraphrase",
        "Am I the only one who can send our work up to the remote?",
        PROJECT,
        PUSHING,
    ),
    RealQ(
        "constraint",
        "Was it OK to run a Kubernetes bootstrap on my machine to debug the k8s failures?",
        PROJECT,
        ("toolu_01ErG4YcnQBmi6zfXBMXSk7n",),
    ),
    RealQ(
        "fix",
        "Why did the Canonical K8s bootstrap fail with 'pre-init checks failed' in CI?",
        PROJECT,
        (*DOCKER, "fbbc26a1-b223-4c9e-ac65-3c5b6757a214"),
    ),
    RealQ(
        "paraphrase",
        "What had to be uninstalled from the hosted runner before Canonical's Kubernetes would "
        "come up?",
        PROJECT,
        DOCKER,
    ),
    RealQ(
        "how",
        "What did we change in how commands are executed, to behave like Go's exec?",
        PROJECT,
        (
            "5e8c0a6b-af86-4001-8b29-a9253614b173",
            "ab266a57-6fdb-4a7c-9f1e-dc33710384dd",
            "be6befb0-7c61-4861-91d7-78f6b7fb754e",
        ),
    ),
    RealQ(
        "fix",
        "Why did several tests fail with 'Snapd API error: not found'?",
        PROJECT,
        ("6bceae5f-693e-49be-aec5-377d28d7b7d3", "29dccc64-6782-409c-b4bd-3cdcb6f14646"),
    ),
    RealQ(
        "fix",
        "Why did snap install get 'jq/latest/edge,astral-uv' as one argument?",
        PROJECT,
        (
            "770b57d2-e4b1-41c1-9df6-728ecd110c08",
            "43ef28df-dcfb-471f-86c9-68503a9ca7be",
            "f78b5eb3-5edf-41bb-9c67-3354d51d4bbe",
        ),
    ),
    RealQ(
        "fix",
        "What went wrong when a snap from the preset was also in the extra snaps with another "
        "channel?",
        PROJECT,
        (
            "6ab0916f-a0ba-49ea-8843-bd5cc821172d",
            "44152c98-4237-4eb9-8197-484def338260",
            "3f8624e2-7d2f-4f8c-8d60-28ec81c9c52d",
        ),
    ),
    RealQ(
        "decision",
        "How are --extra-snaps on the command line and CONCIERGE_EXTRA_SNAPS combined?",
        PROJECT,
        (
            "f05ee3db-6255-42bf-8fae-b523d2bf5732",
            "5dce739f-06f4-4ce2-9bb2-348f407387c5",
            "49114189-ea17-44a0-bb2d-c4b089118e82",
            "c130c1e4-7d4e-4196-973b-20a09c116cf4",
        ),
    ),
    RealQ(
        "fix",
        "Why couldn't the spread tests find their own concierge.yaml, and which uv option fixed "
        "it?",
        PROJECT,
        ("b7fca489-9019-4a24-97fa-4b24a9471688", "4feafa92-9617-4ced-a926-f23ca72b4684"),
    ),
    RealQ(
        "decision",
        "How does the config loader treat an empty concierge.yaml now, and why?",
        PROJECT,
        (
            "5c2f3864-636c-4d7b-8fd3-99a9220be836",
            "fbe1c574-5b58-4d94-b076-e2916b8cf318",
            "6765c54b-6a2b-4e9a-a318-4034975403ce",
        ),
    ),
    RealQ(
        "how",
        "How did we make the config models accept YAML nulls and booleans the way the Go version "
        "does?",
        PROJECT,
        (
            "fbe1c574-5b58-4d94-b076-e2916b8cf318",
            "40d2e67b-2b2e-4964-a0f5-3ba8fb074753",
            "dac36ebf-1036-48b6-9cfd-008c102ac22b",
        ),
    ),
    RealQ(
        "fact",
        "How many spread tests passed before we started fixing them, and how many at the end?",
        PROJECT,
        (
            "2959fc07-50c5-4b96-9dd1-346d714ea1ea",
            "dac36ebf-1036-48b6-9cfd-008c102ac22b",
            "cff8125d-82ba-4a17-bea7-96dc462e2b34",
        ),
    ),
    RealQ(
        "how",
        "How did you keep an eye on each CI run after I pushed?",
        PROJECT,
        (
            "toolu_014R4hepNirGy3hD1W5xCAhp",
            "toolu_018TXzpy3r2eBEvTYgMcsqq3",
            "toolu_01Grt13YTKDoraADe2TL8NiR",
            "toolu_01Jp1coWpnxWwJE9VKXeTMT7",
            "toolu_0145xPgvijqDJmwpodYpchLo",
            "toolu_01RW94Aw6PH2j2Pdvgdrmnhx",
        ),
    ),
    RealQ(
        "fix",
        "Why did juju bootstrap hang for 23 minutes in the preset-k8s test?",
        PROJECT,
        ("87ef956a-f677-4efd-8802-a0bdcd17c7f7", "f6f867d1-5acd-4446-b00c-f49ff3901e0a"),
    ),
    RealQ(
        "artifact",
        "Where did we add the per-attempt timeout for commands that hang?",
        PROJECT,
        (
            "f6f867d1-5acd-4446-b00c-f49ff3901e0a",
            "toolu_01UEU1YTCoL3UJSeAgnMpGBS",
            "toolu_01LyvCo6CjfkjHbGM4HKhNbQ",
        ),
    ),
    RealQ(
        "temporal",
        "What did we do on 1 January 2026?",
        PROJECT,
        day="2026-01-01",
    ),
    RealQ(
        "resume",
        "Where did we leave off with the spread tests?",
        PROJECT,
        since="2026-01-02T00:35:00Z",
    ),
)

UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (PROJECT, "What did we decide about supporting macOS hosts?"),
    (PROJECT, "How do we write the changelog for a concierge-py release?"),
)
