"""Schemathesis against the real gateway and query service: every answer matches /openapi.json.

A bounded, seeded, derandomized run (the same cases every time, a few hundred per service) that
fails on any response that does not match its declared schema (schemathesis'
``response_schema_conformance``, ST108 in its CLI output) and on any 5xx. The failures of every
operation are collected, so one run lists all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Err
from schemathesis.specs.openapi.checks import response_schema_conformance

from agent_memory_embedded.servers import PostgresServer
from tests import plain_http
from tests.helpers import drained, eventually, make_event
from tests.stack import Stack, module_stack

pytestmark = pytest.mark.slow

EXAMPLES_PER_OPERATION = 12
CHECKS = [not_a_server_error, response_schema_conformance]


@pytest.fixture(scope="module")
def seeded_stack(
    pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """Gateway, recorder and query service (no sentence model), with a few events stored so
    that some answers are not empty."""
    with module_stack(
        pg_server, tmp_path_factory, AGENT_MEMORY_QUERY__SEARCH__LOAD_EMBEDDER="false"
    ) as s:
        events = [make_event(i) for i in range(5)]
        r = plain_http.post(f"{s.gateway_url}/v1/events", json={"events": events})
        assert r.status_code == 202, r.text
        eventually(lambda: drained(s.query_url, len(events)), what="the seed events stored")
        yield s


def _failures(base_url: str) -> list[str]:
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    failures: list[str] = []
    for result in schema.get_all_operations():
        if isinstance(result, Err):  # the document itself is broken: that is a failure too
            failures.append(f"invalid schema: {result.err()}")
            continue
        operation = result.ok()

        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
        )
        @given(case=operation.as_strategy())
        def check(case: Any) -> None:
            response = case.call(base_url=base_url, timeout=30)
            case.validate_response(response, checks=CHECKS)

        try:
            check()
        # one operation's failures (schemathesis raises a group), reported with the others
        except (Exception, BaseExceptionGroup) as exc:
            failures.append(f"{operation.label}: {_summary(exc)}")
    return failures


def _summary(exc: BaseException) -> str:
    """What broke, and the answer that showed it (status line and the start of its body)."""
    text = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    parts = exc.exceptions if isinstance(exc, BaseExceptionGroup) else [exc]
    kinds = ", ".join(type(part).__name__ for part in parts)
    answer = [line for line in text if line.startswith(("[", "`", "- "))]
    return f"{kinds}: " + " / ".join(answer[:4] or text[:3])[:600]


@pytest.mark.parametrize("service", ["gateway", "query"])
def test_every_answer_matches_the_openapi_document(seeded_stack: Stack, service: str) -> None:
    url = seeded_stack.gateway_url if service == "gateway" else seeded_stack.query_url
    failures = _failures(url)
    assert not failures, f"{len(failures)} operation(s) fail:\n" + "\n".join(failures)
