"""The questions of the coding benchmark, with what answers them.

``facts``: fact keys of ``scenarios.py``; the gold events are every event tagged with them.
``sessions``: session keys; the gold events are those sessions' prose turns (user prompts and
assistant replies), for "what did we do on <day>?". ``project``: the project the question is
asked in, or None (asked across projects). ``now``: the reference time of a relative date. ``stale``: for a superseded decision, the
facts of the older one (reported: how often it ranks above the newer).

Kinds: decision, constraint, preference, definition, procedure, fix (asked in the session's
words), fix-paraphrase (the same problem in words the session never used), superseded (the
answer is the newer decision, the older one is a distractor), temporal, resume ("where did we
leave off?": the last day of work before ``now``), artifact (the answer is a command run or
an edit made: a tool's call or its result), cross-project.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.bench.coding.scenarios import PAY, TDK


@dataclass(frozen=True)
class Q:
    kind: str
    question: str
    project: str | None
    facts: tuple[str, ...] = ()
    sessions: tuple[str, ...] = ()
    now: str | None = None
    stale: tuple[str, ...] = ()  # superseded: the older decision, which must not answer


QUESTIONS: tuple[Q, ...] = (
    # decisions
    Q("decision", "What did we decide for database migrations?", PAY, ("p_alembic",)),
    Q("decision", "How are idempotency keys stored?", PAY, ("p_idem",)),
    Q("decision", "What lock does the payout scheduler use?", PAY, ("p_lock",)),
    Q("decision", "Where do the fraud check thresholds live?", PAY, ("p_fraud",)),
    Q("decision", "How do we parse command line arguments?", TDK, ("t_clap",)),
    Q("decision", "How do we test the rendering code?", TDK, ("t_snapshots",)),
    Q("decision", "How is the Linux binary built?", TDK, ("t_musl",)),
    Q("decision", "Will tdk 1.0 support plugins?", TDK, ("t_plugins",)),
    # superseded: the newer decision answers
    Q(
        "superseded",
        "Which message broker do we use for payment events?",
        PAY,
        ("p_broker_new",),
        stale=("p_broker_old",),
    ),
    Q(
        "superseded",
        "What did we decide about primary key ids?",
        PAY,
        ("p_ids_new",),
        stale=("p_ids_old",),
    ),
    Q(
        "superseded",
        "Which HTTP client calls the card processor?",
        PAY,
        ("p_http_new",),
        stale=("p_http_old",),
    ),
    Q(
        "superseded",
        "What format is the tdk config file?",
        TDK,
        ("t_config_new",),
        stale=("t_config_old",),
    ),
    Q(
        "superseded",
        "How do we draw the panes on screen?",
        TDK,
        ("t_render_new",),
        stale=("t_render_old",),
    ),
    Q(
        "superseded",
        "How are tdk releases built and uploaded?",
        TDK,
        ("t_release_new",),
        stale=("t_release_old",),
    ),
    # constraints
    Q("constraint", "How must money amounts be stored?", PAY, ("p_cents",)),
    Q(
        "constraint",
        "Which header is required on endpoints that move money?",
        PAY,
        ("p_idem_header",),
    ),
    Q(
        "constraint",
        "What is the rule for dropping columns in migrations?",
        PAY,
        ("p_compat_migrations",),
    ),
    Q("constraint", "How much can a refund be at most?", PAY, ("p_refund_limit",)),
    Q("constraint", "Which platforms does tdk have to run on?", TDK, ("t_platforms",)),
    Q("constraint", "How fast must tdk start?", TDK, ("t_startup",)),
    Q("constraint", "What minimum Rust version do we support?", TDK, ("t_msrv",)),
    # preferences
    Q(
        "preference",
        "How should tests be written, fixtures or TestCase classes?",
        PAY,
        ("p_pref_pytest",),
    ),
    Q("preference", "How do I like commits to be made?", PAY, ("p_pref_commits",)),
    Q("preference", "How should log messages be written?", PAY, ("p_pref_logs",)),
    Q(
        "preference",
        "Dataclasses or pydantic models in the domain layer?",
        PAY,
        ("p_pref_dataclass",),
    ),
    Q("preference", "Which error handling crates do we prefer?", TDK, ("t_pref_errors",)),
    Q("preference", "Is unwrap() fine in tdk code?", TDK, ("t_pref_unwrap",)),
    Q("preference", "What should the default theme be?", TDK, ("t_pref_theme",)),
    # definitions
    Q("definition", "What is a ghost refund?", PAY, ("p_def_ghost",)),
    Q("definition", "What is a settlement batch?", PAY, ("p_def_settlement",)),
    Q("definition", "What does dunning mean?", PAY, ("p_def_dunning",)),
    Q("definition", "What is the chargeback window?", PAY, ("p_def_chargeback",)),
    Q("definition", "What is a pane?", TDK, ("t_def_pane",)),
    Q("definition", "What is a tick?", TDK, ("t_def_tick",)),
    Q("definition", "What is the spool in tdk?", TDK, ("t_def_spool",)),
    # procedures
    Q("procedure", "How do we cut a release of the payments API?", PAY, ("p_proc_release",)),
    Q(
        "procedure",
        "How do I reproduce a processor webhook locally?",
        PAY,
        ("p_proc_webhook_local",),
    ),
    Q("procedure", "How do we rotate the processor API key?", PAY, ("p_proc_rotate",)),
    Q("procedure", "What are the steps to add a new widget?", TDK, ("t_proc_widget",)),
    Q("procedure", "How do I update the insta snapshots?", TDK, ("t_proc_snap",)),
    Q("procedure", "How do we publish a tdk release?", TDK, ("t_proc_release",)),
    # fixes, in the session's words
    Q(
        "fix",
        "How did we fix the UniqueViolation in test_refund_twice under pytest-xdist?",
        PAY,
        ("p_fix_xdist",),
    ),
    Q(
        "fix",
        "Why did webhook signature verification fail with invalid signature?",
        PAY,
        ("p_fix_hmac",),
    ),
    Q(
        "fix",
        "How did we resolve the Alembic Multiple head revisions error?",
        PAY,
        ("p_fix_heads",),
    ),
    Q(
        "fix",
        "Why did the settlement batch miss payments captured after midnight?",
        PAY,
        ("p_fix_tz",),
    ),
    Q("fix", "How did we fix the QueuePool limit reached errors?", PAY, ("p_fix_pool",)),
    Q(
        "fix",
        "How did we fix the terminal staying in raw mode after a panic?",
        TDK,
        ("t_fix_rawmode",),
    ),
    Q("fix", "Why was tdk using 100% CPU when idle?", TDK, ("t_fix_cpu",)),
    Q(
        "fix",
        "How did we fix misaligned columns with emoji and CJK characters?",
        TDK,
        ("t_fix_width",),
    ),
    # fixes, paraphrased: words the session never used
    Q(
        "fix-paraphrase",
        "Why did one check break only when the whole battery ran across several parallel processes, and what cured it?",
        PAY,
        ("p_fix_xdist",),
    ),
    Q(
        "fix-paraphrase",
        "The card company's notifications were refused as forged; what was wrong?",
        PAY,
        ("p_fix_hmac",),
    ),
    Q(
        "fix-paraphrase",
        "After combining lines of development, the database schema update would not apply; how was it sorted out?",
        PAY,
        ("p_fix_heads",),
    ),
    Q(
        "fix-paraphrase",
        "Why were some late-night card charges left out of the nightly export for the bank?",
        PAY,
        ("p_fix_tz",),
    ),
    Q(
        "fix-paraphrase",
        "Under heavy traffic the service hung because database handles ran out; what leaked?",
        PAY,
        ("p_fix_pool",),
    ),
    Q(
        "fix-paraphrase",
        "After a crash my shell stopped showing what I typed; how was that repaired?",
        TDK,
        ("t_fix_rawmode",),
    ),
    Q(
        "fix-paraphrase",
        "Why did the dashboard burn a whole processor core while the display stayed unchanged?",
        TDK,
        ("t_fix_cpu",),
    ),
    Q(
        "fix-paraphrase",
        "Rows went crooked with Japanese filenames; how was it solved?",
        TDK,
        ("t_fix_width",),
    ),
    # temporal
    Q("temporal", "What did we do on 2026-07-14?", PAY, sessions=("p12",)),
    Q("temporal", "What did we do on 2026-07-14?", TDK, sessions=("t08",)),
    Q("temporal", "What did we work on on 2026-06-09?", PAY, sessions=("p07",)),
    Q("temporal", "What did we work on on 2026-05-27?", TDK, sessions=("t03",)),
    Q("temporal", "What did we work on on 2026-08-12?", PAY, sessions=("p15",)),
    Q("temporal", "What did we do last week?", PAY, sessions=("p23",), now="2026-10-30T17:00:00Z"),
    Q("temporal", "What did we do last week?", TDK, sessions=("t19",), now="2026-10-30T17:00:00Z"),
    Q("temporal", "What did we do yesterday?", TDK, sessions=("t15",), now="2026-09-17T09:00:00Z"),
    # resume: no period named, the last day of work (before "now") meant
    Q("resume", "Where did we leave off?", PAY, sessions=("p24",), now="2026-11-02T09:00:00Z"),
    Q("resume", "What were we working on?", TDK, sessions=("t20",), now="2026-11-02T09:00:00Z"),
    Q("resume", "What did we do last session?", PAY, sessions=("p12",), now="2026-07-20T09:00:00Z"),
    Q("resume", "Where did we leave off?", TDK, sessions=("t09",), now="2026-07-25T09:00:00Z"),
    Q("resume", "Catch me up.", None, sessions=("t20",), now="2026-11-02T09:00:00Z"),
    # artifacts: the answer is a command that was run or an edit that was made, not words
    Q("artifact", "Which command showed the rejected webhooks in staging?", PAY, ("p_cmd_logs",)),
    Q("artifact", "Which command merged the two Alembic heads?", PAY, ("p_cmd_merge",)),
    Q(
        "artifact",
        "Show the code change in the webhook handler that fixed the signatures.",
        PAY,
        ("p_edit_hmac",),
    ),
    Q(
        "artifact",
        "What did we change in conftest.py for parallel test runs?",
        PAY,
        ("p_edit_conftest",),
    ),
    Q(
        "artifact",
        "Which command measures how fast tdk starts from a cold cache?",
        TDK,
        ("t_cmd_hyperfine",),
    ),
    Q("artifact", "How did we see tdk's CPU usage from the shell?", TDK, ("t_cmd_top",)),
    Q(
        "artifact",
        "What was the code change in app.rs that stopped the busy loop?",
        TDK,
        ("t_edit_poll",),
    ),
    Q("artifact", "Show the diff that installed the panic hook.", TDK, ("t_edit_hook",)),
    # across projects
    Q("cross-project", "How do we publish a release?", None, ("p_proc_release", "t_proc_release")),
    Q("cross-project", "Which project stores money as integer cents?", None, ("p_cents",)),
    Q("cross-project", "Where did we decide to ship static musl binaries?", None, ("t_musl",)),
    Q("cross-project", "What carries the payment events now?", None, ("p_broker_new",)),
    Q("cross-project", "Which crates do we prefer for error handling?", None, ("t_pref_errors",)),
)
