"""What the event routes answer: ``agent_memory_api.events``."""

from agent_memory_api.events import Event, EventPage

__all__ = ["Event", "EventPage"]
