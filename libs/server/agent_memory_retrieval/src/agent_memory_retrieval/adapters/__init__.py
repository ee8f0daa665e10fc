"""The index adapters behind the ports: pgvector and Qdrant for vectors, Tantivy and OpenSearch
for BM25, the MiniLM embedder (ONNX or torch), and the factory that picks them from the settings."""
