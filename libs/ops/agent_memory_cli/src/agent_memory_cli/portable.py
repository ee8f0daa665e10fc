"""``agent-memory export`` and ``agent-memory import FILE``: a project's memory, portable.

What is exported is what cannot be rebuilt: the events (ids, timestamps, text, metadata), the
pins, the episodes with their actions, and the playbook entries. Everything derived (segments,
TOC, grips, index documents, topics) is rebuilt by the pipeline of the deployment that imports
the file, which is what keeps a dump valid across versions of the summarizer or the indexes.

The format (``docs/export-format.md``) is gzip-compressed JSON Lines, version 1: a ``header``
line first, one line per record (``event``, ``pin``, ``episode``, ``playbook_entry``), and an
``end`` line with the counts, so that a truncated file is refused rather than half-imported.

Import replays the events through the gateway with their own ids and times, so importing twice
(or importing into the deployment they came from) stores each event once; episodes and playbook
entries are written with their own ids and skipped when present; pins are applied once the
pipeline has rebuilt the pinned memory (``--wait-pins``), and a later run applies the rest.

With ``--vectors`` the dump also carries, for each exported event the vector index holds, its
vector, the hash of the text it was made from and the vector space (model, precision, cut):
``import`` stages them (``agent_memory_retrieval.indexing.staged``) when the importing
deployment's space is the same, and its embedder takes them instead of running the model;
another space means they are left out (said so) and the events are embedded as without them.

The parser of ``export`` and the test that tells an export file from a runtime's name are in
``portable_cmd``, which every command loads; this module (psycopg, orjson, rich, the client) is
loaded when an export or an import of a file runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import sys
import time
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import orjson
import psycopg
from psycopg.rows import dict_row
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent_memory_cli.api import REFUSED, UNREACHABLE, token_from
from agent_memory_cli.importer import count_refusals, refusal_note
from agent_memory_cli.portable_cmd import FORMAT
from agent_memory_cli.settings import Settings
from agent_memory_client import AgentMemoryClient, ApiError, UnavailableError
from agent_memory_client.types import EventIn

if TYPE_CHECKING:
    from agent_memory_retrieval.settings import RetrievalSettings

VERSION = 3
# version 1 had no project settings, version 2 no vectors; their files read the same (none)
READABLE_VERSIONS = (1, 2, 3)
LATER_KINDS = {1: ("retention", "sharing", "vector"), 2: ("vector",)}
EVENT_BATCH = 500
VECTOR_PAGE = 500
RECORD_KINDS = ("event", "pin", "episode", "playbook_entry", "retention", "sharing", "vector")

EVENTS_SQL = """
SELECT event_id, ts, project_id, agent_id, session_id, user_id, role, type, text, metadata
FROM events
WHERE tenant = %(tenant)s
  AND (%(project)s::text IS NULL OR project_id = %(project)s)
  AND (%(since)s::timestamptz IS NULL OR ts >= %(since)s)
ORDER BY seq
"""
PINS_SQL = """
SELECT node_id AS memory_id, project_id FROM toc_nodes
WHERE tenant = %(tenant)s AND pinned AND (%(project)s::text IS NULL OR project_id = %(project)s)
UNION ALL
SELECT grip_id, project_id FROM toc_grips
WHERE tenant = %(tenant)s AND pinned AND (%(project)s::text IS NULL OR project_id = %(project)s)
ORDER BY 1
"""
EPISODES_SQL = """
SELECT episode_id, project_id, agent_id, session_id, task, status, lessons, summary, value,
       metadata, actions_count, started_at, completed_at
FROM episodes
WHERE tenant = %(tenant)s
  AND (%(project)s::text IS NULL OR project_id = %(project)s)
  AND (%(since)s::timestamptz IS NULL OR started_at >= %(since)s)
ORDER BY started_at, episode_id
"""
ACTIONS_SQL = """
SELECT action_id, ts, action, result, ok, metadata FROM episode_actions
WHERE tenant = %(tenant)s AND episode_id = %(episode_id)s ORDER BY seq
"""
PLAYBOOK_SQL = """
SELECT project_id, entry_id, section, text, helpful, harmful, neutral, embedder, embedding,
       sources, created_at, updated_at
