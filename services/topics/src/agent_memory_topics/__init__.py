"""The topic clusterer: segment-level memories grouped into themes per tenant and project."""
