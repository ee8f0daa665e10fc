"""Secret redaction of ingested events, run before anything is published."""