FROM playbook_entries
WHERE tenant = %(tenant)s AND (%(project)s::text IS NULL OR project_id = %(project)s)
ORDER BY project_id, entry_id
"""
RETENTION_SQL = """
SELECT project_id, overrides FROM retention_policies
WHERE tenant = %(tenant)s AND (%(project)s::text IS NULL OR project_id = %(project)s)
ORDER BY project_id
"""
SHARING_SQL = """
SELECT project_id, strategy FROM project_sharing
WHERE tenant = %(tenant)s AND (%(project)s::text IS NULL OR project_id = %(project)s)
ORDER BY project_id
"""
# a project's settings already set in the importing deployment are kept, as every row is
INSERT_RETENTION_SQL = """
INSERT INTO retention_policies (tenant, project_id, overrides)
VALUES (%(tenant)s, %(project_id)s, %(overrides)s)
ON CONFLICT (tenant, project_id) DO NOTHING
"""
INSERT_SHARING_SQL = """
INSERT INTO project_sharing (tenant, project_id, strategy)
VALUES (%(tenant)s, %(project_id)s, %(strategy)s)
ON CONFLICT (tenant, project_id) DO NOTHING
"""
INSERT_EPISODE_SQL = """
INSERT INTO episodes (tenant, episode_id, project_id, agent_id, session_id, task, status,
                      lessons, summary, value, metadata, actions_count, started_at,
                      completed_at, tsv)
VALUES (%(tenant)s, %(episode_id)s, %(project_id)s, %(agent_id)s, %(session_id)s, %(task)s,
        %(status)s, %(lessons)s, %(summary)s, %(value)s, %(metadata)s, %(actions_count)s,
        %(started_at)s, %(completed_at)s,
        -- the same text as the query service's complete_episode indexes
        to_tsvector('english', %(task)s || ' ' || coalesce(%(summary)s, '') || ' '
                    || array_to_string(%(lessons)s::text[], ' ')))
ON CONFLICT (tenant, episode_id) DO NOTHING
"""
INSERT_ACTION_SQL = """
INSERT INTO episode_actions (tenant, episode_id, action_id, ts, action, result, ok, metadata)
VALUES (%(tenant)s, %(episode_id)s, %(action_id)s, %(ts)s, %(action)s, %(result)s, %(ok)s,
        %(metadata)s)
ON CONFLICT (tenant, episode_id, action_id) DO NOTHING
"""
INSERT_PLAYBOOK_SQL = """
INSERT INTO playbook_entries (tenant, project_id, entry_id, section, text, helpful, harmful,
                              neutral, embedder, embedding, sources, created_at, updated_at)
VALUES (%(tenant)s, %(project_id)s, %(entry_id)s, %(section)s, %(text)s, %(helpful)s,
        %(harmful)s, %(neutral)s, %(embedder)s, %(embedding)s, %(sources)s, %(created_at)s,
        %(updated_at)s)
