"""Questions about the real sessions, with what answers them, written by reading the sessions.

``refs``: a transcript line's ``uuid`` (the prompt or reply on that line) or a ``toolu_`` id
(the tool's call and its result; BookMinder's name a line of its console log, ``day-017:L2208``
and ``toolu_day017_L2109``, see ``console.py``); ``day``: every prompt and reply of that UTC
day ("what did we do on ..."); ``since``: every prompt and reply from then on ("where did we
leave off?"). An agent asks these the next week, in its own words; the gold is what a person
reading the session would point at. ``PARAPHRASE`` questions share at most one content word
with the moment they ask about (checked by a test), as an agent that forgot the session's
words would ask.
"""

from __future__ import annotations

from dataclasses import dataclass

CCTRACE = "cctrace"
SUNGATHER = "sungather"
BOOKMINDER = "bookminder"


@dataclass(frozen=True)
class RealQ:
    kind: str
    question: str
    project: str
    refs: tuple[str, ...] = ()
    day: str | None = None
    since: str | None = None
    now: str | None = None


# Moments two questions ask about, in the session's words and in others.
PICKS_THE_SESSION = (  # how the exporter tells the current session among several
    "4799fbbb-ca8e-4dec-a9c2-91524b3918c2",
    "6446fce7-8f81-4865-9e49-e35f4e3a16bb",
    "e3bdbab3-cc50-47c5-befc-7b1eb6a0841b",
)
XML_LEFT_OUT = (  # why the list of created files left out the XML: an old copy, a default
    "d6014b40-3155-4081-b89b-7203fa1e166c",
    "9f95a5d1-ddb0-4bc2-9f97-19d107a8d5ed",
    "d06945e9-a594-473c-8d12-5736de69c4a3",
    "7991f9f3-c936-45e4-9334-cb80f8465a48",
    "304a04c6-c223-4bdb-9699-082f6f45b5a7",
)

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "fact",
        "Where does Claude Code keep its session logs on disk?",
        CCTRACE,
        ("d85f7c0d-895e-4c56-81c0-28fb5a08244c",),
    ),
    RealQ(
        "preference",
        "Should the export run all the time in the background or only when I ask for it?",
        CCTRACE,
        ("1410257b-fbe7-42da-a1ec-ee76d0f8be3a",),
    ),
    RealQ(
        "constraint",
        "What did I say about running several Claude Code sessions at the same time?",
        CCTRACE,
        ("f8d34ee0-c48b-4e10-a44b-b566789a4177", "0aa58c2a-aa51-4c69-b871-e89863f89cc1"),
    ),
    RealQ(
        "how",
        "How does the export script pick the current session when several are active?",
        CCTRACE,
        PICKS_THE_SESSION,
    ),
    RealQ(
        "paraphrase",
        "Two chats open in one directory: how do we avoid dumping the wrong one?",
        CCTRACE,
        PICKS_THE_SESSION,
    ),
    RealQ(
        "fix",
        "Why did the export's list of created files leave out the XML file?",
        CCTRACE,
        XML_LEFT_OUT,
    ),
    RealQ(
        "artifact",
        "Show the edit that changed the default output format of export_session.",
        CCTRACE,
        ("toolu_01KpGUb2ug6YQCXLLxH2Upgh",),
    ),
    RealQ(
        "fix",
        "Why did writing README.md fail at first?",
        CCTRACE,
        (
            "toolu_01KvfcXVVtr5jBsV4Aoisb1h",
            "toolu_01C2bydnaBuZnFjSKzN3xuop",
            "1f666a5f-7139-4de0-af06-2907b0c5f26b",
        ),
    ),
    RealQ(
        "fact",
        "Which files did we move into the backup folder?",
        CCTRACE,
        (
            "042c7585-cfe9-44a8-8489-39dd04a234f8",
            "7eabd475-3a68-4a00-927e-ab9df11b5df9",
            "toolu_01MsZpTsPX7a938gV14npnDY",
            "toolu_01GAUmrMcCFoYrY1kUeAxCez",
            "toolu_01UMjUjYfr4WaTysVarGqVWF",
            "toolu_01Ex5EStdttUNGYJRHiP6fea",
        ),
    ),
    RealQ(
        "artifact",
        "What did we change in .gitignore?",
        CCTRACE,
        ("toolu_019bJV5ifzTtFATmG39diaFo", "b4338fc2-0dfc-44f8-8521-ca8a377a0af6"),
    ),
    RealQ(
        "fact",
        "What description did we write for the GitHub repository?",
        CCTRACE,
        ("a5f06f8e-b6f6-401b-bdce-3e1aa2b87a41",),
    ),
    RealQ(
        "preference",
        "What did I want the README to make clear?",
        CCTRACE,
        ("98b24514-bfaa-4d33-88a4-ace3e3cde8fa", "3a9a5d2a-5f7d-4c31-beea-ab6ca7fc21f1"),
    ),
    RealQ(
        "how",
        "How can the log be written automatically when a chat ends?",
        CCTRACE,
        (
            "97c459dd-b434-4b53-bddf-421169c4d882",
            "toolu_017NrQh12XEr915j2cp6Sbok",
            "toolu_01RUeJZuPtcrcyavVJuHbkuj",
            "toolu_01TLahfiBGRiwy6oMe9yZ19Q",
        ),
    ),
    RealQ(
        "fact",
        "Where is the export slash command installed?",
        CCTRACE,
        (
            "d96f80f2-7f75-4460-86cd-e74484940a9a",
            "toolu_019ZB7QkkiPwa3AGsMvEPXBt",
            "toolu_01Q6o2xkHBLDT9RH76PsrFPe",
        ),
    ),
    RealQ(
        "fact",
        "What dependencies does the export tool need?",
        CCTRACE,
        (
            "toolu_01JKpxPucUis1KcEJDr8Jvij",
            "a5f06f8e-b6f6-401b-bdce-3e1aa2b87a41",
            "73c24902-d91a-4cfd-baca-0df725262444",
        ),
    ),
    RealQ(
        "how",
        "How did we find out which process is Claude Code?",
        CCTRACE,
        ("8558279e-dcce-4359-9c6d-ccde75a36ca5", "toolu_01MfQF5GvczudJFFiJEYfMkx"),
    ),
    RealQ(
        "fact",
        "Which files does one export create?",
        CCTRACE,
        (
            "d96f80f2-7f75-4460-86cd-e74484940a9a",
            "d6014b40-3155-4081-b89b-7203fa1e166c",
            "a2d78486-7003-49cd-9b4c-531987910c89",
            "9fa6d4dc-a139-47f8-8067-8f8860eca79b",
            "7accc909-36c7-483f-9c87-bd5dbe24967c",
        ),
    ),
    RealQ(
        "artifact",
        "Which command copied the XML export into the project folder?",
        CCTRACE,
        ("toolu_01Fzxi9y3fj4eAV6yrVgwaLm",),
    ),
    RealQ(
        "fix",
        "Why did the last export not create a new folder?",
        CCTRACE,
        (
            "88c2e7db-a39b-4044-b9bb-c0aca158f0a0",
            "b6b4d83e-78c8-4125-8438-206bc02eac48",
            "6df9c12f-629a-4393-9889-53a4eed9de21",
        ),
    ),
    RealQ(
        "paraphrase",
        "The dump's summary forgot one of the outputs it had produced; what caused it?",
        CCTRACE,
        XML_LEFT_OUT,
    ),
    RealQ("temporal", "What did we do on 2025-07-03?", CCTRACE, day="2025-07-03"),
    RealQ(
        "temporal",
        "What did we work on yesterday?",
        CCTRACE,
        day="2025-07-02",
        now="2025-07-03T09:00:00Z",
    ),
    RealQ(
        "resume",
        "Where did we leave off?",
        CCTRACE,
        since="2025-07-03T15:05:00Z",
        now="2025-07-07T09:00:00Z",
    ),
)

