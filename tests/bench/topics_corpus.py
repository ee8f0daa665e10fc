"""A labelled coding corpus for the topic benchmark: sessions with one known theme each.

Eight themes a developer works on, six sessions per theme, three segments per session. A
segment reads like the summarizer's output on a coding session: a title and bullets, two or
three of them about the theme (drawn from its pool, so no two segments say the same), one or
two of the noise every session has (test runs, file edits, paths, hashes, command output),
which the clusterer and the labeller must see past.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

THEMES: dict[str, list[str]] = {
    "ci pipeline": [
        "The CI pipeline is red on main because of flaky tests in the integration job",
        "Added a retry for flaky tests and a cache for dependencies in the CI pipeline",
        "The CI pipeline cache key now includes the lock file hash so builds stop missing",
        "Split the slow CI pipeline job into parallel shards to halve the build time",
        "Flaky tests came from a shared temp folder between CI pipeline workers",
        "Pinned the runner image of the CI pipeline after an upstream update broke it",
        "The CI pipeline now uploads test reports as artifacts for failed builds",
        "Nightly CI pipeline runs the full matrix, pull requests run the quick subset",
    ],
    "database migrations": [
        "The database migration adding the orders index locked the table for minutes",
        "Rewrote the database migration to create the index concurrently",
        "Alembic database migrations were out of order after the branch merge",
        "A down migration was missing, so rolling back the database schema failed",
        "Backfilled the new column in batches before the database migration made it not null",
        "Database migrations now run in a separate release step before the deploy",
        "Squashed the old database migrations into one baseline schema",
        "The migration test applies every database migration to an empty schema and back",
    ],
    "authentication tokens": [
        "Authentication tokens expired after five minutes because the clock skew was ignored",
        "Refresh tokens rotate on every use so a stolen authentication token stops working",
        "The login endpoint returns a short lived access token and a refresh token",
        "Authentication middleware rejects tokens signed with the old key after rotation",
        "OAuth authentication with the identity provider failed on the callback state check",
        "Stored refresh tokens hashed instead of in plain text for authentication safety",
        "Revoking a session invalidates all authentication tokens issued to it",
        "Token audience and issuer are now validated by the authentication layer",
    ],
    "billing invoices": [
        "Billing invoices showed wrong totals because of float rounding on tax",
        "Invoice amounts use decimal cents everywhere in the billing service now",
        "The billing job sent duplicate invoice emails after a retry",
        "Stripe webhooks for paid invoices update the billing ledger idempotently",
        "Prorated billing for plan upgrades produced negative invoice lines",
        "Invoices in euros were formatted with the wrong currency symbol in billing emails",
        "Added a billing report of unpaid invoices older than thirty days",
        "Credit notes cancel an invoice without deleting it, as billing audit requires",
    ],
    "logging observability": [
        "Switched to structured logging so every log line is JSON with a request id",
        "Traces now propagate across the queue so observability covers the whole request",
        "Too much debug logging filled the disk; log levels come from configuration now",
        "Added metrics for queue lag and request latency to the observability dashboard",
        "Logging of request bodies removed because it leaked customer emails",
        "Alert on error rate instead of single errors to cut observability noise",
        "The log shipper dropped lines under load; buffered logging fixed it",
        "Observability dashboard shows p95 latency per endpoint from the new metrics",
    ],
    "docker deployment": [
        "The Docker image shrank from one gigabyte to two hundred megabytes with a slim base",
        "Deployment to the cluster failed because the Docker health check hit the wrong port",
        "Multi stage Docker build keeps compilers out of the deployment image",
        "Rolling deployment now waits for readiness before moving traffic",
        "Docker compose file for local deployment gained the cache service",
        "Deployment rollback restores the previous Docker image tag automatically",
        "Secrets moved out of the Docker image into the deployment environment",
        "The deployment pipeline tags Docker images with the commit instead of latest",
    ],
    "search indexing": [
        "Search results missed new documents because indexing ran only nightly",
        "Incremental search indexing now picks up changes within seconds",
        "Reindexing the whole search index takes forty minutes; added a progress bar",
        "Search relevance improved after boosting titles in the indexing mapping",
        "Stemming in the search analyzer merged words that users keep apart",
        "Search indexing skips deleted documents and removes them from the index",
        "Synonyms for product names were added to the search indexing configuration",
        "Search queries with quotes now match exact phrases in the index",
    ],
    "frontend accessibility": [
        "Screen readers could not name the icon buttons; added accessibility labels",
        "Keyboard focus was lost after closing the modal, an accessibility bug in the frontend",
        "Colour contrast of the frontend buttons fails accessibility guidelines",
        "Added skip links and landmarks for accessibility of the frontend layout",
        "Form errors are announced to assistive technology now, an accessibility fix",
        "Frontend accessibility audit found images without alternative text",
        "Focus outlines restored in the frontend after the design refresh removed them",
        "Accessibility tests run with axe in the frontend component suite",
    ],
}

NOISE = [
    "Ran pytest -x tests/test_api.py: 41 passed, 2 failed in 3.2s",
    "Edited src/app/service.py and src/app/handlers/__init__.py",
    "git commit 4f9c2a1e on branch feature/work-in-progress",
    "make lint: ruff found E501 in src/app/models.py line 88",
    "Read the README and the CONTRIBUTING notes before starting",
    "npm run build finished in 14.2s with 3 warnings",
    "Reviewed the diff of src/lib/utils.ts and ran the unit tests again",
    "Opened a pull request and asked for a review",
    "cargo test: 120 passed; 0 failed; finished in 8.7s",
    "Updated the changelog and bumped the version to 2.4.1",
]


@dataclass(frozen=True)
class Segment:
    node_id: str
    session_id: str
    theme: str
    text: str


def corpus(
    sessions_per_theme: int = 6, segments_per_session: int = 3, seed: int = 14
) -> list[Segment]:
    rng = random.Random(seed)
    out: list[Segment] = []
    for theme, pool in THEMES.items():
        for s in range(sessions_per_theme):
            session = f"{theme.replace(' ', '-')}-{s}"
            for k in range(segments_per_session):
                said = rng.sample(pool, rng.randint(2, 3))
                noise = rng.sample(NOISE, rng.randint(1, 2))
                bullets = said + noise
                rng.shuffle(bullets)
                title = said[0].split(",")[0]
                out.append(
                    Segment(
                        node_id=f"segment:{session}-{k}",
                        session_id=session,
                        theme=theme,
                        text="\n".join([title, *bullets]),
                    )
                )
    return out
