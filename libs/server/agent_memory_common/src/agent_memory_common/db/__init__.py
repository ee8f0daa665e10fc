"""Postgres: migrations, pools, named SQL blocks and advisory locks."""
