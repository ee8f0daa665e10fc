"""Per-project sharing strategies: separate, unified, team (docs/team.md)."""
