"""``admin redact --since`` through the erasure path (issue 16's leftover): stored events that
hold a secret the current redactor finds (here: the password rule was off at ingest) are
erased with everything derived from them; the other events stay. Real gateway, recorder and
query service on a real nats-server and Postgres."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from agent_memory_embedded.servers import NatsServer
from tests import plain_http
from tests.helpers import eventually, make_event
from tests.stack import make_stack

SECRET = "Tr0ub4dor&3xq"


@pytest.mark.slow
def test_redactable_events_since_a_time_are_erased(
    nats_server: NatsServer, pg_dsn: str, tmp_path: Path
) -> None:
    stack = make_stack(
        nats_server,
        pg_dsn,
        tmp_path,
        AGENT_MEMORY_GATEWAY__REDACT_DISABLE='["password"]',
        AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false",
    )
    try:
        for name in ("gateway", "recorder", "query"):
            stack.start(name)
        events = [
            make_event(0, text=f"The reporting db password: {SECRET} and the user is reporter."),
            make_event(1, text="The deploy runs on Tuesdays."),
        ]
        r = plain_http.post(f"{stack.gateway_url}/v1/events", json={"events": events})
        assert r.status_code == 202, r.text

        def stored() -> bool:
            with psycopg.connect(stack.pg_dsn) as conn:
                row = conn.execute("SELECT count(*) FROM events").fetchone()
            return bool(row and row[0] == 2)

        eventually(stored, 60, "both stored, the secret as is")
        body = {"project_id": "proj", "scope": {"redactable_since": "2025-01-01T00:00:00Z"}}
        q = stack.query_url
        preview = plain_http.post(f"{q}/v1/erasures/dry-run", json=body)
        assert preview.status_code == 200, preview.text
        assert preview.json()["counts"]["events"] == 1
        accepted = plain_http.post(f"{q}/v1/erasures", json=body)
        assert accepted.status_code == 202 and accepted.json()["events"] == 1
        erasure_id = accepted.json()["erasure_id"]

        def verified() -> bool:
            return bool(plain_http.get(f"{q}/v1/erasures/{erasure_id}").json()["verified"])

        eventually(verified, 60, "verified")
        with psycopg.connect(stack.pg_dsn) as conn:
            left = [r[0] for r in conn.execute("SELECT event_id FROM events").fetchall()]
        assert left == ["e-000001"]
        receipt = plain_http.get(f"{q}/v1/erasures/{erasure_id}").json()
        assert receipt["scope"] == {"redactable_since": "2025-01-01T00:00:00Z"}
        assert SECRET not in str(receipt)
        bad = plain_http.post(f"{q}/v1/erasures", json={"project_id": "proj", "scope": {}})
        assert bad.status_code == 422 and "scope" in bad.text
    finally:
        stack.stop()
