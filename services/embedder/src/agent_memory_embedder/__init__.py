"""The embedder service: recorded events and TOC node versions into the vector index."""
