"""``POST /v1/recall``: the few memories a prompt needs, within a token budget, unasked."""