ON CONFLICT (tenant, project_id, entry_id) DO NOTHING
"""


class DumpError(Exception):
    """The file is not a complete agent-memory export this version can read."""


def _json_default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot export {type(value).__name__}")


def _line(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record, default=_json_default) + b"\n"


# --- export -----------------------------------------------------------------------------------


@dataclass
class ExportReport:
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RECORD_KINDS, 0))


def export_dump(
    dsn: str,
    out: IO[bytes],
    *,
    tenant: str,
    project: str | None,
    since: datetime | None,
    progress: bool = True,
    vectors: VectorSource | None = None,
) -> ExportReport:
    """Write the dump of ``tenant`` (one project, or all) to ``out`` (gzip JSON Lines); with
    ``vectors``, the stored vector of each exported event the vector index holds."""
    report = ExportReport()
    params: dict[str, Any] = {"tenant": tenant, "project": project, "since": since}
    with (
        psycopg.connect(dsn, row_factory=dict_row) as conn,
        gzip.GzipFile(fileobj=out, mode="wb") as gz,
    ):
        total = _scalar(
            conn,
            "SELECT count(*) FROM events WHERE tenant = %(tenant)s"
            " AND (%(project)s::text IS NULL OR project_id = %(project)s)"
            " AND (%(since)s::timestamptz IS NULL OR ts >= %(since)s)",
            params,
        )
        gz.write(
            _line(
                {
                    "kind": "header",
                    "format": FORMAT,
                    "version": VERSION,
                    "exported_at": datetime.now(UTC),
                    "tenant": tenant,
                    "project_id": project,
                    "since": since,
                    "events": total,
                    **({"vectors": vectors.header()} if vectors else {}),
                }
            )
        )
        with (
            _bar(progress, "exporting events", total) as (bar, task),
            conn.cursor(name="export_events") as cur,  # server-side: millions stream
        ):
            cur.execute(EVENTS_SQL, params)
            for row in cur:
                gz.write(_line({"kind": "event", **_event_record(row)}))
                report.counts["event"] += 1
                bar.advance(task)
        if vectors is not None:
            with _bar(progress, "exporting vectors", total) as (bar, task):
                for record in vectors.records(params, lambda n: bar.advance(task, n)):
                    gz.write(_line({"kind": "vector", **record}))
                    report.counts["vector"] += 1
        for row in conn.execute(PINS_SQL, params).fetchall():
            gz.write(_line({"kind": "pin", **row}))
            report.counts["pin"] += 1
        for row in conn.execute(EPISODES_SQL, params).fetchall():
            actions = conn.execute(
                ACTIONS_SQL, {"tenant": tenant, "episode_id": row["episode_id"]}
            ).fetchall()
            gz.write(_line({"kind": "episode", **row, "actions": actions}))
            report.counts["episode"] += 1
        for row in conn.execute(PLAYBOOK_SQL, params).fetchall():
            gz.write(_line({"kind": "playbook_entry", **row}))
            report.counts["playbook_entry"] += 1
        for kind, stmt in (("retention", RETENTION_SQL), ("sharing", SHARING_SQL)):
            for row in conn.execute(stmt, params).fetchall():
                gz.write(_line({"kind": kind, **row}))
                report.counts[kind] += 1
        gz.write(_line({"kind": "end", "counts": report.counts}))
    return report


@dataclass
class VectorSource:
    """Where an export reads vectors: the deployment's vector index and its space."""

    dsn: str
    settings: RetrievalSettings

    def header(self) -> dict[str, Any]:
        return {"space": self.settings.vector_space}

    def records(
        self, params: dict[str, Any], advance: Callable[[int], None]
    ) -> Iterator[dict[str, Any]]:
        """One ``vector`` record per exported event whose vector the index holds."""
        for page in _run_pages(self._pages(params, advance)):
            yield from page

    async def _pages(
        self, params: dict[str, Any], advance: Callable[[int], None]
    ) -> AsyncGenerator[list[dict[str, Any]]]:
        from agent_memory_retrieval.adapters.factory import open_vector_index
        from agent_memory_retrieval.indexing.sources import tenant_event_pages
        from agent_memory_retrieval.indexing.staged import pack, text_sha, to_text

        index = await open_vector_index(self.settings)
        try:
            async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
                pages = tenant_event_pages(
                    conn,
                    VECTOR_PAGE,
                    tenant=params["tenant"],
                    project=params["project"],
                    since=params["since"],
                )
                async for docs in pages:
                    stored = await index.vectors([d.id for d in docs])
                    yield [
                        {
                            "event_id": d.event_ids[0],
                            "text_sha": text_sha(d.embedding_text()).hex(),
                            "vector": to_text(pack(stored[d.id])),
                        }
                        for d in docs
                        if d.id in stored and d.event_ids
                    ]
                    advance(len(docs))
        finally:
            await index.close()


def _run_pages(pages: AsyncGenerator[list[dict[str, Any]]]) -> Iterator[list[dict[str, Any]]]:
    """An async page reader driven from this synchronous export, page by page."""
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(anext(pages))
            except StopAsyncIteration:
                return
    finally:
        loop.run_until_complete(pages.aclose())
        loop.close()


def _event_record(row: dict[str, Any]) -> dict[str, Any]:
    """An events row as the gateway takes it (``EventIn``): the time with its microseconds."""
    record = {k: v for k, v in row.items() if v is not None}
    record["ts"] = row["ts"].astimezone(UTC).isoformat()
    return record


