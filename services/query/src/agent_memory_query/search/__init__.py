"""Search: ``/v1/search``, the brainstem that plans and ranks it, and what it opens at start."""
