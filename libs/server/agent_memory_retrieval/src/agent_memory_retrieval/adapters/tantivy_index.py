"""``TextIndex`` on Tantivy, the embedded BM25 engine: one folder, any number of processes.

Tantivy allows one ``IndexWriter`` per folder at a time (a lock file) and any number of readers,
in any process, which see a writer's commits after ``reload()``. The writer here is opened per
write call and released after its commit, so the bm25-indexer service and ``agent-memory admin
rebuild-index`` can take turns on the same folder instead of one locking the other out.

Every keyword field is indexed with the ``raw`` tokenizer (exact match) and prefixed with ``v:``
so that an empty value (``session_id=''``) is still a term. The searchable text is one ``body``
field (title + text + context) analysed with lowercase, English stop words and stemming; the
document itself is kept as a stored JSON blob, so hits rebuild the full ``IndexDoc``.

Segment nodes are also kept in a second, small folder of their own (``v1-segments``), which a
search of segments alone reads instead (the lift of every moment search asks for the segments
that match its words). There, a word's postings hold segments only, not the events around
them (33,611 of 1.2 million documents on the 1,000,000-event bench store), so the search reads
a few percent of the postings it reads in the whole index; its term statistics are
the segments' own. Every write goes to both folders under the main folder's writer lock, the
main folder first, and a writer fills the segment folder from the main one the first time it
finds it unmarked (an upgraded store); until the mark exists, searches use the main folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import orjson
import tantivy
from tantivy import (
    FieldType,
    Filter,
    Index,
    Occur,
    Query,
    SchemaBuilder,
    TextAnalyzer,
    TextAnalyzerBuilder,
    Tokenizer,
)

from agent_memory_common.core.logs import get_logger
from agent_memory_retrieval.docs import (
    DOC_TYPES,
    LEVELS,
    Hit,
    IndexDoc,
    SearchFilter,
    as_utc,
    doc_from_json,
    doc_to_json,
)
from agent_memory_retrieval.ports import IndexUnavailableError

log = get_logger(__name__)

SCHEMA_VERSION = "v1"  # a new folder per schema, so an upgrade never opens an old layout
SEGMENTS_SUFFIX = "-segments"  # the segment nodes' own folder, beside the main one
READY_MARK = "filled"  # in the segment folder: it holds every segment of the main folder
SEGMENT_LEVEL, SEGMENT_TYPE = "segment", "toc_node"
ANALYZER = "am_en"
KEYWORDS = ("id", "tenant", "project", "agent", "session", "type", "level", "kind")
WRITER_HEAP = 32_000_000
LOCK_WAIT_S = 30.0
WIDE_DEPTH = 5  # a wide search asks the words alone for this many candidates per result
# Fields whose every document holds one of a known set of values: a filter on them can
# exclude the values it does not want (``_one_of``); ``_document`` keeps the promise.
CLOSED_FIELDS: dict[str, tuple[str, ...]] = {"type": DOC_TYPES, "level": LEVELS}


def wide(flt: SearchFilter) -> bool:
    """Whether most documents pass ``flt``, so that the best matches of the words alone hold
    the best that pass it: no project, agent, session, period or kind, and events wanted
    (they are most of the index; a single tenant is the common case)."""
    return (
        flt.project_id is None
        and flt.agent_id is None
        and flt.session_id is None
        and flt.since is None
        and flt.until is None
        and flt.kinds is None
        and (flt.types is None or "event" in flt.types)
        and (flt.levels is None or "event" in flt.levels)
    )


def segments_only(flt: SearchFilter) -> bool:
    """Whether only segment nodes pass ``flt`` (the segment folder holds them all)."""
    return flt.levels is not None and set(flt.levels) == {SEGMENT_LEVEL}


def _is_segment(doc: IndexDoc) -> bool:
    return doc.level == SEGMENT_LEVEL and doc.type == SEGMENT_TYPE


def _in_segments(doc_id: str) -> bool:
    """Whether a document id may be a segment's (only TOC nodes are segments)."""
    return doc_id.startswith("node:")