def _scalar(conn: psycopg.Connection[Any], sql: str, params: dict[str, Any]) -> int:
    row = conn.execute(sql, params).fetchone()
    return int(next(iter(row.values()))) if row else 0


class _NoBar:
    def advance(self, task: object, advance: float = 1) -> None:
        """No progress bar: nothing to do."""


class _bar:
    def __init__(self, enabled: bool, what: str, total: int | None) -> None:
        self.enabled = enabled
        self.what = what
        self.total = total
        self.progress: Progress | None = None

    def __enter__(self) -> tuple[Any, Any]:
        if not self.enabled:
            return _NoBar(), None
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
        )
        self.progress.__enter__()
        return self.progress, self.progress.add_task(self.what, total=self.total)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.__exit__(None, None, None)


# --- import -----------------------------------------------------------------------------------


@dataclass
class Dump:
    header: dict[str, Any]
    records: dict[str, list[dict[str, Any]]]


def read_dump(path: Path) -> Dump:
    """The whole file, checked: header first, a known version, an ``end`` line whose counts
    match (a truncated or edited file is refused before anything is imported)."""
    records: dict[str, list[dict[str, Any]]] = {k: [] for k in RECORD_KINDS}
    header: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    try:
        with gzip.open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                if end is not None:
                    raise DumpError(f"line {number}: content after the end line")
                item = orjson.loads(raw)
                kind = item.pop("kind", None) if isinstance(item, dict) else None
                if number == 1:
                    if kind != "header" or item.get("format") != FORMAT:
                        raise DumpError("not an agent-memory export (no header line)")
                    if item.get("version") not in READABLE_VERSIONS:
                        raise DumpError(
                            f"export version {item.get('version')}; this agent-memory reads "
                            f"versions {', '.join(map(str, READABLE_VERSIONS))}"
                        )
                    header = item
                elif kind == "end":
                    end = item
                elif kind in records:
                    if kind == "vector":
                        _check_vector(item, number)
                    records[kind].append(item)
                else:
                    raise DumpError(f"line {number}: unknown record kind {kind!r}")
    except (OSError, EOFError, gzip.BadGzipFile, orjson.JSONDecodeError) as exc:
        raise DumpError(f"unreadable: {exc}") from exc
    if header is None:
        raise DumpError("empty file")
    if end is None:
        raise DumpError("truncated: no end line")
    counts = {k: len(v) for k, v in records.items()}
    later = LATER_KINDS.get(int(header["version"]), ())
    counts = {k: n for k, n in counts.items() if k not in later or n}  # its end line lacks them
    if end.get("counts") != counts:
        raise DumpError(f"the end line counts {end.get('counts')}, the file holds {counts}")
    return Dump(header=header, records=records)


def _check_vector(item: dict[str, Any], number: int) -> None:
    """A vector line checked and decoded in place (``text_sha`` and ``vector`` to bytes, as
    ``staged_vectors`` holds them): decoded once, before anything is imported."""
    from agent_memory_retrieval.indexing.staged import from_text

    try:
        sha = bytes.fromhex(item["text_sha"])
        if not isinstance(item.get("event_id"), str) or len(sha) != 32:
            raise ValueError("an event_id and a SHA-256 text_sha are needed")
        item["text_sha"], item["vector"] = sha, from_text(item["vector"])
    except (KeyError, TypeError, ValueError) as exc:
        raise DumpError(f"line {number}: not a vector record: {exc}") from exc


