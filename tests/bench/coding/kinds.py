"""The labelled sentences of the memory-kind measurement (``kinds_labelled.jsonl``).

Gold kinds: the product's ``constraint``, ``definition``, ``procedure``, ``preference``,
``observation`` (``episode`` is only ever set explicitly, so it is not guessed here) plus
``decision``, which the product does not have yet. Sources:

- ``corpus``: every user or assistant message of the coding corpus that states a fact, with the
  kind of that fact (fix stories and outcomes are observations);
- ``coding``: sentences people say in coding sessions, written for this set (decisions from
  templates over real-world choices, the other kinds written out);
- ``conversation``: everyday chat, mostly observations;
- ``tool``: lines of the corpus's tool output (pytest, ruff, mypy, cargo, clippy, git, alembic),
  all observations, every line with a cue word of the classifier included.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from typing import Any

GOLD_KINDS = ("decision", "constraint", "preference", "definition", "procedure", "observation")

FACT_KIND_PREFIX = (
    ("_pref_", "preference"),
    ("_def_", "definition"),
    ("_proc_", "procedure"),
    ("_fix_", "observation"),
    ("_outcome_", "observation"),
)
CONSTRAINT_FACTS = frozenset(
    {"p_cents", "p_idem_header", "p_compat_migrations", "p_refund_limit", "t_platforms",
     "t_startup", "t_msrv"}
)  # fmt: skip


def fact_kind(key: str) -> str:
    for infix, kind in FACT_KIND_PREFIX:
        if infix in key:
            return kind
    return "constraint" if key in CONSTRAINT_FACTS else "decision"


DECISION_TEMPLATES = (
    "We go with {a} for {b}.",
    "Decision: {b} uses {a}.",
    "Let's use {a} for {b}.",
    "We decided to use {a} for {b}.",
    "We're switching {b} from {c} to {a}.",
    "We replace {c} with {a} for {b}.",
    "From now on {b} uses {a} instead of {c}.",
    "After comparing both, we picked {a} over {c} for {b}.",
    "Agreed, {a} it is for {b}.",
    "We'll stick with {a} for {b} and drop {c}.",
    "Final call: {a} for {b}, not {c}.",
)
DECISION_SLOTS = (
    ("Postgres", "the ledger", "MongoDB"),
    ("NATS JetStream", "the event bus", "Kafka"),
    ("httpx", "outgoing HTTP calls", "aiohttp"),
    ("ULIDs", "primary keys", "serial integers"),
    ("Terraform", "the infrastructure", "Pulumi"),
    ("GitHub Actions", "CI", "Jenkins"),
    ("ratatui", "the terminal UI", "cursive"),
    ("TOML", "the config file", "YAML"),
    ("uv", "dependency management", "poetry"),
    ("Redis", "the session cache", "memcached"),
    ("structlog", "logging", "the standard logging module"),
    ("OpenTelemetry", "tracing", "the Zipkin client"),
    ("S3", "report storage", "the local disk"),
    ("pnpm", "the web frontend", "npm"),
    ("SQLite", "the desktop app's cache", "a JSON file"),
    ("gRPC", "the internal API", "REST"),
    ("Celery", "the background jobs", "RQ"),
    ("tokio", "the async runtime", "async-std"),
)

CONSTRAINTS = (
    "Every API response must include the request id header.",
    "Passwords must never be logged, not even hashed.",
    "The service has to start without network access.",
    "Customer data is not allowed to leave the EU region.",
    "All timestamps must be stored in UTC.",
    "Public endpoints always require authentication, except the health check.",
    "We need to support Python 3.11 until the end of next year.",
    "The migration must run in under five minutes on the production table.",
    "Card numbers must never reach our logs or our database.",
    "Every pull request requires one approving review before merge.",
    "The CLI must not write anything to stdout when --quiet is given.",
    "Secrets have to come from the vault, never from the repository.",
    "The batch job must finish before the acquirer's 6 am deadline.",
    "Breaking changes to the public API are forbidden within a major version.",
    "The installer has to work without root privileges.",
    "Retries must use exponential backoff with jitter.",
    "We must keep the response time of the capture endpoint under 300 ms at p99.",
    "Every new table requires a created_at column with a default of now().",
    "Feature flags must be removed within two releases of the full rollout.",
    "Tests are not allowed to call the real processor.",
    "The binary must stay under 10 MB.",
    "Webhook handlers must be idempotent because deliveries repeat.",
    "Config changes always need a restart of the worker pool.",
    "The public key must be rotated every 90 days.",
    "Each service has to expose a /healthz endpoint.",
    "Logs must be JSON in production.",
    "The refund endpoint must reject amounts of zero.",
    "Dependencies have to be pinned in the lock file.",
    "Every database query must have a timeout.",
    "Data exports are required to be encrypted at rest.",
    "The TUI must remain usable in an 80 by 24 terminal.",
    "User input must be validated at the API edge.",
)

PREFERENCES = (
    "I prefer small functions over long ones with comments.",
    "I'd rather see explicit SQL than an ORM query builder here.",
    "Please don't use wildcard imports.",
    "I like early returns better than nested ifs.",
    "I'd like error messages to say what to do next.",
    "Avoid global state in the request handlers.",
    "We prefer composition over inheritance in the domain code.",
    "I'm not a fan of mocks for our own modules; use the real thing in tests.",
    "Please avoid abbreviations in public names.",
    "I'd prefer one commit per review comment.",
    "I like type hints everywhere, even in tests.",
    "Don't use print for debugging output; use the logger.",
    "I'd rather keep the README short and link to docs.",
    "We favour boring technology for the core.",
    "I prefer f-strings over format().",
    "Please don't use emojis in commit messages.",
    "I'd like the CLI flags to be long and readable, like --dry-run.",
    "I prefer tabs of four spaces in YAML files.",
    "The team likes trunk-based development with short branches.",
    "I'd rather have a failing test first, then the fix.",
    "Please avoid sleeping in tests; poll with a timeout.",
    "I like the dark theme for screenshots in the docs.",
    "I prefer that PR descriptions explain the why, not the what.",
    "Please don't use abbreviations like mgr and svc.",
    "I'd rather not add a dependency for a ten-line helper.",
    "We prefer integration tests on real Postgres to SQLite stand-ins.",
    "I like pytest's parametrize for table-driven tests.",
    "Avoid catching bare exceptions in the workers.",
    "I'd like the logs to be quiet by default.",
    "I prefer rebasing feature branches over merge commits.",
)

DEFINITIONS = (
    "An authorization hold means the amount is reserved on the card but not yet charged.",
    "A capture refers to the moment the held amount is actually charged.",
    "We call a payout the transfer of a merchant's balance to their bank account.",
    "MRR stands for monthly recurring revenue.",
    "A soft decline is defined as a refusal the issuer may accept on a retry.",
    "The outbox is short for the transactional outbox table we publish from.",
    "A tenant refers to one customer organisation with its own data.",
    "A hot path means code that runs on every request.",
    "An acquirer is the bank that processes card payments for a merchant.",
    "A widget is what we call a renderable component bound to a data source.",
    "A layout refers to the split of the screen into panes.",
    "PSP stands for payment service provider.",
    "A reconciliation run is defined as the nightly comparison of our ledger with the bank statement.",
    "A merchant account means the contract under which a merchant accepts cards.",
    "TTL is short for time to live.",
    "A dead letter refers to a message that failed too many times and was set aside.",
    "A keybinding is what we call the mapping from a key to an action.",
    "The frame refers to one full redraw of the terminal.",
    "An idempotency key means a client-chosen id that makes a retry safe.",
    "A dispute is defined as a cardholder's formal challenge of a payment.",
    "The backlog refers to the messages a consumer has not yet acknowledged.",
    "A hotfix is what we call a release cut from the last tag with one fix.",
    "SLO stands for service level objective.",
    "A payment intent refers to the object that tracks one attempt to collect money.",
    "A scrollback is defined as the lines kept above the visible part of a pane.",
    "MSRV is short for minimum supported Rust version.",
    "A 3DS challenge means the extra step where the cardholder confirms with their bank.",
    "Net settlement refers to paying out the sales minus the refunds and fees.",
)

PROCEDURES = (
    "To deploy a hotfix, first branch from the last tag, then cherry-pick the fix, then tag it.",
    "Run make setup first, then make test to check the environment.",
    "To restore a backup: stop the workers, then run pg_restore, then start the workers again.",
    "Follow these steps to reset the sandbox: delete the merchant, then run the seed script.",
    "First export the data, then drop the old table, and finally rename the new one.",
    "To add a setting, add it to Settings, then document it, then add a test for its default.",
    "To debug a stuck consumer, check its pending count first, then look at the last error in the logs.",
    "Step 1 is to create the branch; step 2 is to open a draft PR.",
    "To onboard a merchant, create the account, then verify the documents, then enable payouts.",
    "Install the pre-commit hooks first, then run them on all files once.",
    "To replay a dead letter: fetch it with the admin CLI, fix the data, then republish it.",
    "To bump a dependency, edit the constraint, then run uv lock, then run the tests.",
    "Open the dashboard, then click on Developers, then create a restricted key.",
    "To profile the TUI, build with debug symbols first, then run it under perf record.",
    "Copy the example config, then edit the panes section, then restart tdk.",
    "To cut a beta: first tag vX.Y.Z-beta.N, then push, then announce it in the channel.",
    "Create the migration with alembic revision, then review the generated file, then run upgrade head.",
    "To rotate logs, send SIGHUP to the process, then compress the old file.",
    "To rebuild the search index, stop the indexer first, then delete the folder, then start it again.",
    "Check out the release branch, then run the smoke tests, then merge it into main.",
    "Here is the procedure:\n1. drain the node\n2. upgrade the package\n3. uncordon the node",
    "Steps:\n1. freeze the deploys\n2. run the migration\n3. unfreeze",
    "To test the TUI on macOS, first build the universal binary, then run it in Terminal.app and iTerm.",
    "To reproduce the bug, start the stub, then send the payload twice, then check the ledger.",
    "Set the env var first, then restart the service so it picks up the change.",
    "To roll back, first revert the tag's commit, then deploy the previous tag, then rerun the migration down.",
)

CODING_OBSERVATIONS = (
    "The tests pass on my machine but fail in CI.",
    "The migration took 40 seconds on staging.",
    "I found the bug in the retry loop.",
    "The processor's sandbox was down for an hour this morning.",
    "Coverage went from 81% to 86% with the new tests.",
    "The refund endpoint returned 500 for a missing payment.",
    "The profile shows most of the time in JSON encoding.",
    "I merged the chargebacks branch yesterday.",
    "The new pane renders correctly in iTerm but not in the Linux console.",
    "The load test peaked at 250 requests per second.",
    "This function is called from three places.",
    "The old exchange still has two consumers attached.",
    "It looks like the cache was cold during the benchmark.",
    "The settlement file for June had 4,211 payments.",
    "That must have been the stale lock file.",
    "The dashboard shows the p99 latency went down after the deploy.",
    "We never saw this error before the upgrade.",
    "The log pane now scrolls smoothly with 10,000 lines.",
    "Only the arm64 build failed in the release workflow.",
    "The review found two unwraps and one missing test.",
    "The webhook arrived twice within 200 ms.",
    "Memory use stays flat at 12 MB after an hour.",
    "The customer was charged once, the second request returned the stored response.",
    "I reverted the base64 change because it did not help.",
    "The fraud rule blocked three test payments in staging.",
    "The snapshot diff is only the border characters.",
    "This means the retry happens after the lock is released.",
    "The ledger export for September has 12 columns.",
    "We shipped 0.5.0 on Tuesday.",
    "Two tests are skipped on macOS because of the /proc dependency.",
    "Did the deploy to staging finish?",
    "Should we always use UTC in the settlement code?",
    "What does the acquirer do with a duplicate file?",
    "Is there a way to run only the slow tests?",
)

CONVERSATION = (
    ("I went hiking with my sister last weekend.", "observation"),
    ("The weather was great, we saw a lot of birds.", "observation"),
    ("My daughter started school this week.", "observation"),
    ("We adopted a puppy from the shelter in March.", "observation"),
    ("I read two books on the train this month.", "observation"),
    ("The concert was sold out, so we watched it online.", "observation"),
    ("My brother moved to Lisbon for a new job.", "observation"),
    ("I painted the kitchen blue on Saturday.", "observation"),
    ("We had pizza and played board games all evening.", "observation"),
    ("The museum had a new exhibit on ancient maps.", "observation"),
    ("I ran my first half marathon in two hours.", "observation"),
    ("Our garden finally has tomatoes.", "observation"),
    ("I'm taking a pottery class on Thursdays.", "observation"),
    ("My grandmother turned ninety last week.", "observation"),
    ("The flight was delayed by three hours.", "observation"),
    ("We visited my parents for the holidays.", "observation"),
    ("I finished the puzzle with a thousand pieces.", "observation"),
    ("The kids built a fort out of cardboard boxes.", "observation"),
    ("I lost my keys twice this week.", "observation"),
    ("We camped by the lake and the stars were amazing.", "observation"),
    ("How was your trip to the mountains?", "observation"),
    ("Did you finish the painting you told me about?", "observation"),
    ("That sounds like a lot of fun!", "observation"),
    ("Thanks for the recommendation, the book was great.", "observation"),
    ("I started volunteering at the animal shelter.", "observation"),
    ("My team won the local football tournament.", "observation"),
    ("It rained the whole weekend so we stayed in.", "observation"),
    ("I love hiking in the early morning.", "preference"),
    ("I prefer tea over coffee in the afternoon.", "preference"),
    ("My kids really love the beach.", "preference"),
    ("I'd rather stay home than go to a crowded bar.", "preference"),
    ("I'm not a fan of horror movies.", "preference"),
    ("We like to cook together on Sundays.", "preference"),
    ("I would love to visit Japan one day.", "preference"),
    ("She prefers painting landscapes to portraits.", "preference"),
    ("We decided to move to a bigger apartment next year.", "decision"),
    ("I've decided to go back to school for a counseling degree.", "decision"),
    ("We chose the smaller car because it is easier to park.", "decision"),
    ("We're going with the blue tiles for the bathroom.", "decision"),
)

CUE = re.compile(
    r"\b(?:avoid|must|never|always|should|need|prefer|do not use|don't use|required|"
    r"consider|not supported|you should|use)\b",
    re.IGNORECASE,
)
_NOISE_LINE = re.compile(r"^[\s.=_\-─│┬╭╮┌┐]*$")


def tool_lines(results: Iterable[str], rng: random.Random, others: int = 90) -> list[str]:
    """Distinct lines of the tool results: every line holding a cue word, plus ``others`` more,
    drawn with ``rng``; JSON (the Read and Edit payloads) and rules of dots are skipped."""
    seen: dict[str, None] = {}
    for text in results:
        for raw in text.splitlines():
            line = raw.strip()
            if len(line) < 16 or line.startswith(("{", "[", '"')) or _NOISE_LINE.match(line):
                continue
            if re.match(r"^\d+\t", line) or line.startswith("Exit code"):
                continue
            seen.setdefault(line, None)
    lines = list(seen)
    cued = [line for line in lines if CUE.search(line)]
    rest = [line for line in lines if not CUE.search(line)]
    picked = rng.sample(rest, min(others, len(rest)))
    return sorted(cued) + sorted(picked)


def labelled(
    corpus_facts: Sequence[tuple[str, str]], tool_results: Iterable[str], rng: random.Random
) -> list[dict[str, Any]]:
    """Every labelled item: ``{"text", "kind", "source"}``."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()

    def add(text: str, kind: str, source: str) -> None:
        if text not in seen:
            seen.add(text)
            rows.append({"text": text, "kind": kind, "source": source})

    for text, key in corpus_facts:
        add(text, fact_kind(key), "corpus")
    pairs = [(t, slot) for t in DECISION_TEMPLATES for slot in DECISION_SLOTS]
    for template, (a, b, c) in rng.sample(pairs, 50):
        text = template.format(a=a, b=b, c=c)
        add(text[0].upper() + text[1:], "decision", "coding")
    for kind, items in (
        ("constraint", CONSTRAINTS),
        ("preference", PREFERENCES),
        ("definition", DEFINITIONS),
        ("procedure", PROCEDURES),
        ("observation", CODING_OBSERVATIONS),
    ):
        for text in items:
            add(text, kind, "coding")
    for text, kind in CONVERSATION:
        add(text, kind, "conversation")
    for line in tool_lines(tool_results, rng):
        add(line, "observation", "tool")
    return rows
