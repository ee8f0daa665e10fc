"""An import-linter contract type that import-linter lacks: "imports nothing but the stdlib".

Registered in the root ``pyproject.toml`` (``[tool.importlinter] contract_types``) and checked
by ``lint-imports`` in ``make lint``. The hooks run inside a coding agent on every prompt and
tool call, so ``agent_memory_hooks`` may import only the standard library and itself: no
third-party package (its start-up time would block the agent) and no other agent_memory
package (which would drag their dependencies in).

The graph must be built with ``include_external_packages = true``, so that every top-level
package a module imports (standard library included) is a node of it.
"""

from __future__ import annotations

import sys

import grimp
from importlinter import Contract, ContractCheck, fields, output

_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


class StdlibOnlyContract(Contract):
    """Each listed package imports only the standard library and its own modules.

    Configuration options:
        - modules: the packages held to it.
    """

    type_name = "stdlib_only"

    modules = fields.ListField(subfield=fields.ModuleField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        illegal: list[dict[str, object]] = []
        for package in self.modules:  # type: ignore[attr-defined]
            name = package.name
            own = {name} | graph.find_descendants(name)
            for importer in sorted(own):
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    if imported in own or imported.split(".")[0] in _STDLIB:
                        continue
                    details = graph.get_import_details(importer=importer, imported=imported)
                    illegal.append(
                        {
                            "importer": importer,
                            "imported": imported,
                            "lines": [(d["line_number"], d["line_contents"]) for d in details],
                        }
                    )
        return ContractCheck(kept=not illegal, metadata={"illegal": illegal})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for item in check.metadata["illegal"]:
            output.print_error(
                f"{item['importer']} imports {item['imported']}, which is not in the "
                "standard library:"
            )
            for line_number, contents in item["lines"]:
                output.indent_cursor()
                output.print_error(f"l.{line_number}: {contents}", bold=False)
            output.new_line()
