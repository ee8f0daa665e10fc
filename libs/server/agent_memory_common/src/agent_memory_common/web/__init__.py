"""HTTP plumbing of the services: one error shape, request limits, and what a browser may ask."""
