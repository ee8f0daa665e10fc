"""The sessions of the coding corpus, written out: two projects, May to October 2026.

``payments-api``: a payments API in Python (FastAPI, Postgres, Alembic). ``termdeck``: ``tdk``, a
terminal dashboard written in Rust. Each session is a function that plays a task through a
``SessionLog``: prompts, replies, file reads, edits with diffs, test and lint runs with their
real-looking output (failures included). What people say in them is tagged with a fact key
(``SessionLog.user(text, key)``): the questions of ``questions.py`` are answered by the events
of their keys. Everything random (timings, test counts, which lint rule fires, ids) comes from
the session's seeded ``random.Random``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tests.bench.coding.builder import SessionLog
from tests.bench.coding.tooling import (
    MISC_OUTPUT,
    cargo_test_output,
    clippy_output,
    mypy_output,
    pytest_output,
    ruff_output,
)

PAY = "payments-api"
TDK = "termdeck"
CWD = {PAY: "/home/dev/payments-api", TDK: "/home/dev/termdeck"}

PY_FILES = (
    "src/payments/api/refunds.py",
    "src/payments/api/payments.py",
    "src/payments/ledger.py",
    "src/payments/settlement.py",
    "src/payments/webhooks.py",
    "src/payments/db.py",
    "src/payments/idempotency.py",
    "src/payments/processor.py",
    "src/payments/events.py",
)
PY_TESTS = ("tests/test_refunds.py", "tests/test_payments.py", "tests/test_settlement.py")
RS_FILES = (
    "src/main.rs",
    "src/app.rs",
    "src/ui/pane.rs",
    "src/ui/layout.rs",
    "src/widgets/mod.rs",
    "src/widgets/cpu.rs",
    "src/config.rs",
    "src/terminal.rs",
)


def py_source(s: SessionLog, path: str) -> str:
    """A plausible Python module of the payments API."""
    name = path.rsplit("/", 1)[-1].removesuffix(".py")
    n = s.rng.randint(2, 9)
    return f'''"""{name.capitalize()} of the payments API."""

from __future__ import annotations

import structlog
from fastapi import APIRouter, Depends, Header, HTTPException
from sqlalchemy.ext.asyncio import AsyncSession

from payments.db import get_session
from payments.models import Payment, Refund

log = structlog.get_logger(__name__)
router = APIRouter(prefix="/v1/{name}")


@router.post("/{{payment_id}}", status_code=201)
async def create_{name}(
    payment_id: str,
    body: dict,
    idempotency_key: str = Header(alias="Idempotency-Key"),
    session: AsyncSession = Depends(get_session),
) -> dict:
    payment = await session.get(Payment, payment_id)
    if payment is None:
        raise HTTPException(404, "no such payment")
    if body.get("amount_cents", 0) > payment.amount_cents:
        raise HTTPException(422, "amount above the captured amount")
    log.info("{name}.created", payment_id=payment_id, attempt={n})
    return {{"id": payment_id, "status": "pending"}}
'''


def rs_source(s: SessionLog, path: str) -> str:
    name = path.rsplit("/", 1)[-1].removesuffix(".rs")
    return f"""use std::time::Duration;

use anyhow::{{Context, Result}};
use crossterm::event::{{self, Event, KeyCode}};

use crate::app::App;
use crate::ui::pane::Pane;

pub struct {name.capitalize()}State {{
    pub panes: Vec<Pane>,
    pub tick: Duration,
    pub selected: usize,
}}

impl {name.capitalize()}State {{
    pub fn new(tick_ms: u64) -> Self {{
        Self {{ panes: Vec::new(), tick: Duration::from_millis(tick_ms), selected: 0 }}
    }}

