"""The search engine: the brainstem (plan, tiers, fusion, ranking, refinements, explain) and the
Postgres reads it is given as its fallback tiers and lookups. The query service serves it."""
