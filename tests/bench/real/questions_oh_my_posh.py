"""Blind test questions about three oh-my-posh sessions (``SOURCES.md``), with what answers them.

Jan De Dobbeleer's Claude Code sessions in oh-my-posh, the Go prompt theme engine: 94fab1a1
(2026-07-22, branch ``feat/gradient-colors``: ``linear-gradient(...)`` segment colours analysed,
planned and built by Sonnet 5 subagents, a guide to the supported stops, logging of unusable
gradients, keyword and ``accent`` stops, narrow gradients collapsed to their last stop, the
user's config reworked on the Catppuccin Latte palette, transient prompt and streaming
placeholder fixes, a speed measurement and a ``/code-review ultra --fix`` pass), d1ffb512
(2026-07-22 to 07-23: a reported template injection through folder names in the path segment,
fixed by breaking brace runs, then by trusted and restricted template rendering, then the
naming debate that ended in ``RenderTrusted``/``RenderUntrusted``) and 634355e9 (2026-07-26:
a minimal-comment rule moved from the golang skill into AGENTS.md, comments swept from the Go
code by 18 batch agents, then the shell init scripts and the website's JavaScript reviewed).

Written on 2026-12-07 from the transcripts alone, by reading them, before any change of the
product they could inform; the conventions are those of ``questions.py``. Refs point at the
people's and the assistant's own lines (prompts, replies, a tool call where only it holds the
answer), never at background-task notifications or other runtime text.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "test"
PROJECT = "oh-my-posh"
_HELDOUT = Path(__file__).resolve().parent / "transcripts" / "heldout"
SOURCES: tuple[tuple[str, Path], ...] = (
    (PROJECT, _HELDOUT / "oh-my-posh-94fab1a1.jsonl"),
    (PROJECT, _HELDOUT / "oh-my-posh-d1ffb512.jsonl"),
    (PROJECT, _HELDOUT / "oh-my-posh-634355e9.jsonl"),
)

# Moments two questions ask about, in the session's words and in others.
NARROW_COLLAPSE = (  # a gradient too narrow for its stops renders solid in its last stop
    "7cfd0436-0371-4391-9366-7cf75345257c",
    "850a00fa-020e-401d-81f1-55a6d92f6aca",
    "2f326c0a-6b9d-474e-987b-f4c61fd7e419",
    "b289aeec-b1d9-41d1-bbd6-ce6535f00909",
)
ONE_RENDER = (  # why a single Render for trusted and untrusted input was first argued against
    "d5fa810d-0c92-4109-9375-2b80d3ed3c4d",
    "8cc8f888-cfe7-4a1e-ad19-9e841c809e49",
)
COMMENT_SWEEP = (  # the Go comment cleanup: 18 batch agents, what was removed and kept
    "7c6b61c1-2325-406b-adbf-960a8b66f34d",
    "0c2f607b-ab4f-4b4c-9504-0c2fae53a480",
    "8d9a462d-dc85-40c8-b6af-f576a2ea6cb0",
    "2ae250b1-ffd8-4b8a-aa4b-5a13079e8534",
    "e76498f0-1810-4686-801e-faaff9d57cf7",
)

# 94fab1a1: gradient-coloured segments.
QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "decision",
        "How is a gradient written in the config: a new field, or something else?",
        PROJECT,
        ("968dc532-d84c-48d8-bf7c-a399f8a72537", "3302fe7f-b22c-4adc-a4f9-461b47d015bb"),
    ),
    RealQ(
        "preference",
        "Which model did I want the gradient work delegated to?",
        PROJECT,
        (
            "4b403341-59b1-47f0-87c1-fd9486664ba5",
            "7cfd0436-0371-4391-9366-7cf75345257c",
            "d00c56bc-38b6-4671-8621-52003dfab2aa",
            "b3a38b8a-f36d-47fe-8aca-dcbea071e923",
            "c3135daa-3d7d-40f2-89e0-fdfbf1ccc2be",
        ),
    ),
    RealQ(
        "constraint",
        "What is the repo's rule about where feature commits go, and what did you do when they"
        " landed on main?",
        PROJECT,
        (
            "5274fa3b-fef9-420e-a0ef-15cedca40651",
            "toolu_01TnxdW9sFhVy7tfgmJhLiSN",
            "3302fe7f-b22c-4adc-a4f9-461b47d015bb",
        ),
    ),
    RealQ(
        "fact",
        "Which kinds of colours can be used as gradient stops now?",
        PROJECT,
        (
            "0c9d0852-a572-45ae-8285-3debae89b23b",
            "3a17f737-9fa8-452b-bdd6-f334f3f0ea1b",
            "ba465079-69bd-40b7-94b2-6ac7be60f871",
        ),
    ),
    RealQ(
        "fix",
        "Why did the powerline start symbol of a gradient segment get the wrong colour?",
        PROJECT,
        (
            "0fb8995f-6d90-4e60-8515-afebde8f66b6",
            "e4b66267-e9f4-4233-afe3-d64ae284b1dd",
            "4d1bb32c-38cd-429c-b17c-0bd08f056e2b",
        ),
    ),
    RealQ(
        "how",
        "How can I see why a gradient in my config is not rendering, and what did that turn up?",
        PROJECT,
        (
            "8186f663-910a-43ea-98d0-1b350327abf8",
            "2ab8a385-f27c-43ee-bab3-2a3f6cca861a",
            "79a1c97e-0bb1-4abf-ae36-e30f51e0425d",
        ),
    ),
    RealQ(
        "how",
        "Why couldn't accent be a gradient stop at first, and how was it made to work?",
        PROJECT,
        (
            "eccc9d39-872a-4104-bde1-8506185a150c",
            "e787da88-164a-4b5d-a007-267259244483",
            "ba465079-69bd-40b7-94b2-6ac7be60f871",
        ),
    ),
    RealQ(
        "decision",
        "What did we decide about gradients on segments that are only a few cells wide?",
        PROJECT,
        ("cdb5ba38-31fa-416a-9964-90fd434960c6", *NARROW_COLLAPSE),
    ),
    RealQ(
        "paraphrase",
        "When a coloured block is too tiny for a smooth blend, which shade does it fall back to?",
        PROJECT,
        NARROW_COLLAPSE,
    ),
    RealQ(
        "decision",
        "For the Catppuccin rework, why chain every segment from the previous one instead of"
        " giving each an explicit start and end colour?",
        PROJECT,
        (
            "d00c56bc-38b6-4671-8621-52003dfab2aa",
            "6933aafb-e70d-4ab5-94cf-80cb0b96bbdf",
            "1fce99fe-4991-47ce-af43-5bb3ffebca2c",
        ),
    ),
    RealQ(
        "preference",
        "What did I complain about in the right prompt's gradients, and where did we end up?",
        PROJECT,
        (
            "255317b8-f926-48d6-afd7-af9e9f72c102",
            "08cea9e0-818b-47d1-8419-b3a8b3405516",
            "e095431c-26c4-4095-89c8-137c96190ec8",
            "154ac526-ef51-465f-a624-58eff9c2ca4f",
            "562084e7-9db9-495e-8c6f-87ef471f9e88",
        ),
    ),
    RealQ(
        "fix",
        "How was the trailing cap of the transient prompt made to match the end of its gradient?",
        PROJECT,
        (
            "a442d808-ca6c-4f65-b2fc-fd9928943495",
            "c89f5df5-bd5a-4157-a46c-a3bc4b77fd84",
            "9aa95991-989a-4eea-9810-d38d30be5762",
            "12ba92b7-b7f1-4122-9120-0ee8fb5bf1a3",
            "3eeca894-c11a-4445-99a4-937b62817b05",
            "17913caf-bbdf-45a2-95f1-ccb4f5d61b53",
            "a3f4c483-6ee9-47b9-a886-d76ab4176119",
        ),
    ),
    RealQ(
        "fix",
        "Why was the streaming placeholder shown as a solid block instead of a gradient?",
        PROJECT,
        ("40ef5ab7-8a4d-4d87-95c7-61dc569c6a26", "7d75c2d9-a69a-4563-b842-3669d8ff94d9"),
    ),
    RealQ(
        "fact",
        "Do gradients make prompt rendering slower?",
        PROJECT,
        (
            "0386a4bb-cc75-4239-b307-5c5019e77ef7",
            "a40addc5-024e-4689-bef2-864a67c5e287",
            "c8a83078-e8fa-45f6-a896-04091775f7aa",
            "a5b39adb-4496-4408-a715-e2f38b161bfe",
        ),
    ),
    RealQ(
        "fact",
        "Which findings of the ultra code review were left unfixed, and why?",
        PROJECT,
        ("cac1ed37-8ebe-4335-8568-0d8369d90dda", "9e983624-c3e1-4715-8b2d-4f4e75b2c3ab"),
    ),
    RealQ(
        "decision",
        "Did we step in to redirect the gap-sweep subagent while it was running?",
        PROJECT,
        ("488237ce-6ab2-47cc-b0df-0173270d6819", "0e952de9-5743-4741-a3f4-c6aa41fb0360"),
    ),
    RealQ(
        "artifact",
        "Which branch holds the gradient work?",
        PROJECT,
        (
            "5274fa3b-fef9-420e-a0ef-15cedca40651",
            "toolu_01TnxdW9sFhVy7tfgmJhLiSN",
            "3302fe7f-b22c-4adc-a4f9-461b47d015bb",
            "25072fd2-3df7-4c29-aab6-db3fc1e4dd59",
            "3c86eb49-882f-41e0-9be7-2d0378cf0e9e",
        ),
    ),
    RealQ("temporal", "What did we do on 2026-07-22?", PROJECT, day="2026-07-22"),
)

# d1ffb512: template injection through folder names, and trusted templates.
QUESTIONS += (
    RealQ(
        "fix",
        "How could a folder name run commands through the path segment?",
        PROJECT,
        ("3e546ff6-4cce-4538-b530-4c00fdd1892c", "83095500-3ed2-4f95-80e4-ad88d96105a2"),
    ),
    RealQ(
        "how",
        "How did the first fix for the folder-name injection work?",
        PROJECT,
        ("2bdf147d-83dc-4a93-8b02-bd5d377e7601", "ef8d6643-c5f1-4a92-9add-b7384b5e4aeb"),
    ),
    RealQ(
        "decision",
        "Which approach did I choose for keeping injected cmd calls from running, and what did I"
        " drop?",
        PROJECT,
        (
            "cbf15400-98b2-454a-bc55-fd6f9cea7349",
            "64423b9a-2410-4c8b-8585-85d1ccd41e64",
            "cc83bfc9-be7c-4be1-9312-847f3d032340",
            "3c86eb49-882f-41e0-9be7-2d0378cf0e9e",
        ),
    ),
    RealQ(
        "fact",
        "How many template render call sites did the audit find, and how many took untrusted"
        " input?",
        PROJECT,
        ("64423b9a-2410-4c8b-8585-85d1ccd41e64",),
    ),
    RealQ(
        "constraint",
        "When should a commit be marked as a breaking change?",
        PROJECT,
        (
            "8bb152d7-929a-4c2c-be30-60ca4927aaba",
            "eb2cf841-56d6-4d1f-bf34-13b05343a20c",
            "7690bd50-1166-4358-8718-c680b29ed1ae",
            "toolu_015W97YTFC5nWM2KiB2VUNNE",
            "4eb437bd-9871-4d95-b55a-c64ca3b4b4a6",
        ),
    ),
    RealQ(
        "paraphrase",
        "Why were you against one entry point accepting both kinds of input at first?",
        PROJECT,
        ONE_RENDER,
    ),
    RealQ(
        "decision",
        "What names did the template render functions end up with, and why?",
        PROJECT,
        (
            "363a7150-a1ce-47d5-b38c-f1efc916f0cd",
            "b24c1221-a975-4891-8f4a-39d378f270d0",
            "3c60a4d4-0521-4bd4-9977-ee74ae6b83b8",
            "20ffcbd3-401c-44aa-be3e-ba8715ca4130",
        ),
    ),
    RealQ(
        "fact",
        "Where did the Entire-Checkpoint line in the commit message come from?",
        PROJECT,
        (
            "78130dc0-7773-4c59-bfc9-9f6cd33b56aa",
            "toolu_01JTPgFFY5nNseRv1cDPCtFg",
            "ef8d6643-c5f1-4a92-9add-b7384b5e4aeb",
        ),
    ),
    RealQ("temporal", "What did we do on 2026-07-23?", PROJECT, day="2026-07-23"),
)

# 634355e9: the minimal-comment rule and the comment sweep.
QUESTIONS += (
    RealQ(
        "preference",
        "What are my rules for comments on functions?",
        PROJECT,
        ("7ca9600a-08af-44c1-9a07-b36e894b17f9", "toolu_01WcHPYisJhUkd8TNAoo2b14"),
    ),
    RealQ(
        "decision",
        "Where does the comment rule live, and why not in the golang skill?",
        PROJECT,
        (
            "cd5ccbb4-b843-431e-a6a5-fe9b25f15c40",
            "368efea9-0bcf-4ae2-879b-82e533f572d5",
            "6977859a-cefb-4737-a789-5fca378473d7",
            "7163cf2b-53dc-4853-9a43-626245c7e0de",
        ),
    ),
    RealQ(
        "fact",
        "Did the comment cleanup also cover type comments and test files?",
        PROJECT,
        ("toolu_01XBChRU5bZxcy5zoX5LSzut",),
    ),
    RealQ(
        "how",
        "How was the Go comment cleanup split up and checked?",
        PROJECT,
        COMMENT_SWEEP,
    ),
    RealQ(
        "paraphrase",
        "How big was the tidy-up of redundant annotations above Go declarations?",
        PROJECT,
        ("e76498f0-1810-4686-801e-faaff9d57cf7",),
    ),
    RealQ(
        "fact",
        "Which comments in the shell init scripts were kept on purpose?",
        PROJECT,
        ("fb5df916-492f-4f96-9d23-cf3a6f8cd993", "7163cf2b-53dc-4853-9a43-626245c7e0de"),
    ),
    RealQ(
        "how",
        "How did we make sure the shell script edits changed nothing but comments?",
        PROJECT,
        (
            "1c5d7f4a-d870-4914-9970-25809a5cf3f3",
            "a6ec3fcc-4094-483d-a396-f1587ce4419c",
            "8d73004e-287f-41e6-ac44-c3e7f340cabe",
            "7163cf2b-53dc-4853-9a43-626245c7e0de",
        ),
    ),
    RealQ(
        "artifact",
        "Which commit holds the comment cleanup, and how did I want it made?",
        PROJECT,
        (
            "d858d534-8934-4240-a960-d9f0dcd1b86f",
            "toolu_012hiV4xoiFjY7KPJvzetfZM",
            "720bc5cb-a5e7-49a3-9d04-399615c262f0",
        ),
    ),
    RealQ(
        "resume",
        "Where did we leave off?",
        PROJECT,
        since="2026-07-26T13:38:00Z",
        now="2026-07-27T09:00:00Z",
    ),
)

# Questions the sessions cannot answer (checked by grep over the three transcripts).
UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (PROJECT, "How do we publish a new release to Homebrew?"),
    (PROJECT, "What did we decide about collecting telemetry from the CLI?"),
)
