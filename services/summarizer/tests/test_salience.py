"""Memory kind and salience: the formula, the cheap cases bare keywords get wrong, and accuracy
measured on a small labelled set against the bare-keyword baseline of the issue."""

from __future__ import annotations

import pytest

from agent_memory_common.contracts.memory import salience
from agent_memory_summarizer.salience import classify, is_question, strongest
from tests.bench.kinds_baseline import classify_baseline

# (text, kind) written as agents and users actually talk in coding sessions. Roughly half are
# plain statements of each kind; the rest are the traps: negations, questions, code, and the
# other senses of the cue words.
LABELLED: list[tuple[str, str]] = [
    # constraint
    ("All timestamps must be stored in UTC.", "constraint"),
    ("Never commit the .env file to the repository.", "constraint"),
    ("The recorder always acknowledges only after the commit.", "constraint"),
    ("A bearer token is required for every request in team mode.", "constraint"),
    ("We need to keep backward compatibility with the v1 clients.", "constraint"),
    ("Migrations have to be append-only; editing an applied one is forbidden.", "constraint"),
    # definition
    (
        "A segment is defined as a run of one session's events closed by a gap or a budget.",
        "definition",
    ),
    ("A grip means a link from a summary bullet to the exact events it came from.", "definition"),
    ("We call the per-project lock the rollup lock.", "definition"),
    ("TOC stands for table of contents.", "definition"),
    ("The durable consumer name refers to the service that owns it.", "definition"),
    # procedure
    ("First run make install, then start the stack with agent-memory up.", "procedure"),
    ("Step 1: export the token. Step 2: restart the gateway.", "procedure"),
    ("To release, bump the version, then tag the commit and push the tag.", "procedure"),
    ("Follow these steps to rotate the key without downtime.", "procedure"),
    ("1. stop the recorder\n2. apply the migration\n3. start the recorder again", "procedure"),
    # preference
    ("I prefer small pull requests that do one thing.", "preference"),
    ("We like structlog better than the stdlib logging setup.", "preference"),
    ("Avoid global state in the handlers.", "preference"),
    ("Please don't use print in services.", "preference"),
    ("I'd rather keep SQL in plain files than use an ORM.", "preference"),
    # observation
    ("The test suite passed on the second run.", "observation"),
    ("Postgres restarted at 14:02 and the pool reconnected.", "observation"),
    ("The segment had 412 tokens and 9 events.", "observation"),
    # traps: negation
    ("A token is not required in local mode.", "observation"),
    ("You don't need to restart the query service after a migration.", "observation"),
    ("There is no need to pin the nats-server version.", "observation"),
    ("The flag doesn't mean the event was stored.", "observation"),
    ("The first delivery is not always the one that gets acknowledged.", "observation"),
    # traps: questions
    ("Must we always use UTC for the day buckets?", "observation"),
    ("Should we prefer ULIDs over UUIDs here?", "observation"),
    ("Do we need to lock per project or per tenant?", "observation"),
    ("What does overlap_count mean for the first segment?", "observation"),
    # traps: code
    ("Changed the check to `if must_retry: never_ack()`.", "observation"),
    (
        "Patched it:\n```python\nif step > limit:\n    raise ValueError('must be smaller')\n```",
        "observation",
    ),
    # traps: other senses of the cue words
    ("It looks like the cache is stale again.", "observation"),
    ("The following error appears when the pool is closed.", "observation"),
    ("This means that the queue is full, so the gateway answers 503.", "observation"),
    ("It must have crashed before the ack reached the server.", "observation"),
    ("I have never seen this warning before.", "observation"),
    ("We retry with a delay to avoid a thundering herd.", "observation"),
    ("That step of the migration took four seconds.", "observation"),
    # mixed: a rule stated after a question still counts
    ("Can we skip the lock? No: every rollup must hold the project lock.", "constraint"),
]


def accuracy(classifier: object) -> float:
    assert callable(classifier)
    hits = sum(1 for text, kind in LABELLED if classifier(text) == kind)
    return hits / len(LABELLED)


def test_labelled_set_is_balanced_enough_to_mean_something() -> None:
    kinds = [k for _, k in LABELLED]
    assert len(LABELLED) >= 40
    for kind in ("constraint", "definition", "procedure", "preference", "observation"):
        assert kinds.count(kind) >= 5, kind