# sungather-k8s-operator: two sessions, a mock inverter for the integration tests, then
# building the rock in CI (four failures fixed one by one).
MOCK_FAILED = (  # why the integration tests against the mock failed
    "679cf8a2-9786-41cc-9b6c-fea7fe447c72",
    "956776de-3ec7-400f-bbf8-e570ff9738d9",
    "28778220-0774-4b57-adfe-67c81dd9388e",
)
SAME_RELEASE = (  # destructive mode builds only on the base's Ubuntu release
    "d0d5e82b-dada-4627-9a86-cd86c8c259d5",
    "0e1785db-fb41-4948-83c1-e0c4b7115213",
    "87a7e49b-6c0d-45e9-a207-30453fbbdab5",
)
QUESTIONS += (
    RealQ(
        "fact",
        "Why did we want a mock Sungrow server?",
        SUNGATHER,
        ("6358eaf7-88b2-4486-b481-bb66ebf53a50", "ef33028b-5f4a-49fb-bb7e-81bb76c4486d"),
    ),
    RealQ(
        "fact",
        "Which protocols and ports does the mock inverter serve?",
        SUNGATHER,
        (
            "b08879a8-5b02-41db-acab-e1309353bac1",
            "cd96d91a-ac84-41c6-98cd-d4daa6798c9c",
            "440da642-8eea-4f24-9eae-e6a74fe45837",
        ),
    ),
    RealQ(
        "preference",
        "Besides Modbus, which connection type did I want the mock to support?",
        SUNGATHER,
        ("15d026cd-cb2f-44ae-afcb-0b0f1f70940f",),
    ),
    RealQ(
        "fix",
        "Why did the integration tests against the mock server fail?",
        SUNGATHER,
        MOCK_FAILED,
    ),
    RealQ(
        "fix",
        "Why did verify_mock_server.py fail at first?",
        SUNGATHER,
        ("7cebdc81-e8c6-43fc-9fcd-33f1670d1f63", "toolu_01V5G1tyF8WpG6wWeZbAn9oN"),
    ),
    RealQ(
        "fact",
        "Why are the mock server tests skipped?",
        SUNGATHER,
        ("e12a598d-5807-4afd-aabd-f28e47c3c011", *MOCK_FAILED[1:]),
    ),
    RealQ(
        "artifact",
        "Which command committed the mock inverter server?",
        SUNGATHER,
        ("toolu_01ABDKsiEE62ufyGTGmarLHe",),
    ),
    RealQ(
        "fact",
        "Where does CI push the rock image?",
        SUNGATHER,
        ("27ddf9f0-6900-4c2f-9085-537387291d9f", "c43af618-f439-4137-af60-086a6a583fc5"),
    ),
    RealQ(
        "fix",
        "Why did rockcraft fail in CI the first time?",
        SUNGATHER,
        ("5bb2a5ec-80e1-4847-a5a8-faa8626912f0", "051035a8-39df-4266-851c-166e45f929fa"),
    ),
    RealQ(
        "fix",
        "How did we get past the umoci chown permission error?",
        SUNGATHER,
        ("80cb8c7f-1eb9-4795-9e9f-caab0cd754ed", "c30013db-56ad-448e-a770-47db5ec6780d"),
    ),
    RealQ(
        "paraphrase",
        "The packaging step stopped because the machine's distro differed from the target; what"
        " was the remedy?",
        SUNGATHER,
        SAME_RELEASE,
    ),
    RealQ(
        "constraint",
        "Which repositories may you use gh with?",
        SUNGATHER,
        ("175b03fc-d290-4c02-9c8d-788f906d5274",),
    ),
    RealQ(
        "fix",
        "Why did charmcraft pack fail in the integration job?",
        SUNGATHER,
        ("e4c9ea05-ae5b-41f6-9519-8075e4c409c6",),
    ),
    RealQ(
        "fix",
        "Why couldn't you push to GitHub yourself?",
        SUNGATHER,
        ("toolu_01F8mTjUq8DULgEpiMXzbJ9A", "b2becbdf-257e-4ba9-8557-f893d7cf4389"),
    ),
    RealQ("temporal", "What did we do on 2026-01-09?", SUNGATHER, day="2026-01-09"),
    RealQ(
        "resume",
        "Where did we leave off?",
        SUNGATHER,
        since="2026-01-10T00:35:00Z",
        now="2026-01-12T09:00:00Z",
    ),
)