def _batches(items: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class ImportReport:
    events: int = 0
    # events the gateway took but will never store, by reason (erased: their ids were erased)
    refusals: Counter[str] = field(default_factory=Counter)
    episodes_added: int = 0
    playbook_added: int = 0
    settings_added: int = 0
    pins_applied: int = 0
    pins_pending: list[str] = field(default_factory=list)
    vectors_staged: int = 0
    vectors_left_out: str = ""  # why the dump's vectors were not used ("" when they were)


async def import_dump(
    dump: Dump,
    client: AgentMemoryClient,
    dsn: str,
    *,
    tenant: str,
    wait_pins_s: float = 0.0,
    progress: bool = True,
    vector_space: str | None = None,
) -> ImportReport:
    """Replay ``dump`` into the deployment; ``vector_space``: the importing embedder's
    (``RetrievalSettings.vector_space``), whose dump vectors are staged before the events."""
    report = ImportReport()
    vectors = dump.records["vector"]
    if vectors:
        theirs = str((dump.header.get("vectors") or {}).get("space"))
        if vector_space == theirs:
            report.vectors_staged = await asyncio.to_thread(
                _stage_vectors, dsn, tenant, theirs, vectors, progress
            )
        else:
            report.vectors_left_out = (
                f"the dump's vectors are of {theirs}, this deployment embeds with {vector_space}"
            )
    events = dump.records["event"]
    refused: list[str] = []
    with _bar(progress, "importing events", len(events)) as (bar, task):
        for chunk in _batches(events, EVENT_BATCH):
            answer = await client.post_events(cast(list[EventIn], chunk))
            report.events += len(chunk) - count_refusals(answer, report.refusals)
            refused += [r["event_id"] for r in answer.get("refusals") or ()]
            bar.advance(task, len(chunk))
    if report.vectors_staged and refused:  # never stored: what was staged for them goes
        await asyncio.to_thread(_unstage, dsn, tenant, refused)
    report.episodes_added, report.playbook_added, report.settings_added = await asyncio.to_thread(
        _write_rows, dsn, tenant, dump
    )
    deadline = time.monotonic() + wait_pins_s
    pending = [p["memory_id"] for p in dump.records["pin"]]
    while pending:
        left = []
        for memory_id in pending:
            try:
                await client.pin(memory_id)
                report.pins_applied += 1
            except ApiError as exc:
                if exc.status != 404:
                    raise
                left.append(memory_id)  # not rebuilt yet
        pending = left
        if not pending or time.monotonic() >= deadline:
            break
        await asyncio.sleep(2)
    report.pins_pending = pending
    return report


def _stage_vectors(
    dsn: str, tenant: str, space: str, vectors: list[dict[str, Any]], progress: bool
) -> int:
    """Write the dump's vectors where the embedder looks for them, before the events: a page
    of rows per transaction, replacing what an earlier import of the same dump staged."""
    from agent_memory_retrieval.docs import event_doc_id
    from agent_memory_retrieval.indexing.staged import PURGE_SQL, STAGE_SQL

    rows = [  # checked and decoded by read_dump
        {
            "tenant": tenant,
            "doc_id": event_doc_id(tenant, record["event_id"]),
            "space": space,
            "text_sha": record["text_sha"],
            "vector": record["vector"],
        }
        for record in vectors
    ]
    with (
        psycopg.connect(dsn) as conn,
        _bar(progress, "staging vectors", len(rows)) as (bar, task),
    ):
        conn.execute(PURGE_SQL, {"tenant": tenant})  # what earlier imports left unmatched
        conn.commit()
        for page in _batches(rows, VECTOR_PAGE):
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(STAGE_SQL, page)
            bar.advance(task, len(page))
    return len(rows)


def _unstage(dsn: str, tenant: str, event_ids: list[str]) -> None:
    from agent_memory_retrieval.docs import event_doc_id
    from agent_memory_retrieval.indexing.staged import DROP_SQL

    with psycopg.connect(dsn) as conn:
        conn.execute(DROP_SQL, {"ids": [event_doc_id(tenant, e) for e in event_ids]})


def _write_rows(dsn: str, tenant: str, dump: Dump) -> tuple[int, int, int]:
    """Episodes (with their actions), playbook entries and project settings (retention,
    sharing), with their own ids: rows already present are left as they are, so a second import
    changes nothing and a project configured here keeps its settings."""
    episodes = playbook = settings = 0
    with psycopg.connect(dsn) as conn, conn.transaction():
        for ep in dump.records["episode"]:
            row = {**ep, "tenant": tenant, "metadata": orjson.dumps(ep["metadata"]).decode()}
            cur = conn.execute(INSERT_EPISODE_SQL, row)
            episodes += cur.rowcount
            for action in ep.get("actions", []):
                conn.execute(
                    INSERT_ACTION_SQL,
                    {
                        **action,
                        "tenant": tenant,
                        "episode_id": ep["episode_id"],
                        "metadata": orjson.dumps(action["metadata"]).decode(),
                    },
                )
        for entry in dump.records["playbook_entry"]:
            row = {**entry, "tenant": tenant, "sources": orjson.dumps(entry["sources"]).decode()}
            playbook += conn.execute(INSERT_PLAYBOOK_SQL, row).rowcount
        for item in dump.records["retention"]:
            row = {**item, "tenant": tenant, "overrides": orjson.dumps(item["overrides"]).decode()}
            settings += conn.execute(INSERT_RETENTION_SQL, row).rowcount
        for item in dump.records["sharing"]:
            settings += conn.execute(INSERT_SHARING_SQL, {**item, "tenant": tenant}).rowcount
    return episodes, playbook, settings


# --- the commands -----------------------------------------------------------------------------


def _parse_since(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise SystemExit(f"agent-memory: --since: not an ISO date or time: {text!r}") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def run_export(settings: Settings, args: argparse.Namespace) -> int:
    since = _parse_since(args.since)
    if sys.stdout.isatty() and not args.output:
        print("agent-memory: refusing to write gzip to a terminal: use > FILE or -o FILE")
        return 2
    target: IO[bytes]
    target = open(args.output, "wb") if args.output else sys.stdout.buffer  # noqa: SIM115
    vectors = None
    if args.vectors:
        from agent_memory_retrieval.settings import RetrievalSettings

        vectors = VectorSource(settings.pg_dsn, RetrievalSettings())
    try:
        report = export_dump(
            settings.pg_dsn,
            target,
            tenant=args.tenant,
            project=args.project,
            since=since,
            progress=not args.quiet,
            vectors=vectors,
        )
    except psycopg.OperationalError as exc:
        print(f"agent-memory: Postgres unavailable: {exc}", file=sys.stderr)
        return UNREACHABLE
    finally:
        if args.output:
            target.close()
    counts = ", ".join(f"{n} {k}(s)" for k, n in report.counts.items())
    print(f"exported {counts}", file=sys.stderr)
    return 0


def run_import_dump(settings: Settings, path: str, argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="agent-memory import", description="Import an agent-memory export file."
    )
    parser.add_argument("--tenant", default="default", help="tenant of episodes and playbook")
    parser.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")
    parser.add_argument(
        "--wait-pins",
        type=float,
        default=120.0,
        help="seconds to wait for the pipeline to rebuild pinned memories (default 120)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(list(argv))
    try:
        dump = read_dump(Path(path).expanduser())
    except DumpError as exc:
        print(f"agent-memory: {path}: {exc}", file=sys.stderr)
        return 2

    from agent_memory_retrieval.settings import RetrievalSettings

    space = RetrievalSettings().vector_space

    async def main() -> ImportReport:
        async with AgentMemoryClient(
            gateway_url=settings.gateway_url,
            query_url=settings.query_url,
            token=token_from(args.token),
            timeout=60.0,
        ) as client:
            return await import_dump(
                dump,
                client,
                settings.pg_dsn,
                tenant=args.tenant,
                wait_pins_s=args.wait_pins,
                progress=not args.quiet,
                vector_space=space,
            )

    try:
        report = asyncio.run(main())
    except UnavailableError as exc:
        print(f"agent-memory: gateway unavailable at {settings.gateway_url}: {exc}")
        return UNREACHABLE
    except ApiError as exc:
        print(f"agent-memory: import refused: {exc.status}: {exc.message}")
        return REFUSED
    print(
        f"imported {report.events} event(s), {report.episodes_added} new episode(s), "
        f"{report.playbook_added} new playbook entr(ies), {report.pins_applied} pin(s), "
        f"{report.settings_added} project setting(s), "
        f"{sum(report.refusals.values())} event(s) refused{refusal_note(report.refusals)}"
    )
    if report.vectors_staged:
        print(
            f"  {report.vectors_staged} vector(s) staged: the embedder takes them instead of "
            "embedding those events again"
        )
    if report.vectors_left_out:
        print(f"  vectors left out: {report.vectors_left_out}; every event is embedded again")
    if report.pins_pending:
        print(
            f"  {len(report.pins_pending)} pin(s) wait for the pipeline to rebuild their "
            "memories: run the same import again later (it changes nothing else)"
        )
    return 0