    pub fn handle(&mut self, app: &mut App) -> Result<bool> {{
        if event::poll(self.tick).context("polling terminal events")? {{
            if let Event::Key(key) = event::read()? {{
                if key.code == KeyCode::Char('q') {{
                    return Ok(false);
                }}
                app.on_key(key, {s.rng.randint(1, 9)});
            }}
        }}
        Ok(true)
    }}
}}
"""


# --------------------------------------------------------------------------------------------
# Routine work: reading, editing, testing, linting
# --------------------------------------------------------------------------------------------


def py_work(
    s: SessionLog, path: str, old: str, new: str, lint: int = 0, types: int = 0, warn: int = 0
) -> None:
    s.read(path, py_source(s, path))
    s.edit(path, old, new)
    s.bash("uv run pytest -q", pytest_output(s.rng, PY_TESTS, warnings=warn), 0, "Run the tests")
    out, code = ruff_output(s.rng, PY_FILES, lint)
    s.bash("uv run ruff check .", out, code, "Lint")
    if lint:
        s.say(
            "Ruff flags a few style findings; none of them change behaviour, I fixed the "
            "auto-fixable ones with --fix and left the rest for the cleanup ticket."
        )
        s.bash("uv run ruff check --fix .", "Found 2 errors (2 fixed, 0 remaining).", 0, "Fix")
    out, code = mypy_output(s.rng, PY_FILES, types)
    s.bash("uv run mypy src", out, code, "Type-check")
    if types:
        s.say("Mypy complains about annotations; I added the missing types.")
        s.bash("uv run mypy src", mypy_output(s.rng, PY_FILES, 0)[0], 0, "Type-check again")


def rs_work(s: SessionLog, path: str, old: str, new: str, clippy: int = 0) -> None:
    s.read(path, rs_source(s, path))
    s.edit(path, old, new)
    out, code = cargo_test_output(s.rng, "tdk")
    s.bash("cargo test", out, code, "Run the tests")
    out, code = clippy_output(s.rng, RS_FILES, clippy)
    s.bash("cargo clippy --all-targets", out, code, "Lint")
    if clippy:
        s.say("Clippy has a few warnings in code I did not touch; I left them for now.")


# --------------------------------------------------------------------------------------------
# payments-api
# --------------------------------------------------------------------------------------------


def p01(s: SessionLog) -> None:
    s.user(
        "Let's start the payments API. FastAPI app, Postgres behind SQLAlchemy async, and a "
        "first table for payments. What do you suggest for the schema?"
    )
    s.say(
        "I'd start with a payments table holding the merchant, the amount, the currency, the "
        "status and timestamps, and an Alembic environment so the schema is versioned from day one."
    )
    s.user(
        "We'll use Alembic for migrations, not hand-written SQL files: autogenerate a first "
        "revision from the models and review it by hand.",
        "p_alembic",
    )
    s.user(
        "Let's use UUIDv4 primary keys for every table, generated in the application.",
        "p_ids_old",
    )
    s.user(
        "And one rule from finance: amounts must always be stored as integer cents in bigint "
        "columns; never use floats for money.",
        "p_cents",
    )
    s.say(
        "Understood: amount_cents is a BIGINT, the currency a three-letter ISO code, ids are "
        "UUIDv4. I'll create the model and the first Alembic revision."
    )
    s.bash(
        "uv run alembic revision --autogenerate -m 'payments table'",
        "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
        "INFO  [alembic.autogenerate.compare] Detected added table 'payments'\n"
        "  Generating /home/dev/payments-api/migrations/versions/3f9a2c1d7e4b_payments_table.py"
        " ...  done",
        0,
        "Create the first revision",
    )
    py_work(
        s,
        "src/payments/db.py",
        "amount = Column(Numeric(12, 2))",
        "amount_cents = Column(BigInteger, nullable=False)",
        lint=2,
    )
    s.say("The skeleton is in place: app, settings, the payments model and its migration.")


def p02(s: SessionLog) -> None:
    s.user(
        "Other services need to know when a payment is captured or refunded. How should we "
        "publish payment events?"
    )
    s.say(
        "Two options: a message broker, or an outbox table polled by consumers. A broker keeps "
        "consumers decoupled from our database."
    )
    s.user(
        "We go with RabbitMQ for the payment events: the ops team already runs it, and we "
        "publish to a topic exchange called payments.events.",
        "p_broker_old",
    )
    s.say(
        "I'll add a publisher using aio-pika that sends payment.captured and payment.refunded "
        "to the payments.events exchange after the transaction commits.",
        "p_broker_old",
    )
    s.user(
        "For the tests: I prefer plain pytest fixtures over unittest.TestCase classes, so "
        "please don't use setUp methods.",
        "p_pref_pytest",
    )
    py_work(
        s,
        "src/payments/events.py",
        "def publish(event):\n    pass",
        "async def publish(channel, event: PaymentEvent) -> None:\n"
        "    await channel.default_exchange.publish(event.to_message(), routing_key=event.kind)",
        types=1,
    )
    s.say("Payment events are published to RabbitMQ after commit; tests use pytest fixtures.")


def p03(s: SessionLog) -> None:
    s.user(
        "Clients retry on timeouts and we charged a card twice in the sandbox. We need "
        "idempotency on the capture endpoint."
    )
    s.say(
        "The usual approach is an Idempotency-Key header: the first request with a key stores "
        "its response, and a retry with the same key gets the stored response back."
    )
    s.user(
        "Decision: idempotency keys live in an idempotency_keys table with a 24-hour TTL, "
        "keyed by merchant id and key.",
        "p_idem",
    )
    s.user(
        "Every endpoint that moves money must require an Idempotency-Key header; reject the "
        "request with a 400 when it is missing.",
        "p_idem_header",
    )
    py_work(
        s,
        "src/payments/idempotency.py",
        "async def remember(key):\n    ...",
        "async def remember(session, merchant_id: str, key: str, response: dict) -> None:\n"
        "    await session.execute(insert(IdempotencyKey).values(merchant_id=merchant_id, "
        "key=key, response=response))",
        lint=3,
    )
    s.say(
        "Capture, refund and payout endpoints now require the header, and a replay returns "
        "the stored response with the original status code."
    )


def p04(s: SessionLog) -> None:
    s.user("Add POST /v1/refunds/{payment_id} for full refunds.")
    s.say("I'll add the route, a Refund model and a ledger entry per refund.")
    py_work(
        s,
        "src/payments/api/refunds.py",
        "# TODO refunds",
        "@router.post('/{payment_id}', status_code=201)\nasync def create_refund(...):",
        lint=1,
    )
    s.user(
        "Careful with the processor call: a ghost refund refers to a refund row that exists "
        "in our ledger but was never sent to the processor. We had those in the old system.",
        "p_def_ghost",
    )
    s.say(
        "Then I'll write the refund row in status pending, call the processor, and only mark "
        "it sent when the processor answers, so a crash leaves a pending row we can retry."
    )
    s.user(
        "Good. I'd rather have small commits, one per logical change, with the ticket number "
        "in the subject.",
        "p_pref_commits",
    )
    s.bash(
        "git commit -m 'PAY-112 refunds: model and endpoint'",
        "[main 8c1e2f0] PAY-112 refunds: model and endpoint\n 4 files changed, 162 insertions(+)",
        0,
        "Commit",
    )


def p05(s: SessionLog) -> None:
    s.user(
        "test_refund_twice fails on CI but passes on my machine. CI runs pytest -n 4. Can you look?"
    )
    s.bash(
        "uv run pytest -q -n 4 tests/test_refunds.py",
        pytest_output(
            s.rng,
            PY_TESTS,
            [
                (
                    "tests/test_refunds.py::test_refund_twice",
                    "E   sqlalchemy.exc.IntegrityError: (psycopg.errors.UniqueViolation) "
                    "duplicate key value violates unique constraint "
                    '"idempotency_keys_pkey"\nE   DETAIL:  Key (merchant_id, key)=(m_1, '
                    "refund-1) already exists.",
                )
            ],
        ),
        1,
        "Reproduce with four workers",
    )
    s.say(
        "I can reproduce it with -n 4. My first guess is a race inside the test; I'll add a "
        "retry around the second refund call."
    )
    s.edit(
        "tests/test_refunds.py",
        "second = client.post(url, headers=headers)",
        "second = retry(lambda: client.post(url, headers=headers), attempts=3)",
    )
    s.bash(
        "uv run pytest -q -n 4 tests/test_refunds.py",
        pytest_output(
            s.rng,
            PY_TESTS,
            [
                (
                    "tests/test_refunds.py::test_refund_twice",
                    "E   psycopg.errors.UniqueViolation: duplicate key value violates unique "
                    'constraint "idempotency_keys_pkey"',
                )
            ],
        ),
        1,
        "Run again",
    )
    s.say("The retry does not help, so it is not a timing race. Let me try a sleep to be sure.")
    s.bash(
        "uv run pytest -q -n 4 tests/test_refunds.py -p no:randomly",
        pytest_output(
            s.rng,
            PY_TESTS,
            [("tests/test_refunds.py::test_refund_twice", "E   UniqueViolation")],
        ),
        1,
        "Without random order",
    )
    s.say(
        "Found the cause: all pytest-xdist workers share one test database, and every test "
        "uses the same merchant m_1 and idempotency key refund-1, so another worker's test "
        "had already stored that key.",
        "p_fix_xdist",
    )
    s.edit(
        "tests/conftest.py",
        'DB_NAME = "payments_test"',
        'DB_NAME = f"payments_test_{worker_id}"  # one database per xdist worker',
        tags=("p_edit_conftest",),
    )
    s.bash(
        "uv run pytest -q -n 4",
        pytest_output(s.rng, PY_TESTS),
        0,
        "Full suite on four workers",
    )
    s.say(
        "Fixed: the conftest now creates one database per xdist worker from the worker_id "
        "fixture, and I removed the retry again. The whole suite passes with -n 4.",
        "p_fix_xdist",
    )


def p06(s: SessionLog) -> None:
    s.user(
        "Time to call the real card processor for captures. Sandbox credentials are in 1Password."
    )
    s.user(
        "We use requests for calls to the card processor, with a 10 second timeout and "
        "three retries on connection errors.",
        "p_http_old",
    )
    s.say(
        "I'll wrap it in a ProcessorClient class around a requests.Session with an HTTPAdapter "
        "for the retries.",
        "p_http_old",
    )
    py_work(
        s,
        "src/payments/processor.py",
        "def capture(payment):\n    raise NotImplementedError",
        "def capture(self, payment: Payment) -> CaptureResult:\n"
        "    r = self.session.post(f'{self.base}/captures', json=payment.as_capture(), "
        "timeout=10)",
        lint=2,
        warn=1,
    )
    s.user(
        "Next week we do settlement. A settlement batch is what we call the set of captured "
        "payments we send to the acquirer in one nightly file.",
        "p_def_settlement",
    )
    s.say("Noted; I'll model SettlementBatch with its payments and the file it produced.")


def p07(s: SessionLog) -> None:
    s.user(
        "Webhooks from the processor fail in staging: every callback gets 401 invalid "
        "signature. The secret is right, I checked twice."
    )
    s.bash(
        "kubectl logs deploy/payments-api -n staging --since=1h | grep webhook | tail -5",
        "\n".join(
            f'{{"event": "webhook.rejected", "reason": "invalid signature", "delivery": '
            f'"dlv_{s.rng.getrandbits(40):010x}", "level": "warning"}}'
            for _ in range(5)
        ),
        0,
        "Look at the logs",
        tags=("p_cmd_logs",),
    )
    s.say("Let me check the secret encoding first: maybe it is base64 and we use it raw.")
    s.edit(
        "src/payments/webhooks.py",
        "secret = settings.webhook_secret.encode()",
        "secret = base64.b64decode(settings.webhook_secret)",
    )
    s.bash(
        "uv run pytest -q tests/test_webhooks.py",
        pytest_output(
            s.rng,
            PY_TESTS,
            [("tests/test_webhooks.py::test_valid_signature", "E   assert 401 == 200")],
        ),
        1,
        "Test the webhook",
    )
    s.say("Not the encoding; I reverted that. Comparing the signed bytes with what we hash now.")
    s.say(
        "Cause: we computed the HMAC over json.dumps(await request.json()), a re-serialized "
        "body with different key order and spacing, while the processor signs the raw body "
        "bytes it sent.",
        "p_fix_hmac",
    )
    s.edit(
        "src/payments/webhooks.py",
        "payload = json.dumps(await request.json()).encode()",
        "payload = await request.body()  # the exact bytes the processor signed",
        tags=("p_edit_hmac",),
    )
    s.bash("uv run pytest -q tests/test_webhooks.py", pytest_output(s.rng, PY_TESTS), 0, "Test")
    s.say(
        "Fixed: the webhook handler verifies the signature against the raw request body, and "
        "hmac.compare_digest compares it. Staging accepts the callbacks again.",
        "p_fix_hmac",
    )


def p08(s: SessionLog) -> None:
    s.user("Let's automate releases a bit. How do we release today?")
    s.say("Today it is manual: someone edits the version and pushes. I'll write it down.")
    s.user(
        "To cut a release: first bump the version in pyproject.toml, then run make changelog, "
        "then tag vX.Y.Z and push the tag; CI deploys the tag to staging.",
        "p_proc_release",
    )
    s.say("I added that to RELEASING.md and a make release target that checks the tag format.")
    s.user(
        "Also the payout scheduler runs on two pods now. We go with Postgres advisory locks "
        "for the payout scheduler instead of a Redis lock: one less moving part.",
        "p_lock",
    )
    py_work(
        s,
        "src/payments/ledger.py",
        "async def run_payouts(session):",
        "async def run_payouts(session):\n"
        "    got = await session.scalar(text('SELECT pg_try_advisory_xact_lock(4242)'))\n"
        "    if not got:\n        return",
        lint=2,
        types=1,
    )


def p09(s: SessionLog) -> None:
    s.user("I merged the chargebacks branch and now migrations do not run. Please fix.")
    s.bash(
        "uv run alembic upgrade head",
        "ERROR [alembic.util.messaging] Multiple head revisions are present for given argument "
        "'head'; please specify a specific target revision, '<branchname>@head' to narrow to a "
        "specific head, or 'heads' for all heads\n"
        "  FAILED: Multiple head revisions are present for given argument 'head'; please "
        "specify a specific target revision, '<branchname>@head' to narrow to a specific head, "
        "or 'heads' for all heads",
        255,
        "Upgrade",
    )
    s.say("Trying to upgrade to both heads at once first.")
    s.bash(
        "uv run alembic upgrade heads",
        "ERROR [alembic.util.messaging] Requested revision 9b2e4c71 overlaps with other "
        "requested revisions a71f03d2\n  FAILED: Requested revision overlaps",
        255,
        "Upgrade all heads",
    )
    s.say(
        "Cause: the chargebacks branch and main each added a revision on top of the same "
        "parent, so Alembic sees two heads.",
        "p_fix_heads",
    )
    s.bash(
        "uv run alembic merge -m 'merge chargebacks' 9b2e4c71 a71f03d2",
        "  Generating /home/dev/payments-api/migrations/versions/c4d5e6f70812_merge_chargebacks"
        ".py ...  done",
        0,
        "Merge the heads",
        tags=("p_cmd_merge",),
    )
    s.bash(
        "uv run alembic upgrade head",
        "INFO  [alembic.runtime.migration] Running upgrade 9b2e4c71, a71f03d2 -> c4d5e6f70812, "
        "merge chargebacks",
        0,
        "Upgrade",
    )
    s.say(
        "Fixed with a merge revision (alembic merge of the two heads); upgrade head works again.",
        "p_fix_heads",
    )
    s.user(
        "Thanks. Rule for the future: migrations must be backward compatible, so we never drop "
        "a column in the same release that stops reading it.",
        "p_compat_migrations",
    )


def p10(s: SessionLog) -> None:
    s.user(
        "Finance says the settlement batch for June 30 is short by 37 payments, all captured "
        "between midnight and 2 am."
    )
    s.read("src/payments/settlement.py", py_source(s, "src/payments/settlement.py"))
    s.say("Maybe the query's upper bound is exclusive where it should be inclusive; checking.")
    s.edit("src/payments/settlement.py", "captured_at < cutoff", "captured_at <= cutoff")
    s.bash(
        "uv run pytest -q tests/test_settlement.py",
        pytest_output(
            s.rng,
            PY_TESTS,
            [
                (
                    "tests/test_settlement.py::test_batch_includes_0130_capture",
                    "E   AssertionError: assert 'pay_0130' in ['pay_2250', 'pay_2359']",
                )
            ],
            warnings=1,
        ),
        1,
        "Settlement tests",
    )
    s.say(
        "Not that. The cause: the cutoff is built with datetime.utcnow().date() while the "
        "acquirer's day is Europe/Berlin, so payments captured after local midnight (22:00 to "
        "24:00 UTC in summer) fall into the wrong batch and the next run skips them.",
        "p_fix_tz",
    )
    s.edit(
        "src/payments/settlement.py",
        "cutoff = datetime.combine(datetime.utcnow().date(), time.min)",
        "cutoff = datetime.combine(day, time.min, tzinfo=ACQUIRER_TZ).astimezone(UTC)",
    )
    s.bash("uv run pytest -q tests/test_settlement.py", pytest_output(s.rng, PY_TESTS), 0, "Test")
    s.say(
        "Fixed: the settlement window is computed with timezone-aware datetimes in the "
        "acquirer's zone and converted to UTC; the 37 payments go into a catch-up batch.",
        "p_fix_tz",
    )


def p11(s: SessionLog) -> None:
    s.user("Subscriptions next. Failed renewals need dunning.")
    s.user(
        "Dunning means retrying a failed subscription charge on a schedule and emailing the "
        "customer each time.",
        "p_def_dunning",
    )
    s.say("I'll model a DunningAttempt per retry with the schedule 1, 3, 7 days.")
    s.user(
        "One more thing about logs: I like structured logs, use structlog with key-value "
        "fields and no f-strings inside log messages.",
        "p_pref_logs",
    )
    py_work(
        s,
        "src/payments/api/payments.py",
        'log.info(f"renewal failed for {sub.id}")',
        'log.info("renewal.failed", subscription_id=sub.id, attempt=attempt)',
        lint=2,
    )


def p12(s: SessionLog) -> None:
    s.user("Implement the dunning scheduler job with the 1, 3, 7 day schedule.")
    s.say("I'll add a job that picks due attempts, charges them and sends the email.")
    py_work(
        s,
        "src/payments/ledger.py",
        "DUNNING_DAYS = ()",
        "DUNNING_DAYS = (1, 3, 7)",
        types=2,
    )
    s.user("How do I test the processor's failure webhook locally?")
    s.user(
        "Never mind, I remember: to reproduce a webhook locally, first start the stub with "
        "make stub-processor, then replay the saved payload with scripts/replay_webhook.py "
        "--file payload.json.",
        "p_proc_webhook_local",
    )
    s.bash(
        "make stub-processor & sleep 2 && uv run python scripts/replay_webhook.py --file "
        "fixtures/charge_failed.json",
        "stub-processor listening on :9911\nPOST /v1/webhooks/processor -> 200 "
        '{"status":"accepted"}',
        0,
        "Replay the failure webhook",
    )
    s.say("The failure webhook schedules the first dunning attempt for tomorrow, as intended.")


def p13(s: SessionLog) -> None:
    s.user(
        "Under the load test the API starts timing out after a minute. Errors say "
        "QueuePool limit of size 5 overflow 10 reached."
    )
    s.bash(
        "uv run locust -f load/capture.py --headless -u 200 -r 20 -t 2m",
        "Type  Name            # reqs  # fails |  Avg   Min   Max  Med | req/s\n"
        "POST  /v1/captures    18211   2904(15.95%) |  912    41 30012  420 | 151.7\n"
        "sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached, "
        "connection timed out, timeout 30.00",
        1,
        "Load test",
    )
    s.say("First attempt: raise the pool to 20 with 20 overflow.")
    s.edit("src/payments/db.py", "pool_size=5, max_overflow=10", "pool_size=20, max_overflow=20")
    s.bash(
        "uv run locust -f load/capture.py --headless -u 200 -r 20 -t 2m",
        "sqlalchemy.exc.TimeoutError: QueuePool limit of size 20 overflow 20 reached, "
        "connection timed out, timeout 30.00",
        1,
        "Load test again",
    )
    s.say(
        "A bigger pool only delays it, so connections leak. Cause: the background task that "
        "publishes the payment event opens a session with async_sessionmaker() and never "
        "closes it when the publish fails.",
        "p_fix_pool",
    )
    s.edit(
        "src/payments/events.py",
        "session = SessionLocal()\n    await publish_after_commit(session, event)",
        "async with SessionLocal() as session:\n        await publish_after_commit(session, event)",
    )
    s.bash(
        "uv run locust -f load/capture.py --headless -u 200 -r 20 -t 2m",
        "POST  /v1/captures    30412   0(0.00%) |  61    22   310   48 | 253.4",
        0,
        "Load test after the fix",
    )
    s.say(
        "Fixed: the background publisher uses async with for its session, so it is always "
        "returned to the pool; I set the pool back to 5 plus 10.",
        "p_fix_pool",
    )
    s.say(
        "Load test after the fix: p99 dropped from 420 ms to 95 ms at 200 users, with no "
        "failed requests.",
        "p_outcome_pool",
    )


def p14(s: SessionLog) -> None:
    s.user("The processor asks us to rotate the API key every 90 days. Write down how.")
    s.user(
        "To rotate the processor API key: create the new key in the processor dashboard, "
        "add it as PROCESSOR_KEY_NEXT, deploy, then swap it into PROCESSOR_KEY and remove "
        "the old key from the dashboard.",
        "p_proc_rotate",
    )
    s.say("I documented it in docs/runbooks/rotate-processor-key.md and added the setting.")
    py_work(
        s,
        "src/payments/processor.py",
        "key = settings.processor_key",
        "key = settings.processor_key_next or settings.processor_key",
        lint=1,
    )


def p15(s: SessionLog) -> None:
    s.user("The processor client blocks the event loop; captures serialize behind each other.")
    s.say("Right: requests is synchronous, every call blocks the worker for its whole duration.")
    s.user(
        "We're switching from requests to httpx for the processor client: we need async calls "
        "and HTTP/2, and requests is gone from the codebase after this.",
        "p_http_new",
    )
    s.say(
        "I'll rewrite ProcessorClient on httpx.AsyncClient with http2=True and a transport "
        "with retries, and drop requests from the dependencies.",
        "p_http_new",
    )
    py_work(
        s,
        "src/payments/processor.py",
        "self.session = requests.Session()",
        "self.client = httpx.AsyncClient(base_url=base, http2=True, timeout=10)",
        lint=3,
        types=2,
    )
    s.bash("uv remove requests", "Resolved 61 packages in 412ms\n - requests==2.32.3", 0, "Drop it")


def p16(s: SessionLog) -> None:
    s.user("Support wants partial refunds.")
    s.user(
        "A refund can never exceed the captured amount minus what was already refunded.",
        "p_refund_limit",
    )
    s.say("I'll sum the existing refunds in the same transaction, with the payment row locked.")
    py_work(
        s,
        "src/payments/api/refunds.py",
        "if body.amount_cents > payment.amount_cents:",
        "if body.amount_cents > payment.amount_cents - already_refunded:",
        lint=2,
        warn=1,
    )


def p17(s: SessionLog) -> None:
    s.user("Ledger pagination by created_at plus id is slow and awkward with random UUIDs.")
    s.user(
        "From now on new tables use ULIDs instead of UUIDv4 for primary keys: they sort by "
        "creation time, which the ledger pagination needs.",
        "p_ids_new",
    )
    s.say(
        "I'll add python-ulid, a Ulid column type, and use it for ledger_entries first; the "
        "existing UUID tables stay as they are.",
        "p_ids_new",
    )
    py_work(
        s,
        "src/payments/ledger.py",
        "id = Column(UUID, primary_key=True, default=uuid4)",
        "id = Column(Ulid, primary_key=True, default=new_ulid)",
        types=1,
    )


def p18(s: SessionLog) -> None:
    s.user(
        "RabbitMQ lost events during the last failover, and the analytics team wants to "
        "replay a week of payment events."
    )
    s.say(
        "A classic exchange cannot replay. JetStream keeps a stream, replays from any point "
        "and de-duplicates by message id."
    )
    s.user(
        "We replace RabbitMQ with NATS JetStream for the payment events: JetStream gives us "
        "replay and de-duplication by message id, and we retire the RabbitMQ exchange by "
        "October.",
        "p_broker_new",
    )
    s.say(
        "I'll publish to the PAYMENTS stream on subjects payments.captured and "
        "payments.refunded with Nats-Msg-Id set to the payment event id.",
        "p_broker_new",
    )
    py_work(
        s,
        "src/payments/events.py",
        "await channel.default_exchange.publish(event.to_message(), routing_key=event.kind)",
        "await js.publish(f'payments.{event.kind}', event.encode(), "
        "headers={'Nats-Msg-Id': event.id})",
        lint=2,
    )


def p19(s: SessionLog) -> None:
    s.user("Move the consumers of payment events over to JetStream durable consumers.")
    py_work(
        s,
        "src/payments/events.py",
        "queue = await channel.declare_queue('ledger')",
        "sub = await js.pull_subscribe('payments.>', durable='ledger')",
        lint=1,
        types=1,
    )
    s.say("The ledger and the notifier now read from JetStream; both ack after their commit.")
    s.bash("git pull", MISC_OUTPUT[0], 128, "Update the branch")
    s.bash("git pull --rebase", "Successfully rebased and updated refs/heads/main.", 0, "Rebase")


def p20(s: SessionLog) -> None:
    s.user("Finance wants a CSV export of the ledger per month.")
    s.user(
        "In the domain layer, prefer dataclasses with slots for value objects instead of "
        "pydantic models; pydantic stays at the API edge.",
        "p_pref_dataclass",
    )
    py_work(
        s,
        "src/payments/ledger.py",
        "class LedgerRow(BaseModel):",
        "@dataclass(frozen=True, slots=True)\nclass LedgerRow:",
        lint=3,
        warn=1,
    )
    s.say("GET /v1/ledger/export?month=2026-09 streams the CSV; rows are dataclasses.")


def p21(s: SessionLog) -> None:
    s.user("Upgrade the dependencies, FastAPI and SQLAlchemy mostly.")
    s.bash(
        "uv lock --upgrade",
        "Resolved 61 packages in 2.10s\nUpdated fastapi v0.115.6 -> v0.121.2\n"
        "Updated sqlalchemy v2.0.36 -> v2.0.44\n" + MISC_OUTPUT[3],
        0,
        "Upgrade",
    )
    out, code = ruff_output(s.rng, PY_FILES, 5)
    s.bash("uv run ruff check .", out, code, "Lint")
    out, code = mypy_output(s.rng, PY_FILES, 3)
    s.bash("uv run mypy src", out, code, "Type-check")
    s.bash("uv run pytest -q", pytest_output(s.rng, PY_TESTS, warnings=2), 0, "Tests")
    s.say("Everything still passes; the new lint and typing findings are style only.")


def p22(s: SessionLog) -> None:
    s.user("We need basic fraud checks before capture: velocity and amount thresholds.")
    s.user(
        "We go with a rules table in Postgres for the fraud checks rather than a hard-coded "
        "list, so support can change thresholds without a deploy.",
        "p_fraud",
    )
    s.say("I'll add fraud_rules (kind, threshold, window) and evaluate them before capture.")
    py_work(
        s,
        "src/payments/api/payments.py",
        "await capture(payment)",
        "await check_fraud_rules(session, payment)\n    await capture(payment)",
        lint=2,
        types=1,
    )


def p23(s: SessionLog) -> None:
    s.user("Chargebacks: record disputes from the processor's dispute webhook.")
    s.user(
        "A chargeback window is the 120 days during which a cardholder can dispute a payment; "
        "we keep the evidence until it closes.",
        "p_def_chargeback",
    )
    py_work(
        s,
        "src/payments/webhooks.py",
        "HANDLERS = {'charge.failed': on_failed}",
        "HANDLERS = {'charge.failed': on_failed, 'dispute.created': on_dispute}",
        lint=1,
    )
    s.say("Disputes are stored with their deadline and the payment is flagged as disputed.")


def p24(s: SessionLog) -> None:
    s.user("Clean up: remove the last aio-pika code and the RabbitMQ settings.")
    s.bash("git grep -n aio_pika", "src/payments/settings.py:14:import aio_pika", 0, "Find it")
    py_work(
        s,
        "src/payments/settings.py",
        "rabbitmq_url: str = 'amqp://localhost'",
        "nats_url: str = 'nats://localhost:4222'",
        lint=2,
    )
    s.say("RabbitMQ is fully gone: no code, no settings, no dependency.")


# --------------------------------------------------------------------------------------------
# termdeck (tdk)
# --------------------------------------------------------------------------------------------


def t01(s: SessionLog) -> None:
    s.user(
        "New project: tdk, a terminal dashboard that shows CPU, logs and git status in panes. "
        "Rust. Set up the crate."
    )
    s.user("We go with clap's derive API for argument parsing.", "t_clap")
    s.user("It has to run on macOS and Linux; Windows is not supported for 1.0.", "t_platforms")
    s.user(
        "Config lives in ~/.config/tdk/config.yaml; we go with YAML for the config file, "
        "parsed with serde_yaml.",
        "t_config_old",
    )
    s.say("I'll create the binary crate with clap derive, a Config struct and serde_yaml.")
    s.bash(
        "cargo new tdk && cargo add clap --features derive && cargo add serde_yaml anyhow",
        "    Creating binary (application) `tdk` package\n      Adding clap v4.5.20 to "
        "dependencies\n      Adding serde_yaml v0.9.34 to dependencies\n      Adding anyhow "
        "v1.0.93 to dependencies",
        0,
        "Create the crate",
    )
    rs_work(
        s,
        "src/config.rs",
        "pub struct Config {}",
        "pub struct Config { pub panes: Vec<PaneConfig> }",
    )


def t02(s: SessionLog) -> None:
    s.user("How do we draw the panes?")
    s.user(
        "We draw directly with crossterm, no TUI framework: fewer dependencies and we control "
        "every cell.",
        "t_render_old",
    )
    s.say("I'll write a small layout module that splits the screen and queues crossterm commands.")
    s.user(
        "For errors: I prefer anyhow for errors in the binary and thiserror in the library crate.",
        "t_pref_errors",
    )
    rs_work(
        s,
        "src/ui/layout.rs",
        "fn draw() {}",
        "fn draw(out: &mut impl Write, area: Rect) -> Result<()> {\n    queue!(out, "
        "MoveTo(area.x, area.y))?;",
        clippy=2,
    )


def t03(s: SessionLog) -> None:
    s.user(
        "When tdk panics my terminal is broken afterwards: no echo, no newlines, I have to "
        "type reset."
    )
    s.say("Let me reproduce with a forced panic in the CPU widget.")
    out, code = cargo_test_output(
        s.rng,
        "tdk",
        [
            (
                "terminal::tests::restores_after_panic",
                "thread 'main' panicked at src/widgets/cpu.rs:88:14:\nindex out of bounds: the len is 4 but the index is 4",
            )
        ],
    )
    s.bash("cargo test restores_after_panic", out, code, "Reproduce")
    s.say("First try: call disable_raw_mode at the end of main.")
    s.edit("src/main.rs", "run(app)?;", "run(app)?;\n    disable_raw_mode()?;")
    out, code = cargo_test_output(
        s.rng, "tdk", [("terminal::tests::restores_after_panic", "raw mode still enabled")]
    )
    s.bash("cargo test restores_after_panic", out, code, "Test again")
    s.say(
        "That line never runs on a panic. Cause: a panic unwinds past main's cleanup, so raw "
        "mode and the alternate screen stay on.",
        "t_fix_rawmode",
    )
    s.edit(
        "src/terminal.rs",
        "pub fn init() -> Result<Terminal> {",
        "pub fn init() -> Result<Terminal> {\n    let hook = std::panic::take_hook();\n"
        "    std::panic::set_hook(Box::new(move |info| {\n        let _ = restore();\n"
        "        hook(info);\n    }));",
        tags=("t_edit_hook",),
    )
    out, code = cargo_test_output(s.rng, "tdk")
    s.bash("cargo test", out, code, "Tests")
    s.say(
        "Fixed: a panic hook restores the terminal (disable_raw_mode and LeaveAlternateScreen) "
        "before the default hook prints the panic message.",
        "t_fix_rawmode",
    )


def t04(s: SessionLog) -> None:
    s.user("Let's agree on vocabulary before the layout code grows.")
    s.user(
        "A pane is defined as one rectangular region of the screen bound to one data source.",
        "t_def_pane",
    )
    s.user(
        "A tick means one redraw cycle of the event loop; the default tick is 250 ms.",
        "t_def_tick",
    )
    s.say("I renamed Box to Pane across the code and made the tick configurable.")
    rs_work(s, "src/ui/pane.rs", "pub struct Box {", "pub struct Pane {", clippy=1)


def t05(s: SessionLog) -> None:
    s.user("tdk sits at 100% CPU in top even when nothing changes on screen.")
    s.bash(
        "top -b -n 1 -p $(pgrep tdk)",
        "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
        " 4242 dev       20   0   12344   6120   4800 R 100.0   0.1   3:12.40 tdk",
        0,
        "Measure",
        tags=("t_cmd_top",),
    )
    s.say("Maybe the git pane refreshes too often; I'll cache git status for a second.")
    s.edit("src/widgets/mod.rs", "git::status(repo)?", "self.git_cache.get_or_refresh(repo)?")
    s.bash(
        "top -b -n 1 -p $(pgrep tdk)",
        " 4242 dev       20   0   12344   6120   4800 R  99.7   0.1   4:01.02 tdk",
        0,
        "Measure again",
    )
    s.say(
        "Still at 99.7. Cause: the event loop calls event::poll(Duration::ZERO), which returns "
        "at once, so the loop spins without ever sleeping.",
        "t_fix_cpu",
    )
    s.edit(
        "src/app.rs",
        "if event::poll(Duration::ZERO)? {",
        "if event::poll(self.tick.saturating_sub(last.elapsed()))? {",
        tags=("t_edit_poll",),
    )
    s.bash(
        "top -b -n 1 -p $(pgrep tdk)",
        " 4242 dev       20   0   12344   6120   4800 S   0.7   0.1   4:01.30 tdk",
        0,
        "Measure after the fix",
    )
    s.say(
        "Fixed: event::poll now waits until the next tick, so idle tdk uses 0.7% CPU.",
        "t_fix_cpu",
    )


def t06(s: SessionLog) -> None:
    s.user("Startup feels slow since the git pane exists.")
    s.user(
        "The binary must start in under 50 ms on a cold cache; we check it in CI with hyperfine.",
        "t_startup",
    )
    s.bash(
        "hyperfine --warmup 0 --prepare 'sync; echo 3 > /proc/sys/vm/drop_caches' 'tdk --once'",
        "Benchmark 1: tdk --once\n  Time (mean ± σ):      38.2 ms ±   2.1 ms\n"
        "  Range (min … max):    35.0 ms …  44.9 ms    10 runs",
        0,
        "Measure startup",
        tags=("t_cmd_hyperfine",),
    )
    s.user(
        "Write down how to add a widget:\n1. implement the Widget trait in src/widgets/\n"
        "2. register it in widgets/mod.rs\n3. add a snapshot test for its rendering",
        "t_proc_widget",
    )
    s.say("Added to CONTRIBUTING.md under 'Adding a widget'.")
    rs_work(
        s,
        "src/widgets/mod.rs",
        "pub fn all() -> Vec<Box<dyn Widget>> {",
        "pub fn all() -> Vec<Box<dyn Widget>> { // lazily built",
        clippy=2,
    )


def t07(s: SessionLog) -> None:
    s.user("Review my PR for the log pane.")
    s.say("Two unwraps on the file reader and one on the regex; otherwise fine.")
    s.user(
        "Please avoid unwrap() outside tests; use expect with a message or propagate the error.",
        "t_pref_unwrap",
    )
    s.user(
        "And we go with insta snapshot tests for the rendering code, so layout changes show "
        "up in review.",
        "t_snapshots",
    )
    rs_work(
        s,
        "src/widgets/cpu.rs",
        "let file = File::open(path).unwrap();",
        'let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;',
        clippy=3,
    )


def t08(s: SessionLog) -> None:
    s.user("The snapshot tests fail after I changed the border style.")
    out, code = cargo_test_output(
        s.rng,
        "tdk",
        [
            (
                "ui::tests::renders_two_panes",
                "Snapshot: renders_two_panes\n-old snapshot\n+new results\n────┬───\n  1 │-┌cpu─┐\n  1 │+╭cpu─╮",
            )
        ],
    )
    s.bash("cargo test", out, code, "Tests")
    s.user(
        "To update the snapshots: run cargo insta test, then cargo insta review and accept "
        "only the panes you changed.",
        "t_proc_snap",
    )
    s.bash(
        "cargo insta test && cargo insta review",
        "info: 3 snapshots to review\nreviewed 3 snapshots: 3 accepted",
        0,
        "Update snapshots",
    )
    s.say("The rounded borders are accepted in the three pane snapshots; tests pass.")


def t09(s: SessionLog) -> None:
    s.user(
        "The file list pane is misaligned when names contain emoji or CJK characters: the "
        "size column shifts right."
    )
    s.say("Perhaps the padding uses a tab somewhere; replacing tabs with spaces first.")
    s.edit("src/widgets/files.rs", 'format!("{}\\t{}", name, size)', 'format!("{} {}", name, size)')
    out, code = cargo_test_output(
        s.rng,
        "tdk",
        [
            (
                "widgets::files::tests::aligns_wide_names",
                "assertion `left == right` failed\n  left: 14\n right: 12",
            )
        ],
    )
    s.bash("cargo test aligns_wide_names", out, code, "Test")
    s.say(
        "Cause: the padding counts name.len(), which is bytes, while a terminal cell width "
        "differs: emoji and CJK characters take two cells and several bytes.",
        "t_fix_width",
    )
    s.edit(
        "src/widgets/files.rs",
        "let pad = width - name.len();",
        "let pad = width.saturating_sub(UnicodeWidthStr::width(name.as_str()));",
    )
    out, code = cargo_test_output(s.rng, "tdk")
    s.bash("cargo test", out, code, "Tests")
    s.say(
        "Fixed: column widths are measured with the unicode-width crate, so wide characters "
        "line up.",
        "t_fix_width",
    )


def t10(s: SessionLog) -> None:
    s.user("People ask for binaries. How do we release?")
    s.user(
        "For now we release by hand: I build the tarballs on my laptop and upload them to the "
        "GitHub release.",
        "t_release_old",
    )
    s.user("We need to keep the MSRV at Rust 1.74 because Debian stable ships it.", "t_msrv")
    rs_work(
        s, "Cargo.toml", 'edition = "2021"', 'edition = "2021"\nrust-version = "1.74"', clippy=1
    )


def t11(s: SessionLog) -> None:
    s.user("Users on old distros get GLIBC_2.34 not found.")
    s.bash(
        "./tdk --version",
        "./tdk: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by "
        "./tdk)",
        1,
        "Try the binary on an old distro",
    )
    s.user("Decision: we ship a single static binary built with musl for Linux.", "t_musl")
    s.bash(
        "cargo build --release --target x86_64-unknown-linux-musl",
        "   Compiling tdk v0.4.0 (/home/dev/termdeck)\n    Finished `release` profile "
        "[optimized] target(s) in 48.31s",
        0,
        "Build with musl",
    )
    s.say("The musl build runs on the old distro too; I added the target to the build script.")


def t12(s: SessionLog) -> None:
    s.user("Every new pane breaks the layout code. This is getting painful.")
    s.say("Our hand-written layout duplicates what ratatui gives: constraints, borders, scrolling.")
    s.user(
        "We're moving the drawing to ratatui on top of crossterm; the hand-written layout "
        "code got too hard to maintain, so the direct crossterm rendering is retired.",
        "t_render_new",
    )
    s.say(
        "I'll port the panes to ratatui widgets one by one, keeping crossterm as the backend.",
        "t_render_new",
    )
    rs_work(
        s,
        "src/ui/layout.rs",
        "queue!(out, MoveTo(area.x, area.y))?;",
        "let chunks = Layout::vertical([Constraint::Length(3), Constraint::Min(0)]).split(area);",
        clippy=2,
    )


def t13(s: SessionLog) -> None:
    s.user("Themes: what should the default look like?")
    s.user(
        "I'd like the default theme to be dark, with a high-contrast option behind --theme "
        "contrast.",
        "t_pref_theme",
    )
    rs_work(s, "src/app.rs", "let theme = Theme::light();", "let theme = Theme::dark();", clippy=1)
    s.say("Dark is the default; --theme contrast switches to the high-contrast palette.")


def t14(s: SessionLog) -> None:
    s.user("serde_yaml is unmaintained now and users keep breaking the indentation.")
    s.user(
        "We switch the config file from YAML to TOML: ~/.config/tdk/config.toml, and tdk "
        "migrates an old config.yaml on first start.",
        "t_config_new",
    )
    s.say(
        "I'll parse config.toml with the toml crate, and convert config.yaml once if no TOML "
        "file exists.",
        "t_config_new",
    )
    rs_work(
        s,
        "src/config.rs",
        "let config: Config = serde_yaml::from_str(&text)?;",
        "let config: Config = toml::from_str(&text)?;",
        clippy=2,
    )


def t15(s: SessionLog) -> None:
    s.user("Releasing by hand takes me an hour each time and I forgot the arm64 build twice.")
    s.user(
        "We replace the manual release with cargo-dist: tagging vX.Y.Z builds and uploads the "
        "binaries from CI.",
        "t_release_new",
    )
    s.user(
        "To publish a release: first run cargo dist plan, then tag vX.Y.Z, then push the tag; "
        "the workflow builds the binaries.",
        "t_proc_release",
    )
    s.bash(
        "cargo dist init --yes && cargo dist plan",
        "announcing v0.5.0\n  tdk 0.5.0\n    tdk-x86_64-unknown-linux-musl.tar.xz\n"
        "    tdk-aarch64-unknown-linux-musl.tar.xz\n    tdk-aarch64-apple-darwin.tar.xz\n"
        "    tdk-x86_64-apple-darwin.tar.xz",
        0,
        "Set up cargo-dist",
    )
    s.say("cargo-dist is set up; the release workflow runs on tags and builds four targets.")


def t16(s: SessionLog) -> None:
    s.user("Someone asked for plugins in Lua. Should we?")
    s.say("It would mean an embedding API to keep stable and a sandbox; a lot before 1.0.")
    s.user("Let's keep plugins out of 1.0; we go with built-in widgets only.", "t_plugins")
    rs_work(s, "src/widgets/mod.rs", "// plugins?", "// built-in widgets only for 1.0", clippy=1)


def t17(s: SessionLog) -> None:
    s.user("Clean up the clippy warnings before the 0.6 release.")
    out, code = clippy_output(s.rng, RS_FILES, 5)
    s.bash("cargo clippy --all-targets -- -W clippy::pedantic", out, code, "Lint")
    s.say("I fixed the five warnings; nothing behavioural.")
    rs_work(s, "src/app.rs", "return Ok(true);", "Ok(true)", clippy=0)


def t18(s: SessionLog) -> None:
    s.user("Detach mode: keep collecting logs while the terminal is closed.")
    s.user(
        "The spool refers to the on-disk buffer where tdk keeps log lines while the terminal "
        "is detached.",
        "t_def_spool",
    )
    rs_work(
        s,
        "src/app.rs",
        "fn detach(&mut self) {}",
        "fn detach(&mut self) { self.spool.start(); }",
        clippy=2,
    )
    s.say("On reattach tdk replays the spool into the log pane and truncates it.")


def t19(s: SessionLog) -> None:
    s.user("Add a network pane with bytes in and out per interface.")
    rs_work(
        s,
        "src/widgets/net.rs",
        "",
        "pub struct NetPane { last: HashMap<String, (u64, u64)> }",
        clippy=3,
    )
    s.say("The network pane reads /proc/net/dev on Linux and getifaddrs on macOS.")


def t20(s: SessionLog) -> None:
    s.user("Prepare the 0.6 release notes.")
    s.bash(
        "git log --oneline v0.5.0..HEAD | head -8",
        "\n".join(
            f"{s.rng.getrandbits(28):07x} {m}"
            for m in (
                "network pane",
                "detach mode and spool",
                "clippy cleanup",
                "dark theme default",
                "config.toml migration",
                "ratatui port of the log pane",
                "fix wide names",
                "cargo-dist release workflow",
            )
        ),
        0,
        "What changed",
    )
    s.say("Release notes drafted in CHANGELOG.md for 0.6.0: network pane, detach mode, cleanup.")


# --------------------------------------------------------------------------------------------
# The calendar
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    key: str
    project: str
    start: str  # UTC, ISO without zone
    title: str
    play: Callable[[SessionLog], None]


SESSIONS: tuple[Spec, ...] = (
    Spec("p01", PAY, "2026-05-04T09:10:00", "project skeleton", p01),
    Spec("t01", TDK, "2026-05-05T14:05:00", "crate setup", t01),
    Spec("p02", PAY, "2026-05-06T10:20:00", "payment events", p02),
    Spec("p03", PAY, "2026-05-12T08:45:00", "idempotency", p03),
    Spec("t02", TDK, "2026-05-13T15:30:00", "drawing panes", t02),
    Spec("p04", PAY, "2026-05-19T09:30:00", "refunds endpoint", p04),
    Spec("p05", PAY, "2026-05-21T13:15:00", "flaky refund test", p05),
    Spec("t03", TDK, "2026-05-27T16:00:00", "terminal after panic", t03),
    Spec("p06", PAY, "2026-06-02T09:00:00", "processor client", p06),
    Spec("t04", TDK, "2026-06-03T14:40:00", "vocabulary", t04),
    Spec("p07", PAY, "2026-06-09T10:05:00", "webhook signatures", p07),
    Spec("t05", TDK, "2026-06-11T15:10:00", "idle CPU", t05),
    Spec("p08", PAY, "2026-06-16T09:40:00", "releases and payouts", p08),
    Spec("t06", TDK, "2026-06-18T13:20:00", "startup time", t06),
    Spec("p09", PAY, "2026-06-25T11:00:00", "alembic heads", p09),
    Spec("t07", TDK, "2026-06-30T14:00:00", "log pane review", t07),
    Spec("p10", PAY, "2026-07-01T08:30:00", "settlement cutoff", p10),
    Spec("p11", PAY, "2026-07-07T09:15:00", "dunning model", p11),
    Spec("p12", PAY, "2026-07-14T08:50:00", "dunning scheduler", p12),
    Spec("t08", TDK, "2026-07-14T15:25:00", "snapshot update", t08),
    Spec("t09", TDK, "2026-07-21T14:10:00", "wide characters", t09),
    Spec("p13", PAY, "2026-07-22T10:00:00", "connection pool", p13),
    Spec("t10", TDK, "2026-07-29T16:30:00", "releasing by hand", t10),
    Spec("p14", PAY, "2026-08-04T09:20:00", "key rotation", p14),
    Spec("t11", TDK, "2026-08-05T15:00:00", "static binary", t11),
    Spec("p15", PAY, "2026-08-12T10:10:00", "async processor client", p15),
    Spec("t12", TDK, "2026-08-18T14:45:00", "ratatui port", t12),
    Spec("p16", PAY, "2026-08-19T09:05:00", "partial refunds", p16),
    Spec("t13", TDK, "2026-08-26T16:15:00", "themes", t13),
    Spec("p17", PAY, "2026-08-27T10:30:00", "ledger ids", p17),
    Spec("p18", PAY, "2026-09-08T09:00:00", "event broker", p18),
    Spec("t14", TDK, "2026-09-09T15:35:00", "config format", t14),
    Spec("p19", PAY, "2026-09-15T09:45:00", "jetstream consumers", p19),
    Spec("t15", TDK, "2026-09-16T14:20:00", "release automation", t15),
    Spec("p20", PAY, "2026-09-23T10:15:00", "ledger export", p20),
    Spec("t16", TDK, "2026-09-24T16:05:00", "plugins", t16),
    Spec("t17", TDK, "2026-10-01T14:50:00", "clippy cleanup", t17),
    Spec("p21", PAY, "2026-10-06T08:55:00", "dependency upgrade", p21),
    Spec("p22", PAY, "2026-10-13T09:35:00", "fraud rules", p22),
    Spec("t18", TDK, "2026-10-14T15:40:00", "detach mode", t18),
    Spec("p23", PAY, "2026-10-20T10:25:00", "chargebacks", p23),
    Spec("t19", TDK, "2026-10-22T14:30:00", "network pane", t19),
    Spec("t20", TDK, "2026-10-28T15:15:00", "release notes", t20),
    Spec("p24", PAY, "2026-10-27T09:50:00", "rabbitmq cleanup", p24),
)
