"""``agent-memory install|uninstall <runtime>``: hook a coding agent up to agent-memory.

One module per runtime computes a ``Plan`` (the files it would write, as text); ``base.apply``
shows it as diffs, keeps backups and writes atomically. Assets (the Claude Code plugin, the
OpenCode plugin) ship inside the package so an installed ``agent-memory`` can place them.
"""
