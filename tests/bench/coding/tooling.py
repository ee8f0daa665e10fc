"""Realistic tool output for the generated sessions: pytest, ruff, mypy, cargo, git, alembic.

The lint and type-checker messages are the tools' own wording (ruff, mypy, clippy, git hints),
many of which hold the cue words of the memory-kind classifier ("avoid", "do not use", "need
to", "should", "prefer"): tool output a memory should never take for a rule of the team.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

RUFF_RULES: tuple[tuple[str, str], ...] = (
    ("E501", "Line too long (107 > 100)"),
    ("F401", "`typing.Optional` imported but unused"),
    ("B006", "Do not use mutable data structures for argument defaults"),
    ("B904", "Within an `except` clause, raise exceptions with `raise ... from err`"),
    ("SIM102", "Use a single `if` statement instead of nested `if` statements"),
    (
        "SIM108",
        "Use ternary operator `status = 'ok' if paid else 'due'` instead of `if`-`else`-block",
    ),
    ("UP007", "Use `X | Y` for type annotations"),
    ("UP035", "Import from `collections.abc` instead: `Callable`"),
    ("TRY003", "Avoid specifying long messages outside the exception class"),
    ("RET505", "Unnecessary `else` after `return` statement"),
    (
        "PLR2004",
        "Magic value used in comparison, consider replacing `100` with a constant variable",
    ),
    (
        "PT011",
        "`pytest.raises(ValueError)` is too broad, set the `match` parameter or use a more specific exception",
    ),
    ("E711", "Comparison to `None` should be `cond is None`"),
    ("RUF005", "Consider `[*items, extra]` instead of concatenation"),
    ("PERF401", "Use a list comprehension to create a transformed list"),
    ("C408", "Unnecessary `dict()` call (rewrite as a literal)"),
    ("PLW0603", "Using the global statement to update `_engine` is discouraged"),
    ("ERA001", "Found commented-out code"),
    ("ANN401", "Dynamically typed expressions (typing.Any) are disallowed in `payload`"),
    ("PTH123", "`open()` should be replaced by `Path.open()`"),
    ("S101", "Use of `assert` detected"),
    ("FBT001", "Boolean-typed positional argument in function definition"),
    ("D401", "First line of docstring should be in imperative mood"),
    ("ARG002", "Unused method argument: `request`"),
)

MYPY_ERRORS: tuple[str, ...] = (
    'error: Function is missing a return type annotation  [no-untyped-def]\n    note: Use "-> None" if function does not return a value',
    'error: Incompatible return value type (got "int | None", expected "int")  [return-value]',
    "error: Missing return statement  [return]",
    'error: Need type annotation for "rows" (hint: "rows: list[<type>] = ...")  [var-annotated]',
    'error: Item "None" of "Payment | None" has no attribute "amount_cents"  [union-attr]',
    'error: Argument 1 to "capture" has incompatible type "str"; expected "UUID"  [arg-type]',
    'error: Returning Any from function declared to return "dict[str, int]"  [no-any-return]',
    'error: Call to untyped function "sign" in typed context  [no-untyped-call]',
    'error: Unused "type: ignore" comment  [unused-ignore]',
)

CLIPPY_WARNINGS: tuple[tuple[str, str], ...] = (
    ("clippy::needless_return", "unneeded `return` statement"),
    ("clippy::redundant_clone", "redundant clone"),
    ("clippy::unwrap_used", "used `unwrap()` on a `Result` value"),
    ("clippy::too_many_arguments", "this function has too many arguments (8/7)"),
    ("clippy::large_enum_variant", "large size difference between variants"),
    ("clippy::manual_let_else", "this could be rewritten as `let...else`"),
    ("clippy::module_name_repetitions", "item name starts with its containing module's name"),
    ("unused_variables", "unused variable: `area`"),
)
CLIPPY_HELP: dict[str, str] = {
    "clippy::needless_return": "help: remove `return`",
    "clippy::redundant_clone": "help: remove this",
    "clippy::unwrap_used": "help: if you don't want to handle the `Err` case gracefully, "
    "consider using `expect()` to provide a better panic message",
    "clippy::too_many_arguments": "help: for further information visit "
    "https://rust-lang.github.io/rust-clippy/master/index.html#too_many_arguments",
    "clippy::large_enum_variant": "help: consider boxing the large fields to reduce the "
    "total size of the enum",
    "clippy::manual_let_else": "help: consider writing: `let Some(pane) = panes.get(id) else "
    "{ return };`",
    "clippy::module_name_repetitions": "help: you should avoid repeating the module name",
    "unused_variables": "help: if this is intentional, prefix it with an underscore: `_area`",
}

MISC_OUTPUT: tuple[str, ...] = (
    "hint: You have divergent branches and need to specify how to reconcile them.\n"
    "hint: You can do so by running one of the following commands sometime before\n"
    "hint: your next pull:\nhint:\nhint:   git config pull.rebase false  # merge\n"
    "hint:   git config pull.rebase true   # rebase\n"
    "fatal: Need to specify how to reconcile divergent branches.",
    "To github.com:acme/payments-api.git\n ! [rejected]        main -> main (fetch first)\n"
    "error: failed to push some refs to 'github.com:acme/payments-api.git'\n"
    "hint: Updates were rejected because the remote contains work that you do not\n"
    "hint: have locally. You may want to first integrate the remote changes\n"
    "hint: (e.g., 'git pull ...') before pushing again.",
    "[notice] A new release of pip is available: 24.2 -> 25.3\n"
    "[notice] To update, run: pip install --upgrade pip",
    "warning: `VIRTUAL_ENV=/home/dev/.venv` does not match the project environment path "
    "`.venv` and will be ignored; use `--active` to target the active environment instead",
    "DeprecationWarning: datetime.datetime.utcnow() is deprecated and scheduled for removal in "
    "a future version. Use timezone-aware objects to represent datetimes in UTC: "
    "datetime.datetime.now(datetime.UTC).",
    "npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory. "
    "Do not use it.",
    "warning: the following packages must be rebuilt: openssl-sys",
)


def pytest_output(
    rng: random.Random,
    test_files: Sequence[str],
    failures: Sequence[tuple[str, str]] = (),
    warnings: int = 0,
) -> str:
    """A ``pytest -q`` run: dots, the failures (test id, error text), the summary line."""
    passed = rng.randint(18, 140)
    lines: list[str] = []
    dots = "." * passed + "F" * len(failures)
    for start in range(0, len(dots), 60):
        chunk = dots[start : start + 60]
        pct = min(100, int(100 * (start + len(chunk)) / max(len(dots), 1)))
        lines.append(f"{chunk:<60} [{pct:>3}%]")
    if failures:
        lines.append("=" * 30 + " FAILURES " + "=" * 30)
        for test_id, error in failures:
            name = test_id.split("::")[-1]
            lines.append("_" * 20 + f" {name} " + "_" * 20)
            lines.append(error)
        lines.append("=" * 26 + " short test summary info " + "=" * 26)
        for test_id, error in failures:
            lines.append(f"FAILED {test_id} - {error.splitlines()[-1].strip()[:90]}")
    if warnings:
        lines.append("=" * 29 + " warnings summary " + "=" * 29)
        lines.append(
            f"{rng.choice(test_files)}::test_{rng.choice(['capture', 'settle', 'webhook'])}\n"
            "  DeprecationWarning: datetime.datetime.utcnow() is deprecated and scheduled for "
            "removal in a future version. Use timezone-aware objects to represent datetimes in "
            "UTC: datetime.datetime.now(datetime.UTC)."
        )
    secs = rng.uniform(0.8, 14.0)
    parts = ([f"{len(failures)} failed"] if failures else []) + [f"{passed} passed"]
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings > 1 else ''}")
    lines.append(f"{', '.join(parts)} in {secs:.2f}s")
    return "\n".join(lines)


def ruff_output(rng: random.Random, files: Sequence[str], findings: int) -> tuple[str, int]:
    """``ruff check`` with ``findings`` messages; its exit code."""
    if findings == 0:
        return "All checks passed!", 0
    lines: list[str] = []
    fixable = 0
    for rule, message in rng.sample(RUFF_RULES, findings):
        path = rng.choice(files)
        line, col = rng.randint(3, 240), rng.randint(1, 60)
        lines.append(f"{path}:{line}:{col}: {rule} {message}")
        if rule in ("F401", "UP007", "UP035", "C408", "SIM108", "E711", "RUF005"):
            fixable += 1
    lines.append(f"Found {findings} error{'s' if findings > 1 else ''}.")
    if fixable:
        lines.append(f"[*] {fixable} fixable with the `--fix` option.")
    return "\n".join(lines), 1


def mypy_output(rng: random.Random, files: Sequence[str], errors: int) -> tuple[str, int]:
    if errors == 0:
        return f"Success: no issues found in {rng.randint(30, 90)} source files", 0
    lines = []
    for error in rng.sample(MYPY_ERRORS, errors):
        path = rng.choice(files)
        line = rng.randint(5, 300)
        first, *rest = error.split("\n")
        lines.append(f"{path}:{line}: {first}")
        lines.extend(f"{path}:{line}: {r.strip()}" for r in rest)
    checked = rng.randint(30, 90)
    lines.append(
        f"Found {errors} error{'s' if errors > 1 else ''} in {min(errors, len(files))} "
        f"file{'s' if errors > 1 else ''} (checked {checked} source files)"
    )
    return "\n".join(lines), 1


def cargo_test_output(
    rng: random.Random, crate: str, failures: Sequence[tuple[str, str]] = ()
) -> tuple[str, int]:
    passed = rng.randint(20, 90)
    lines = [
        f"   Compiling {crate} v0.{rng.randint(3, 9)}.{rng.randint(0, 9)} (/home/dev/{crate})",
        f"    Finished `test` profile [unoptimized + debuginfo] target(s) in "
        f"{rng.uniform(3, 40):.2f}s",
        f"     Running unittests src/main.rs (target/debug/deps/{crate}-"
        f"{rng.getrandbits(64):016x})",
        "",
        f"running {passed + len(failures)} tests",
    ]
    for name, _ in failures:
        lines.append(f"test {name} ... FAILED")
    lines.append(
        f"test result: {'FAILED' if failures else 'ok'}. {passed} passed; "
        f"{len(failures)} failed; 0 ignored; 0 measured; 0 filtered out; finished in "
        f"{rng.uniform(0.1, 3):.2f}s"
    )
    if failures:
        lines.append("\nfailures:\n")
        for name, error in failures:
            lines.append(f"---- {name} stdout ----\n{error}\n")
        lines.append(f"error: test failed, to rerun pass `--bin {crate}`")
    return "\n".join(lines), 101 if failures else 0


def clippy_output(rng: random.Random, files: Sequence[str], findings: int) -> tuple[str, int]:
    lines = ["    Checking tdk v0.4.0 (/home/dev/termdeck)"]
    for lint, message in rng.sample(CLIPPY_WARNINGS, findings):
        path = rng.choice(files)
        line = rng.randint(10, 400)
        lines.append(f"warning: {message}\n  --> {path}:{line}:{rng.randint(5, 40)}")
        lines.append(f"   = {CLIPPY_HELP[lint]}")
        lines.append(f"   = note: `#[warn({lint})]` on by default")
    lines.append(
        f'warning: `tdk` (bin "tdk") generated {findings} warning{"s" if findings != 1 else ""}'
        if findings
        else ""
    )
    lines.append(
        f"    Finished `dev` profile [unoptimized + debuginfo] target(s) in {rng.uniform(1, 9):.2f}s"
    )
    return "\n".join(line for line in lines if line), 0
