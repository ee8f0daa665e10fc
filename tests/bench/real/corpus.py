"""The real-session corpus split by project into **dev** and **test** (issue 52, point 1).

Every ``questions*.py`` module beside this one holds the questions about one or more projects'
transcripts: ``questions.py`` (cctrace, sungather, BookMinder: the sessions the rules were read
and tuned on, so **dev**) and one ``questions_<project>.py`` per further project, which declares
``SPLIT`` (``"dev"`` or ``"test"``), ``PROJECT``, ``SOURCES`` ((project, transcript) pairs),
``QUESTIONS``, ``UNANSWERABLE`` and, when its sessions are not Claude Code's, ``RUNTIME`` (the
name ``agent-memory import`` takes). A whole project is on one side: the split is by project,
so that a rule written while reading dev can only be scored on sessions nobody read for it.

Test questions were written from the transcripts alone and committed before any change they
could inform; they are scored when an issue is resolved, and their figures are the ones the
docs quote, with dev printed beside them.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory_cli.readers import source
from tests.bench.real import questions as first_questions
from tests.bench.real.questions import RealQ

HERE = Path(__file__).resolve().parent
SPLITS = ("dev", "test")

# The sessions ``questions.py`` asks about (cctrace's written back from its export, BookMinder's
# from its console log: see SOURCES.md).
FIRST_SOURCES = (
    ("cctrace", HERE / "transcripts" / "cctrace" / "f33cdb42.jsonl"),
    ("sungather", HERE / "transcripts" / "sungather" / "d318c4ce.jsonl"),
    ("sungather", HERE / "transcripts" / "sungather" / "525d58e9.jsonl"),
    ("bookminder", HERE / "transcripts" / "bookminder" / "day-017.jsonl"),
)


@dataclass(frozen=True)
class Part:
    """One questions module: its split, the runtime whose reader reads its transcripts, the
    transcripts and the questions."""

    name: str
    split: str
    runtime: str
    sources: tuple[tuple[str, Path], ...]
    questions: tuple[RealQ, ...]
    unanswerable: tuple[tuple[str, str], ...]


def parts() -> list[Part]:
    """Every questions module of the corpus, ``questions.py`` first, then by name."""
    found = [
        Part(
            "questions",
            "dev",
            "claude-code",
            FIRST_SOURCES,
            first_questions.QUESTIONS,
            first_questions.UNANSWERABLE,
        )
    ]
    names = sorted(
        m.name for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("questions_")
    )
    for name in names:
        module = importlib.import_module(f"{__package__}.{name}")
        split = str(module.SPLIT)
        if split not in SPLITS:
            raise ValueError(f"{name}: SPLIT is {split!r}, not one of {SPLITS}")
        found.append(
            Part(
                name,
                split,
                str(getattr(module, "RUNTIME", "claude-code")),
                tuple(module.SOURCES),
                tuple(module.QUESTIONS),
                tuple(module.UNANSWERABLE),
            )
        )
    check_split_by_project(found)
    return found


def check_split_by_project(found: Sequence[Part]) -> None:
    """A project is dev or test, never both: its sessions were read for one purpose."""
    side: dict[str, str] = {}
    for part in found:
        for project in {p for p, _ in part.sources} | {q.project for q in part.questions}:
            if side.setdefault(project, part.split) != part.split:
                raise ValueError(f"project {project!r} is in both splits ({part.name})")


def _project(project: str, *_where: object) -> str:
    """Every event of a part's transcript in the project its questions are asked in, wherever
    the runtime says the session ran (its folder, branch: see the readers' ``ProjectOf``)."""
    return project


def read_part(part: Part) -> list[dict[str, Any]]:
    """The events of a part's transcripts, as ``agent-memory import <runtime>`` reads them with
    ``AGENT_MEMORY_PROJECT_ID`` set to the part's project: a Gemini CLI chat records only a hash
    of its folder, so without it its events would land in ``gemini-<hash>``."""
    reader = source(part.runtime).events
    events: list[dict[str, Any]] = []
    for project, path in part.sources:
        env = {"AGENT_MEMORY_PROJECT_ID": project}
        read, skipped = reader(path, env, functools.partial(_project, project))
        if skipped:
            raise RuntimeError(f"{path}: {skipped} lines could not be read")
        events.extend(read)
    return events