def test_classifier_beats_bare_keywords_on_the_labelled_set() -> None:
    ours, base = accuracy(classify), accuracy(classify_baseline)
    wrong = [(t, k, classify(t)) for t, k in LABELLED if classify(t) != k]
    print(f"\nkind accuracy: classifier {ours:.2%}, bare keywords {base:.2%}; misses: {wrong}")
    assert ours >= 0.9, wrong
    assert ours >= base + 0.2, (ours, base)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Must we always use UTC?", "observation"),
        ("It is not required.", "observation"),
        ("`never` is a keyword in that DSL", "observation"),
        ("It looks like rain.", "observation"),
        ("You must rebase before merging.", "constraint"),
        ("we call this the inbox", "definition"),
        ("Prefer composition over inheritance.", "preference"),
    ],
)
def test_cheap_cases(text: str, kind: str) -> None:
    assert classify(text) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # what an agent says while it works (``make bench-real``): its next step, a to-do, a
        # cause, a feature, a consequence, a question to the user
        ("Now I need to update the CLI call:", "observation"),
        ("I also need to remove the flag parameter from the helper function.", "observation"),
        ("First, let me check if we need to build the charm, then run the tests.", "observation"),
        ("- Need to implement the ! prefix for exclusions", "observation"),
        ("Rockcraft is failing because it requires LXD permissions in the CI.", "observation"),
        (
            "- **No Hardware Required**: Test charm behavior without physical inverter",
            "observation",
        ),
        ("This avoids the LXD daemon issues and builds directly on the host.", "observation"),
        ("I'm not sure what you'd like me to export.", "observation"),
        ("Research it if you need to, but keep it a script.", "observation"),
        # what a thing does or did, and an instruction for this once
        ("That handler never runs on a panic.", "observation"),
        ("The old client always retried on 500, which hid the bug.", "observation"),
        ("Walking the dogs always reminds me to slow down.", "observation"),
        ("You'll need to log in to the registry first.", "observation"),
        # a program's message quoted, what would have happened, what a thing did, a guess
        ('The loader then fails with "Configuration file must contain a mapping".', "observation"),
        ("When a command hung, it would never complete.", "observation"),
        ("The Go version successfully avoids this by installing a binary.", "observation"),
        ("So this must be one of the recent changes.", "observation"),
        # ... where a rule quoted from its source and a stated habit stay
        ('CLAUDE.md says "Never use git add . - stage files by name".', "constraint"),
        ("We avoid global state in this codebase.", "preference"),
        # and the rules, caveats and choices said in the same sessions
        (
            "In destructive-mode, you must build on the same Ubuntu version as the base.",
            "constraint",
        ),
        ("The mock server needs to be accessible from inside the Kubernetes pod.", "constraint"),
        ("Config changes always need a restart of the worker pool.", "constraint"),
        ("A refund never exceeds the captured amount.", "constraint"),
        ("The deploy job always runs as root.", "constraint"),
        (
            "Keep in mind that I often have several sessions running in the same folder.",
            "constraint",
        ),
        ("Yes, option a, but we also want the http config option.", "decision"),
        ("OK, let's go with option 2.", "decision"),
        ("I'd like structured logs with key-value fields.", "preference"),
        ("We would rather keep the API small.", "preference"),
    ],
)
def test_what_real_coding_sessions_say(text: str, kind: str) -> None:
    assert classify(text) == kind


def test_baseline_really_is_fooled_by_the_traps() -> None:
    # guards the comparison above: if the baseline were as good, beating it would prove nothing
    assert classify_baseline("It looks like rain.") == "preference"
    assert classify_baseline("Must we always use UTC?") == "constraint"
    assert classify_baseline("It is not required.") == "constraint"


def test_question_detection() -> None:
    assert is_question("Should we split the table?")
    assert is_question("do we need to lock per tenant")
    assert not is_question("We should split the table.")


def test_salience_formula() -> None:
    assert salience(0, "observation") == 0.0
    assert salience(250, "observation") == pytest.approx(0.225)
    assert salience(500, "observation") == pytest.approx(0.45)
    assert salience(5000, "observation") == pytest.approx(0.45)
    assert salience(250, "constraint") == pytest.approx(0.425)
    assert salience(250, "constraint", pinned=True) == pytest.approx(0.625)
    assert salience(1000, "preference", pinned=True) == pytest.approx(0.85)
    assert salience(100, "episode") == pytest.approx(0.29)


def test_strongest_kind_of_a_node() -> None:
    assert strongest(["observation", "observation"]) == "observation"
    assert strongest(["observation", "preference", "constraint"]) == "constraint"
    assert strongest(["preference", "preference", "constraint"]) == "preference"
    assert strongest([]) == "observation"
