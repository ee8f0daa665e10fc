"""Who is calling and may they: API keys with roles, and their issue, listing and revocation."""
