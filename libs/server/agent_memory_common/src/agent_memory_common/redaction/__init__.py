"""Secret redaction of ingested events, run before anything is published.

Callers import from ``engine`` (``Redactor`` and the read-side functions). The rest is its
parts: ``rules`` (the table), ``prefilter`` (the one scan that finds where rules may match),
``assignment`` and ``extractors`` (from a match to the span to redact) and ``values`` (whether a
value is a secret at all). Only the standard library is imported, by every module.
"""
