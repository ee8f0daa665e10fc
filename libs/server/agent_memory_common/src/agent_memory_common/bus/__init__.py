"""NATS JetStream: the link, publishing, pull batches, streams, the idempotent consumer runner
and erasure participation."""
