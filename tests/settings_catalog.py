"""Every setting the processes read, by its environment variable, and where the docs name one.

Built from the settings classes themselves (pydantic-settings: ``AGENT_MEMORY_`` + the field,
``__`` into a nested model), so the README table and the docs are compared with what the code
reads, not with a second list kept by hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
    from agent_memory_retrieval.settings import RetrievalSettings
    from agent_memory_retrieval.topic_prune import TopicPruneSettings
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


FULL = re.compile(
    r"AGENT_MEMORY_[A-Z0-9_<>]*[A-Z0-9>](?:__(?:\*|\.\.\.))?|AGENT_MEMORY_[A-Z0-9_]+__"
)
# a short form right after a full name: ``__PORT`` (another field of the same model),
# ``..._LAG_DAYS`` (another end of the same name), ``HOST/PORT``
SHORT = re.compile(r"(?<![A-Za-z0-9_])(?:\.\.\._|__|/)[A-Z][A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_(])")


def _complete(last: str, token: str, known: set[str]) -> str | None:
    """The known setting a short form after ``last`` stands for, if any."""
    tail = token.lstrip("._/")
    if token.startswith("..._"):
        cuts = [i for i, c in enumerate(last) if c == "_" and i >= len(PREFIX)]
        candidates = [last[: i + 1] + tail for i in reversed(cuts)]
    else:
        candidates = [last[: last.rfind("__") + 2] + tail] if "__" in last else []
    return next((c for c in candidates if c in known), None)


def named_in(text: str, known: set[str]) -> tuple[set[str], set[str]]:
    """The settings that ``text`` names, and the nested names (``AGENT_MEMORY_<X>__<Y>``) it
    uses that are no setting (a top-level one may be read elsewhere: ``AGENT_MEMORY_TOKEN`` by
    the client). A wildcard (``AGENT_MEMORY_SEGMENTER__*``, ``...``)
    names every setting it covers. A short form completes the last full name before it in the
    same paragraph or table row (``AGENT_MEMORY_GATEWAY__HOST``, ``__PORT``)."""
    names: set[str] = set()
    unknown: set[str] = set()
    for paragraph in re.split(r"\n\s*\n|\n(?=\|)", text):
        last = ""
        for m in re.finditer(f"{FULL.pattern}|{SHORT.pattern}", paragraph):
            token = m.group(0)
            if token.startswith(PREFIX):
                if "<" in token:  # AGENT_MEMORY_<SERVICE>__PORT: a pattern, not a name
                    last = ""
                    continue
                last = token
                stem = token.rstrip("*.")
                if stem.endswith("__"):
                    covered = {k for k in known if k.startswith(stem)}
                    names |= covered
                    if not covered:
                        unknown.add(token)
                elif token in known:
                    names.add(token)
                elif "__" in token:  # a top-level name may be no setting (AGENT_MEMORY_TOKEN)
                    unknown.add(token)
                continue
            if last and "__" in last and not last.endswith(("__", "*", ".")):
                full = _complete(last, token, known)
                if full is None:
                    unknown.add(f"{last} ... {token}")
                else:
                    names.add(full)
    return names, unknown


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
        found, wrong = named_in(path.read_text(), known)
        names |= {name for name in found if "__" in name}
        unknown |= {f"{path.relative_to(ROOT)}: {name}" for name in wrong}
    return names, unknown
