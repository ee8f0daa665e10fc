"""Every setting the processes read, by its environment variable, and where the docs name one.

Built from the settings classes themselves (pydantic-settings: ``AGENT_MEMORY_`` + the field,
``__`` into a nested model), so the README table and the docs are compared with what the code
reads, not with a second list kept by hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "AGENT_MEMORY_"


def settings_classes() -> list[type[BaseSettings]]:
    """The settings class of every process, the shared ones included."""
    from agent_memory_bm25.settings import Settings as Bm25
    from agent_memory_cli.cleanup import CleanupSettings
    from agent_memory_cli.settings import Settings as Cli
    from agent_memory_common.core.settings import CommonSettings
    from agent_memory_dashboard.settings import Settings as Dashboard
    from agent_memory_embedder.settings import Settings as Embedder
    from agent_memory_gateway.settings import Settings as Gateway
    from agent_memory_pruner.settings import Settings as Pruner
    from agent_memory_query.episodes.routes import PlaybookSettings
    from agent_memory_query.settings import Settings as Query
    from agent_memory_recorder.settings import Settings as Recorder
    from agent_memory_retrieval.lifecycle.topic_prune import TopicPruneSettings
    from agent_memory_retrieval.settings import RetrievalSettings
    from agent_memory_segmenter.settings import Settings as Segmenter
    from agent_memory_summarizer.settings import Settings as Summarizer
    from agent_memory_topics.settings import Settings as Topics

    return [
        CommonSettings,
        RetrievalSettings,
        TopicPruneSettings,
        Gateway,
        Recorder,
        Segmenter,
        Summarizer,
        Embedder,
        Bm25,
        Topics,
        Query,
        PlaybookSettings,
        Pruner,
        Dashboard,
        Cli,
        CleanupSettings,
    ]


def _model(annotation: Any) -> type[BaseModel] | None:
    return (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )


def _leaves(prefix: str, fields: dict[str, FieldInfo]) -> Iterator[tuple[str, FieldInfo]]:
    for name, info in fields.items():
        nested = _model(info.annotation)
        if nested is None:
            yield prefix + name.upper(), info
        else:
            yield from _leaves(f"{prefix}{name.upper()}__", nested.model_fields)


def variables(cls: type[BaseSettings]) -> dict[str, FieldInfo]:
    """``AGENT_MEMORY_GATEWAY__PORT`` -> its field, for every leaf of ``cls``."""
    return dict(_leaves(PREFIX, cls.model_fields))


def all_variables() -> dict[str, FieldInfo]:
    found: dict[str, FieldInfo] = {}
    for cls in settings_classes():
        for name, info in variables(cls).items():
            found.setdefault(name, info)
    return found


FULL = re.compile(r"AGENT_MEMORY_[A-Z0-9_<>]*[A-Z0-9>](?:__(?:\*|\.\.\.)?)?")
# a short form right after a full name: ``__PORT`` (another field of the same model),
# ``..._LAG_DAYS`` (another end of the same name), ``HOST/PORT``
SHORT = re.compile(r"(?<![A-Za-z0-9_])(?:\.\.\._|__|/)[A-Z][A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_(])")
# after a group (``AGENT_MEMORY_RECORDER__DEDUP__*``), its fields: ``ENABLED``, ``WINDOW_S``
BARE = re.compile(r"(?<=`)[A-Z][A-Z0-9_]*[A-Z0-9](?=`)")


def _complete(last: str, token: str, known: set[str]) -> str | None:
    """The known setting a short form after ``last`` stands for, if any."""
    tail = token.lstrip("._/")
    if token.startswith("..._"):
        cuts = [i for i, c in enumerate(last) if c == "_" and i >= len(PREFIX)]
        candidates = [last[: i + 1] + tail for i in reversed(cuts)]
    else:
        candidates = [last[: last.rfind("__") + 2] + tail] if "__" in last else []
    return next((c for c in candidates if c in known), None)


@dataclass
class Named:
    """What a text names: settings by name (``explicit``), groups by a wildcard
    (``AGENT_MEMORY_SEGMENTER__*``: the settings it covers in ``covered``, the stem in
    ``wildcards``), and names that are no setting (``unknown``: nested ones, and top-level ones
    in ``unknown_top``, which another program may read, e.g. the client's
    ``AGENT_MEMORY_TOKEN``)."""

    explicit: set[str] = field(default_factory=set)
    wildcards: set[str] = field(default_factory=set)
    covered: set[str] = field(default_factory=set)
    unknown: set[str] = field(default_factory=set)
    unknown_top: set[str] = field(default_factory=set)


def named_in(text: str, known: set[str]) -> Named:
    """The settings ``text`` names. A short form completes the last full name before it in
    the same paragraph or table row (``AGENT_MEMORY_GATEWAY__HOST``, ``__PORT``); a bare
    name, the last group before it in the paragraph or table (``AGENT_MEMORY_SEGMENTER__`` +
    ``GAP_S``; a table headed ``AGENT_MEMORY_QUERY__SEARCH__*`` with a row per field)."""
    named = Named()
    for block in re.split(r"\n\s*\n", text):
        group = ""
        for row in re.split(r"\n(?=\|)", block):
            last = ""
            for m in re.finditer(f"{FULL.pattern}|{SHORT.pattern}|{BARE.pattern}", row):
                token = m.group(0)
                if token.startswith(PREFIX):
                    last = _full_name(token, known, named)
                    if last.endswith("__"):
                        group = last
                    continue
                if not token.startswith(("_", ".", "/")):  # a bare word: a field of the group
                    if group and group + token in known:
                        named.explicit.add(group + token)
                    continue
                if last and "__" in last and not last.endswith("__"):
                    full = _complete(last, token, known)
                    if full is None:
                        named.unknown.add(f"{last} ... {token}")
                    else:
                        named.explicit.add(full)
    return named


def _full_name(token: str, known: set[str], named: Named) -> str:
    """Records a full name (or a group: ``AGENT_MEMORY_X__*``) in ``named``; returns it, a
    group as its stem (``AGENT_MEMORY_X__``), or "" for a pattern (``AGENT_MEMORY_<SERVICE>``)."""
    if "<" in token:
        return ""
    stem = token.rstrip("*.")
    if stem.endswith("__"):
        covered = {k for k in known if k.startswith(stem)}
        named.wildcards.add(stem)
        named.covered |= covered
        if not covered:
            named.unknown.add(token)
        return stem
    if token in known:
        named.explicit.add(token)
    else:
        (named.unknown if "__" in token else named.unknown_top).add(token)
    return token


def doc_files() -> list[Path]:
    """Where a user reads about settings: the README, docs/, each service's and deploy's."""
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted(ROOT.glob("services/*/README.md")),
        ROOT / "deploy" / "README.md",
    ]


def documented_nested() -> tuple[set[str], set[str]]:
    """Every nested setting the docs name, and what they name that does not exist (with the
    file it is in)."""
    known = set(all_variables())
    names: set[str] = set()
    unknown: set[str] = set()
    for path in doc_files():
        named = named_in(path.read_text(), known)
        names |= {name for name in named.explicit | named.covered if "__" in name}
        unknown |= {f"{path.relative_to(ROOT)}: {name}" for name in named.unknown}
    return names, unknown
