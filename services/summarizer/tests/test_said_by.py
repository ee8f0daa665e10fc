"""Who said a sentence changes what it states (``said_by``): the user's words set the course,
the agent's sentences with a cue word are often its work, not a memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory_summarizer.extractive import summarize_segment
from agent_memory_summarizer.model import SourceEvent
from agent_memory_summarizer.salience import classify

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # the user's prohibitions and rules of things: constraints
        ("Focus on TDD and (don't try to implement the negation with regexes.", "constraint"),
        ("I authenticated gh for you. **Do not push to any other remote**", "constraint"),
        ("So please, orient yourself first: NO commits until the tests pass!", "constraint"),
        ("Once the test is written, it should be self-describing.", "constraint"),
        ("The story names should match the feature names.", "constraint"),
        # the user's "we should" and refusals: decisions
        ("It seems like we should build the rock and push it to a registry in CI.", "decision"),
        ("A demo with the principal charm is great and we should do that.", "decision"),
        # settled: left as it is
        ("No, keep it as is.", "decision"),
        # the shared rules come first: a taste stays a taste
        ("Please use the previous style, don't add emojis and numbered lists!", "preference"),
        # not a rule, not a choice
        ("I don't know why the rock build fails.", "observation"),
        ("You also mentioned that we should think about negative search.", "observation"),
        ("We don't have a story for that yet, we should create it maybe.", "observation"),
        ("Should we add that story to TODO.md?", "observation"),
        ("This should fix the CI failure.", "observation"),
        ("It should be fun!", "observation"),
        ("Don't give up, buddy!", "observation"),  # cheering, in a chat
        ("Hey Cal, take care and don't overwork yourself!", "observation"),
        ("No details yet, I hope everything works out.", "observation"),
        ("I don't want to bother you with this.", "observation"),  # a feeling
        ("I don't want to let them down.", "observation"),
        ("Just make sure you don't give up!", "observation"),
        ("Have you changed your mind about the trip?", "observation"),
        # an order for the moment (LABELLING.md: "don't commit yet" is an observation)
        ("Focus on TDD and (don't try to implement the negation just yet.", "observation"),
        ("So please, orient yourself first: NO work on implementation yet!", "observation"),
        ("Don't push anything for now.", "observation"),
        # a changed mind about the order of the work (LABELLING.md, "Order of work")
        ("I've changed my mind, the simple ones go first.", "observation"),
        # a thing's need stays a rule in the user's mouth
        ("The config needs to be TOML, not YAML.", "constraint"),
        # the shape of what the project produces, asked for: decisions (approval of a shape, a
        # better name, a way liked more, "we'll want to", "but not", "what we want is", "for
        # compatibility" and a soft target were rules of one or two labelled sentences each,
        # removed with issue 52: ``said_by``'s docstring)
        ("Let's remove the reviewed-areas line from the template.", "decision"),
        ("Let's design a write-up we can send to each team.", "decision"),
        ("I'd like a branch for each issue, with the fix made but not committed.", "decision"),
        # ... but not a trial, one item, a wish to know, an order for now
        ("Please draft a template and we can iterate on it.", "observation"),
        ("Let's agree on vocabulary before the layout code grows.", "observation"),
        ("Let's also remove bug 5 from the nginx write-up.", "observation"),
        ("Do you know the team for each of the repos?", "observation"),
        ("We'll want to know why it fails on CI.", "observation"),
        ("Let's commit the script but not yet the docs.", "observation"),
        ("I like small commits.", "preference"),  # a taste, no choice among options
    ],
)  # fmt: skip
def test_what_the_user_says(text: str, kind: str) -> None:
    assert classify(text, "user") == kind


@pytest.mark.parametrize(
    "text",
    [
        "We need to push the rock we built.",  # its next step
        "I'll also need to update the fixtures.",
        "You'll need to log in to Docker Hub.",  # an instruction for this once
        "- Power users love it",  # a selling point
        "One concern: it's always imported, even when OAuth isn't used.",  # the code, described
        "The mock server needs to be accessible from inside the pod.",  # how things work
        "It returns an AwaitRemove that needs to be awaited before the DOM updates.",
        "The generated files need to be regenerated after the schema change.",
        "Here are the actual use cases we need to support:",  # a list's intro
        '"From an operations perspective, this filtering system needs to be predictable.',
        "- Tutorial: a step-by-step guide to adding MCP to your charm",
        "Recommended next step: Write a single failing test for --filter cloud.",
        "We need to split comma-separated values ourselves.",  # its plan, any verb
        "The user needs to push this commit, then we can watch the CI run.",
    ],
)
def test_what_the_agent_says_while_it_works_is_no_memory(text: str) -> None:
    assert classify(text, "assistant") == "observation"


@pytest.mark.parametrize(
    "text",
    [
        "We don't need to restart the server.",  # nothing chosen instead
        "We don't need a migration here; the column already exists.",
    ],
)
def test_what_the_agent_does_not_need_is_no_choice(text: str) -> None:
    assert classify(text, "assistant") == "observation"


def test_the_agent_s_words_are_a_memory_only_as_a_choice_it_announces() -> None:
    """Its rules, tastes and steps were wrong 4 times in 5 on projects no rule was written from
    (``tests/bench/README.md``, "The agent's words"); the user's rule is kept where they said it."""
    assert classify("We'll use Alembic for migrations.", "assistant") == "decision"
    assert classify("I went with SQLite for the cache.", "assistant") == "decision"
    for said in (
        "Never commit generated files; they must stay out of git.",
        "We need to keep the public API stable.",
        "I prefer small commits for this kind of change.",
        "To release: bump the version, tag it, then push the tag.",
        "1. Read the config\n2. Validate it\n3. Write the cache",
    ):
        assert classify(said, "assistant") == "observation", said
        assert classify(said, "user") != "observation", said  # the same words, the user's


@pytest.mark.parametrize(
    "text",
    [
        "We need to push the rock we built.",
        "- Power users love it",
        "Never commit the generated files.",
    ],
)
def test_an_unknown_speaker_gets_the_shared_rules_alone(text: str) -> None:
    """The written labelled sets have no speaker: their figures do not move."""
    assert classify(text) == classify(text, "")
    assert classify(text) != "observation"


def event(i: int, role: str, text: str) -> SourceEvent:
    return SourceEvent(
        event_id=f"e{i}", ts=T0 + timedelta(minutes=i), role=role, type="message", text=text
    )


def test_the_summarizer_reads_each_sentence_with_its_speaker() -> None:
    """The same words: a rule from the user, the agent's next step from the agent."""
    said = "We need to push the rock we built to GHCR."
    summary = summarize_segment(
        [event(0, "user", said), event(1, "assistant", "Pushing it now.")], "s"
    )
    assert {b.text: b.kind for b in summary.bullets}[said] == "constraint"
    summary = summarize_segment(
        [event(0, "user", "Pushing it now."), event(1, "assistant", said)], "s"
    )
    assert {b.text: b.kind for b in summary.bullets}.get(said, "observation") == "observation"
