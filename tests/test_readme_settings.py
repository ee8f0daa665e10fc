"""README.md's configuration table names every setting the processes read, and nothing else.

Issue #56: the table had lost the pruner's port and the consumers' metrics ports, and named
a few settings without their service. The settings are taken from the settings classes
(``tests/settings_catalog.py``), so a field added to any of them fails here until the table
names it. A group may be one row (``AGENT_MEMORY_QUERY__SEARCH__*``) when a linked document
names each of its settings; an address (a host, a port, a URL) always has its own row, since
that is what a person running two stacks on one machine looks for.
"""

from __future__ import annotations

import re

from tests.settings_catalog import ROOT, all_variables, named_in

ADDRESS = re.compile(r"(HOST|PORT)$")


def configuration_rows() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows, "README.md has no configuration table"
    return rows


def first_cell(row: str) -> str:
    return row.split(" | ", 1)[0]


def test_the_table_names_every_setting_and_only_settings() -> None:
    known = set(all_variables())
    rows = [(row, named_in(first_cell(row), known)) for row in configuration_rows()]
    unknown = sorted(name for _, named in rows for name in named.unknown | named.unknown_top)
    assert not unknown, f"the table names what no process reads: {unknown}"

    explicit = {name for _, named in rows for name in named.explicit}
    missing = {
        name: "an address: its own row" if ADDRESS.search(name) else "not in the table"
        for name in known - explicit
    }
    for row, named in rows:
        if not named.wildcards:
            continue
        # a group's row: each of its settings named in a document the row links to
        linked = re.findall(r"\]\(([^)#]+)", row)
        assert linked, f"a group's row links no document: {row}"
        in_docs = set().union(
            *(named_in((ROOT / doc).read_text(), known).explicit for doc in linked)
        )
        for name in named.covered - explicit:
            if ADDRESS.search(name):
                continue
            if name in in_docs:
                missing.pop(name, None)
            else:
                missing[name] = f"in {first_cell(row)} but not named in {linked}"
    assert not missing, "\n".join(f"{k}: {v}" for k, v in sorted(missing.items()))
