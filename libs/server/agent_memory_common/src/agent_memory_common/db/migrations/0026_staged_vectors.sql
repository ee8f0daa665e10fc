-- Vectors brought by an import (``agent-memory import`` of an ``export --vectors`` dump, issue 57):
-- written before the import's events are posted, taken by the embedder when it meets each
-- event's document, instead of running the model (a million events: hours of embedder time on
-- a 2-core machine). A row is used only when its ``space`` (model, precision, word-piece cut) is
-- the embedder's and ``text_sha`` (SHA-256 of the text the embedder would embed) is that of the
-- document's text now; else the model runs, as without it, and the row stays for a later
-- reading (an event read before its previous turn was stored is read again once it is). The
-- embedder deletes a row in the transaction of the batch that takes it (a failed batch leaves it
-- for the redelivery), and with the document when an erasure deletes it; the import deletes
-- those of events the gateway refused (an erased id is never stored again) and, when it starts,
-- those an earlier import left unmatched for a day. No text is held here.
CREATE TABLE IF NOT EXISTS staged_vectors (
    tenant    text        NOT NULL,
    doc_id    text        NOT NULL,
    space     text        NOT NULL,
    text_sha  bytea       NOT NULL,
    vector    bytea       NOT NULL,  -- float32, little-endian
    staged_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, doc_id)
);
