"""The wire contracts: the event envelope, the messages on NATS, their subjects and the memory
rules they carry."""