def _analyzer() -> TextAnalyzer:
    return (
        TextAnalyzerBuilder(Tokenizer.simple())
        .filter(Filter.remove_long(40))
        .filter(Filter.lowercase())
        .filter(Filter.stopword("english"))
        .filter(Filter.stemmer("english"))
        .build()
    )


def _schema() -> tantivy.Schema:
    builder = SchemaBuilder()
    for name in KEYWORDS:
        builder.add_text_field(name, stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("body", stored=False, tokenizer_name=ANALYZER)
    builder.add_date_field("ts", indexed=True, fast=True)
    builder.add_float_field("salience", indexed=True, fast=True)
    builder.add_bytes_field("source", stored=True)
    return builder.build()


def _kw(value: str) -> str:
    return "v:" + value


class _Folder:
    """One Tantivy folder: opened lazily, a searcher per call, a writer per write."""

    def __init__(self, path: Path, schema: tantivy.Schema, analyzer: TextAnalyzer) -> None:
        self.path = path
        self._schema = schema
        self._analyzer = analyzer
        self._index: Index | None = None

    def open(self, *, create: bool) -> Index:
        """Open lazily: a reader started before the first write finds the folder later."""
        if self._index is not None:
            return self._index
        if create:
            self.path.mkdir(parents=True, exist_ok=True)
        elif not (self.path / "meta.json").is_file():
            raise IndexUnavailableError(f"no Tantivy index at {self.path} yet")
        try:
            index = Index(self._schema, path=str(self.path), reuse=True)
        except ValueError as exc:
            raise IndexUnavailableError(f"cannot open Tantivy index {self.path}: {exc}") from exc
        index.register_tokenizer(ANALYZER, self._analyzer)
        self._index = index
        return index

    def searcher(self) -> tantivy.Searcher:
        index = self.open(create=False)
        index.reload()  # pick up commits made by the writer process since the last search
        return index.searcher()

    def writer(self) -> tantivy.IndexWriter:
        index = self.open(create=True)
        deadline = time.monotonic() + LOCK_WAIT_S
        delay = 0.02
        while True:
            try:
                return index.writer(heap_size=WRITER_HEAP, num_threads=1)
            except ValueError as exc:
                if "LockBusy" not in str(exc) or time.monotonic() > deadline:
                    raise IndexUnavailableError(f"Tantivy writer lock: {exc}") from exc
                time.sleep(delay)  # another process (indexer or rebuild) is committing
                delay = min(delay * 2, 0.5)

    def close(self) -> None:
        self._index = None


class TantivyIndex:
    """A Tantivy index folder (and its segment folder); ``writer=False`` instances refuse to
    write."""

    def __init__(self, root: Path, *, writer: bool) -> None:
        self._writer = writer
        self._schema = _schema()
        self._analyzer = _analyzer()
        self._main = _Folder(root / SCHEMA_VERSION, self._schema, self._analyzer)
        self._segments = _Folder(
            root / (SCHEMA_VERSION + SEGMENTS_SUFFIX), self._schema, self._analyzer
        )
        self._segments_filled = False  # seen marked once: a mark is never taken back
        self._write_lock = asyncio.Lock()

    @property
    def path(self) -> Path:
        return self._main.path

    @property
    def segments_path(self) -> Path:
        return self._segments.path

    def segments_filled(self) -> bool:
        """Whether the segment folder holds every segment (searches of segments read it)."""
        if not self._segments_filled:
            self._segments_filled = (self._segments.path / READY_MARK).is_file()
        return self._segments_filled

    # --- writes -------------------------------------------------------------------------------

    def _document(self, doc: IndexDoc) -> tantivy.Document:
        for field, value in (("type", doc.type), ("level", doc.level)):
            if value not in CLOSED_FIELDS[field]:  # a filter excluding the others would keep it
                raise ValueError(
                    f"IndexDoc {doc.id}: {field} {value!r} is not one of {CLOSED_FIELDS[field]}"
                )
        body = doc.match_text()
        return tantivy.Document(
            id=_kw(doc.id),
            tenant=_kw(doc.tenant),
            project=_kw(doc.project_id),
            agent=_kw(doc.agent_id),
            session=_kw(doc.session_id),
            type=_kw(doc.type),
            level=_kw(doc.level),
            kind=_kw(doc.kind),
            body=body,
            ts=as_utc(doc.ts),
            salience=float(doc.salience),
            source=orjson.dumps(doc_to_json(doc)),
        )

    def _apply(
        self,
        writer: tantivy.IndexWriter,
        upserts: Sequence[IndexDoc],
        deletes: Sequence[str],
        clear: bool,
    ) -> None:
        if clear:
            writer.delete_all_documents()
        for doc_id in deletes:
            writer.delete_documents_by_term("id", _kw(doc_id))
        # the last copy of an id in one call wins, as with a sequence of upserts
        latest = {doc.id: doc for doc in upserts}
        for doc in latest.values():
            writer.delete_documents_by_term("id", _kw(doc.id))
            writer.add_document(self._document(doc))

    @staticmethod
    @contextlib.contextmanager
    def _held(folder: _Folder) -> Iterator[tantivy.IndexWriter]:
        """A writer of ``folder`` (its lock held) for the block, which commits what it keeps;
        an exception rolls back what was not committed. The lock is released after merges."""
        writer = folder.writer()
        try:
            yield writer
        except BaseException:
            with contextlib.suppress(Exception):
                writer.rollback()
            raise
        finally:
            writer.wait_merging_threads()  # finish merges and release the lock file

    def _commit(self, folder: _Folder, work: Callable[[tantivy.IndexWriter], None]) -> None:
        """``work`` on a writer of ``folder``, committed."""
        with self._held(folder) as writer:
            work(writer)
            writer.commit()

    def _write(self, upserts: Sequence[IndexDoc], deletes: Sequence[str], clear: bool) -> None:
        """Both folders, the main one first, all under its writer lock: a writer of another
        process waits for both, so the segment folder never takes an older write last. A kill
        between the two commits leaves the write unacknowledged: it is done again, whole."""
        if not self._writer:
            raise PermissionError("this TantivyIndex was opened read-only (writer=False)")
        with self._held(self._main) as writer:
            if not self.segments_filled():
                self._fill_segments()  # before this write, from what the main folder holds
            self._apply(writer, upserts, deletes, clear)
            writer.commit()
            segment_upserts = [d for d in upserts if _is_segment(d)]
            segment_deletes = [i for i in deletes if _in_segments(i)]
            if clear or segment_upserts or segment_deletes:
                self._commit(
                    self._segments,
                    lambda w: self._apply(w, segment_upserts, segment_deletes, clear),
                )

    def _fill_segments(self) -> None:
        """Copy every segment of the main folder into the segment folder, then mark it.

        Called with the main folder's writer lock held, so no other process changes the main
        folder meanwhile (an erasure's deletes included): the copy is exactly what it holds.
        A kill before the mark leaves the folder unmarked, and the next writer fills it again.
        """
        started = time.monotonic()
        docs: list[IndexDoc] = []
        if (self._main.path / "meta.json").is_file():
            searcher = self._main.searcher()
            segments = Query.boolean_query(
                [
                    (Occur.Must, self._term("level", SEGMENT_LEVEL)),
                    (Occur.Must, self._term("type", SEGMENT_TYPE)),
                ]
            )
            count = searcher.search(segments, 1, count=True)
            total = int(getattr(count, "count", 0) or 0)
            if total:
                found = searcher.search(segments, total, count=False)
                docs = [self._hit(searcher, 0.0, address).doc for _, address in found.hits]
        self._commit(self._segments, lambda w: self._apply(w, docs, (), True))
        mark = self._segments.path / READY_MARK
        partial = mark.with_suffix(".partial")
        partial.write_text(f"{len(docs)} segments copied from {self._main.path.name}\n")
        os.replace(partial, mark)
        self._segments_filled = True
        log.info(
            "tantivy.segments_filled",
            segments=len(docs),
            seconds=round(time.monotonic() - started, 2),
        )

    def _upgrade(self) -> None:
        if not self._writer or self.segments_filled():
            return
        with self._held(self._main):  # the lock: no other process writes while it is filled
            if not self.segments_filled():
                self._fill_segments()

    async def upgrade(self) -> None:
        """Fill the segment folder of a store written before it existed (see ``_write``)."""
        async with self._write_lock:
            await asyncio.to_thread(self._upgrade)

    async def upsert(self, docs: Sequence[IndexDoc]) -> None:
        if not docs:
            return
        async with self._write_lock:
            await asyncio.to_thread(self._write, docs, (), False)

    async def delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        async with self._write_lock:
            await asyncio.to_thread(self._write, (), ids, False)

    async def clear(self) -> None:
        async with self._write_lock:
            await asyncio.to_thread(self._write, (), (), True)

    # --- erasure: the bytes of deleted documents ----------------------------------------------

    def _expunge_folder(self, folder: _Folder, writer: tantivy.IndexWriter) -> int:
        """Rewrite the live documents of every segment of ``folder`` that holds deleted ones,
        so that those segments hold no live document and are dropped; returns how many.

        A delete only marks a document in its segment's ``.del`` bitset: its stored source (the
        whole text, LZ4-compressed in the ``.store`` file) stays until the segment is merged,
        and the default merge policy never merges a segment for its deletes alone. tantivy-py
        has no call to merge, so the survivors are written again (a delete of their id and the
        same document added, as an upsert does): the old segment then holds no live document,
        and the commit drops it and its files. Called with ``writer`` (the folder's lock) held,
        so no other process commits meanwhile: what is read is what is rewritten.
        """
        meta_path = folder.path / "meta.json"
        if not meta_path.is_file():
            return 0
        segments = orjson.loads(meta_path.read_bytes())["segments"]
        deleted = [int((s.get("deletes") or {}).get("num_deleted_docs") or 0) for s in segments]
        touched = [(o, int(s["max_doc"])) for o, s in enumerate(segments) if deleted[o]]
        if not touched:
            return 0
        searcher = folder.searcher()
        live_total = sum(int(s["max_doc"]) for s in segments) - sum(deleted)
        # a searcher's segment ordinals are meta.json's order; a different count means another
        # generation (a merge of this writer meanwhile): try again later
        if searcher.num_segments != len(segments) or searcher.num_docs != live_total:
            raise IndexUnavailableError(f"Tantivy {folder.path} changed while expunging deletes")
        rewritten = 0
        for ordinal, max_doc in touched:
            for local in range(max_doc):
                address = tantivy.DocAddress(ordinal, local)
                doc = self._hit(searcher, 0.0, address).doc
                live = searcher.search(self._term("id", doc.id), 4, count=False).hits
                if not any(a.segment_ord == ordinal and a.doc == local for _, a in live):
                    continue  # this copy is the deleted one
                writer.delete_documents_by_term("id", _kw(doc.id))
                writer.add_document(self._document(doc))
                rewritten += 1
        writer.commit()
        writer.garbage_collect_files()  # the dropped segments' files, now unreferenced
        return rewritten

    def _expunge(self) -> int:
        if not self._writer:
            raise PermissionError("this TantivyIndex was opened read-only (writer=False)")
        if not (self._main.path / "meta.json").is_file():
            return 0
        started = time.monotonic()
        with self._held(self._main) as writer:  # the main folder's lock covers both, as _write
            rewritten = self._expunge_folder(self._main, writer)
            if (self._segments.path / "meta.json").is_file():
                with self._held(self._segments) as segment_writer:
                    rewritten += self._expunge_folder(self._segments, segment_writer)
        log.info(
            "tantivy.deletes_expunged",
            rewritten=rewritten,
            seconds=round(time.monotonic() - started, 2),
        )
        return rewritten

    async def expunge_deletes(self) -> int:
        """Leave no byte of a deleted document in the folders (an erasure's last step): the
        segments holding deleted documents are rewritten without them and their files removed.
        Costs a read and a write of every live document of those segments."""
        async with self._write_lock:
            return await asyncio.to_thread(self._expunge)

    # --- reads --------------------------------------------------------------------------------

    def _term(self, field: str, value: str) -> Query:
        return Query.term_query(self._schema, field, _kw(value))

    def _one_of(self, field: str, values: Sequence[str]) -> list[tuple[Occur, Query]]:
        """Clauses that keep the documents whose ``field`` holds one of ``values``.

        Tantivy reads a set of terms as a union of their postings, and a filter that is a
        union is read whole (a union cannot skip ahead), so asking for events and grips read
        the postings of nearly every document. A field of a closed set of values (``type``,
        ``level``) excludes the values left out instead; an excluded term is only looked up
        for the documents the words found. On the 1,000,000-event bench-scale store (one
        project's events and grips, top 40, the same answers): 6.2 -> 3.8 ms p50."""
        wanted = list(dict.fromkeys(values))
        universe = CLOSED_FIELDS.get(field)
        if universe is not None:
            wanted = [v for v in wanted if v in universe]
            if len(wanted) == len(universe):
                return []  # every value: no clause
            if len(wanted) > 1:
                return [(Occur.MustNot, self._term(field, v)) for v in universe if v not in wanted]
        if not wanted:
            return [(Occur.Must, Query.empty_query())]
        if len(wanted) == 1:
            return [(Occur.Must, self._term(field, wanted[0]))]
        return [(Occur.Must, Query.term_set_query(self._schema, field, [_kw(v) for v in wanted]))]

    def _filter(self, flt: SearchFilter) -> Query:
        parts: list[tuple[Occur, Query]] = [(Occur.Must, self._term("tenant", flt.tenant))]
        for field, value in (
            ("project", flt.project_id),
            ("agent", flt.agent_id),
            ("session", flt.session_id),
        ):
            if value is not None:
                parts.append((Occur.Must, self._term(field, value)))
        for field, values in (("type", flt.types), ("kind", flt.kinds), ("level", flt.levels)):
            if values is not None:
                parts.extend(self._one_of(field, values))
        if flt.since is not None or flt.until is not None:
            lower = as_utc(flt.since) if flt.since is not None else None
            if flt.until is None:
                ts_range = Query.range_query(self._schema, "ts", FieldType.Date, lower, None)
            else:
                upper = as_utc(flt.until)
                ts_range = Query.range_query(
                    self._schema, "ts", FieldType.Date, lower, upper, include_upper=False
                )
            parts.append((Occur.Must, ts_range))
        return Query.const_score_query(Query.boolean_query(parts), 0.0)

    def _text_query(self, text: str, scope: Query | None = None) -> Query | None:
        """Any of the words of ``text``, each word's BM25 summed; with ``scope`` (a filter
        scoring 0), each word is matched within it before the words are joined.

        The same documents and scores either way, but a project's search is cheaper scoped
        word by word: the join of the words then runs over the project's postings instead of
        the whole index's. On the 1,000,000-event bench-scale store (300 questions, 30
        projects, alone in a process): one project's events and grips, top 40, 8.8 -> 7.5 ms
        p50; its segments, top 10, 3.3 -> 2.7 ms; the same answers, scores included. Scoping
        each word by the whole filter instead was slower (21.8 ms): the filter's other terms
        (tenant, types) are then joined once per word. Through the query service, paired
        (``bench-scale --remeasure --ab-python``, two runs): a BM25-only search 1.4 ms faster
        per question (faster for 62-67 % of them), a hybrid one 0.7-1.4 ms; a full search
        within the noise (+0.6, -0.4 ms), its time being the vector tier's."""
        tokens = self._analyzer.analyze(text)  # stop words are not indexed: drop them here too
        if not tokens:
            return None
        words = [Query.term_query(self._schema, "body", t) for t in dict.fromkeys(tokens)]
        if scope is not None:
            words = [Query.boolean_query([(Occur.Must, w), (Occur.Must, scope)]) for w in words]
        return Query.boolean_query([(Occur.Should, w) for w in words])

    def _search(self, query: str, flt: SearchFilter, limit: int) -> list[Hit]:
        scope = None  # a project's search is never wide: its words alone are not needed
        if flt.project_id is not None:
            scope = Query.const_score_query(self._term("project", flt.project_id), 0.0)
        text = self._text_query(query, scope)
        if text is None or limit <= 0:
            return []
        folder, engine_filter = self._main, flt
        if segments_only(flt) and self.segments_filled():
            # segments alone: from their own folder, where every document is a segment node
            folder = self._segments
            if flt.types is None or SEGMENT_TYPE in flt.types:
                engine_filter = replace(flt, types=None, levels=None)
        full = Query.boolean_query([(Occur.Must, text), (Occur.Must, self._filter(engine_filter))])
        for attempt in (1, 2):
            searcher = folder.searcher()
            try:
                if wide(engine_filter):  # the segment folder: wide without a project
                    found = self._search_wide(searcher, text, flt, limit)
                    if found is not None:
                        return found
                result = searcher.search(full, limit, count=False)
                return [self._hit(searcher, score, address) for score, address in result.hits]
            except ValueError as exc:  # a segment merged away by the writer process: reload
                if attempt == 2:
                    raise IndexUnavailableError(f"Tantivy search failed: {exc}") from exc
        return []

    def _search_wide(
        self, searcher: tantivy.Searcher, text: Query, flt: SearchFilter, limit: int
    ) -> list[Hit] | None:
        """The words alone, best ``WIDE_DEPTH * limit`` first, filtered here: the first
        ``limit`` that pass are exactly the filtered query's (the same scores: the filter adds
        0), or None when too few passed to be sure.

        A disjunction of words alone is searched with block-max WAND, which skips the blocks
        of documents that cannot reach the top; under a filter Tantivy scores every document
        holding any of the words. On the 1,000,000-event store, over every project: 17.7 ms
        p50 filtered, ~5 ms this way. Only for a filter most documents pass (``wide``)."""
        depth = limit * WIDE_DEPTH
        result = searcher.search(text, depth, count=False)
        hits: list[Hit] = []
        for score, address in result.hits:
            hit = self._hit(searcher, score, address)
            if flt.matches(hit.doc):
                hits.append(hit)
                if len(hits) == limit:
                    return hits
        return hits if len(result.hits) < depth else None  # fewer: every match was seen

    @staticmethod
    def _hit(searcher: tantivy.Searcher, score: float, address: tantivy.DocAddress) -> Hit:
        source = searcher.doc(address).get_first("source")
        if not isinstance(source, bytes):
            raise IndexUnavailableError(f"Tantivy document without source: {address}")
        doc = doc_from_json(orjson.loads(source))
        return Hit(id=doc.id, score=float(score), doc=doc)

    async def search(self, query: str, flt: SearchFilter, limit: int) -> list[Hit]:
        """Best first; hits of one score in id order.

        Tantivy returns equal scores in the order the documents sit in its segments, which
        merges and the order of indexing change: an event and the turn after it, whose context
        holds the same words, score exactly alike and came back either way round. Id order
        makes one store answer alike however it was built (OpenSearch sorts the same way).
        Ties straddling ``limit`` are still cut in Tantivy's order: the id is not a fast field
        it could sort by."""
        hits = await asyncio.to_thread(self._search, query, flt, limit)
        return sorted(hits, key=lambda h: (-h.score, h.id))

    def _count(self, tenant: str) -> int:
        searcher = self._main.searcher()
        result = searcher.search(self._term("tenant", tenant), 1, count=True)
        return int(getattr(result, "count", 0) or 0)  # ``count`` is missing from the stubs

    async def count(self, tenant: str) -> int:
        return await asyncio.to_thread(self._count, tenant)

    async def healthy(self) -> bool:
        try:
            await asyncio.to_thread(self._main.searcher)
        except (IndexUnavailableError, ValueError, OSError):
            return False
        return True

    async def close(self) -> None:
        self._main.close()
        self._segments.close()
