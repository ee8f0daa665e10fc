"""Listings of what a tenant has stored: projects, a project's sessions, agents."""
