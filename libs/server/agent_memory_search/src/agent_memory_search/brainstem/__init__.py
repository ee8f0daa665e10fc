"""The retrieval brainstem: the reflexes between a plain-words question and the indexes.

Small modules of pure functions (time expressions, intent, plan, fusion, ranking) and one
executor (``engine``) that runs a plan against whichever tiers are up and says what it did.
"""
