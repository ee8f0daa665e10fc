"""HTTP plumbing of the services: one error shape, request limits, what a browser may ask, and
the API docs pages served offline."""