# BookMinder (a CLI over the Apple Books database): one session written back from its console
# log (``console.py``), ids ``day-017:L<line>`` and ``toolu_day017_L<line>`` name the log's lines.
# Reviewing what Gemini did, renaming ``--flag`` to ``--filter``, a fixture committed by
# ``git add -A``, naming and docstring conventions put into CLAUDE.md.
def _bm(*lines: str) -> tuple[str, ...]:
    """Refs by log line: "2208" the prompt or reply starting there, "t2109" the tool call."""
    return tuple(f"day-017:L{n}" if n.isdigit() else f"toolu_day017_L{n[1:]}" for n in lines)


SWIFT_COMMITTED = _bm("2208", "2234", "t2109")  # the fixture swept in by `git add -A`
DASH_PREFIX = _bm("777", "795")  # --filter, and "!" because Click reads "-cloud" as an option
ZSTATE = _bm("99")  # the ZSTATE values: local, cloud, series, cloud samples
QUESTIONS += (
    RealQ(
        "fact", "What do the ZSTATE values in the Apple Books database mean?", BOOKMINDER, ZSTATE
    ),
    RealQ(
        "paraphrase",
        "Which numeric codes tell whether a title is downloaded or only in iCloud?",
        BOOKMINDER,
        ZSTATE,
    ),
    RealQ(
        "fact",
        "Who introduced the stories folder, you or Gemini?",
        BOOKMINDER,
        _bm("470"),
    ),
    RealQ(
        "preference",
        "What did I want the --flag option renamed to, and why?",
        BOOKMINDER,
        DASH_PREFIX,
    ),
    RealQ(
        "paraphrase",
        "Why can't a leading minus mark what to leave out in that CLI argument?",
        BOOKMINDER,
        DASH_PREFIX,
    ),
    RealQ(
        "preference",
        "When should the cloud filter start handling cloud samples (ZSTATE 6)?",
        BOOKMINDER,
        _bm("1875", "1897", "2118"),
    ),
    RealQ(
        "constraint",
        "What did I say about reading the files in claude-dev-log-diary?",
        BOOKMINDER,
        _bm("284", "299"),
    ),
    RealQ(
        "constraint",
        "What did I say about implementing the !cloud negation during the rename?",
        BOOKMINDER,
        _bm("1608", "1611"),
    ),
    RealQ(
        "fix",
        "Why did the first edits of the story YAML files fail?",
        BOOKMINDER,
        _bm("t1391", "t1428"),
    ),
    RealQ(
        "fix",
        "Why did the cloud filter spec still fail after the CLI option was renamed?",
        BOOKMINDER,
        _bm("t1670", "1683"),
    ),
    RealQ(
        "fix",
        "How did All_Books_20250627.swift get committed by accident?",
        BOOKMINDER,
        SWIFT_COMMITTED,
    ),
    RealQ(
        "paraphrase",
        "A huge generated source file slipped into version control unintentionally; what caused"
        " that?",
        BOOKMINDER,
        SWIFT_COMMITTED,
    ),
    RealQ(
        "artifact",
        "Which command undid the commit that swept in the Swift fixture?",
        BOOKMINDER,
        _bm("t2213"),
    ),
    RealQ(
        "artifact",
        "Which command took All_Books.swift out of git but left it on disk?",
        BOOKMINDER,
        _bm("t2261"),
    ),
    RealQ(
        "artifact",
        "Show the edit that replaced --flag with --filter in cli.py.",
        BOOKMINDER,
        _bm("t1578"),
    ),
    RealQ(
        "preference",
        "What did I say about docstrings in specs that are already implemented?",
        BOOKMINDER,
        _bm("2126", "2152", "t2357"),
    ),
    RealQ(
        "preference",
        "How should the describe and it functions of a spec be named?",
        BOOKMINDER,
        _bm("2453", "2456", "t2458"),
    ),
    RealQ(
        "constraint",
        "Why shouldn't All_Books*.swift go into .gitignore?",
        BOOKMINDER,
        _bm("2304", "2308"),
    ),
    RealQ(
        "how",
        "How do we plan to stop git add -A from staging everything?",
        BOOKMINDER,
        _bm("2304", "2308", "t2573", "2596"),
    ),
    RealQ("temporal", "What did we do on 2025-07-04?", BOOKMINDER, day="2025-07-04"),
    RealQ(
        "resume",
        "Where did we leave off?",
        BOOKMINDER,
        since="2025-07-04T21:09:30Z",
        now="2025-07-07T09:00:00Z",
    ),
)

