"""Search: ``/v1/search`` over the engine of ``agent_memory_search``, what it opens at start
(``runtime``), and the TOC and topic tiers, which read this service's own stores."""
