"""The bm25-indexer service: recorded events and TOC node versions into the text index."""
