"""The indexing feed: what each pipeline message (or page of rows) does to the indexes, read
from Postgres, and the one write path every indexer and rebuild takes."""
