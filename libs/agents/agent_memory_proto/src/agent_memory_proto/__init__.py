"""Python stubs generated from the repository's ``proto/`` by ``make proto``: do not edit ``v1/``.

``agent_memory_proto.v1.event_pb2`` holds the messages (``Event``, ``EventBatch``,
``AcceptedResponse``), ``event_pb2_grpc`` the ``IngestService`` client stub and servicer.
``tests/test_proto_stubs.py`` regenerates them and fails on any difference.
"""