# "What did we decide ...?": the guide's first question. A decision in a real session is rarely
# announced as one: "yes, option a", "It seems like we should ...", "let's leave X for another
# session", "except ... -- I don't want to do that!"; the gold is the turn that settled it (and
# the options it chose among, where a turn laid them out).
QUESTIONS += (
    RealQ(
        "decision",
        "Which library did we choose for the mock inverter, pymodbus or a plain TCP server?",
        SUNGATHER,
        ("15d026cd-cb2f-44ae-afcb-0b0f1f70940f", "ef33028b-5f4a-49fb-bb7e-81bb76c4486d"),
    ),
    RealQ(
        "decision",
        "What did we decide about building the rock in CI?",
        SUNGATHER,
        ("50b65926-aebe-4003-abce-a4eca69f5111",),
    ),
    RealQ(
        "decision",
        "Which default output format did we settle on for the export script?",
        CCTRACE,
        ("d6014b40-3155-4081-b89b-7203fa1e166c", "d06945e9-a594-473c-8d12-5736de69c4a3"),
    ),
    RealQ(
        "decision",
        "What did we decide about implementing --flag local?",
        BOOKMINDER,
        _bm("284"),
    ),
    RealQ(
        "decision",
        "Which plan did we settle on for the --flag rename?",
        BOOKMINDER,
        _bm("1212", "1288"),
    ),
    RealQ(
        "decision",
        "What did we decide to do about the git hooks?",
        BOOKMINDER,
        _bm("2345", "2570"),
    ),
)

# Questions the sessions cannot answer, for ``no_match``: coding questions on what they never
# touched, each asked in one project.
UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (CCTRACE, "What did we decide about the Postgres schema?"),
    (SUNGATHER, "How did we fix the flaky CI job?"),
    (CCTRACE, "Which GraphQL library do we use?"),
    (SUNGATHER, "What is our policy on feature flags?"),
    (CCTRACE, "How do we deploy to Kubernetes?"),
    (SUNGATHER, "Which CSS framework does the frontend use?"),
    (BOOKMINDER, "Which logging library did we pick for the CLI?"),
    (BOOKMINDER, "How do we publish the package to PyPI?"),
)
