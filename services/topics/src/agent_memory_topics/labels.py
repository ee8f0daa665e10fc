"""Labels and keywords without an LLM: class-based TF-IDF over each cluster's summaries.

A term scores by how often the cluster says it against how common it is across all clusters of
the project (c-TF-IDF, as in BERTopic), over words and two-word phrases. Code noise is
filtered before counting: paths, file names, hashes, numbers, identifiers with underscores or
dots, command-line flags, and words every session says ("fix", "run", "test" alone is kept:
it is a theme). The label names the two or three strongest terms the way a developer says a
theme: ``"Flaky tests: retries and caching"``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'+#-]*[A-Za-z+#]|[A-Za-z]")
_NOISE = re.compile(
    r"""(\S*/\S*|\S+\.(py|ts|js|go|rs|sql|md|json|ya?ml|toml|sh|txt|cfg|ini|lock|log)\b|"""
    r"""\b[0-9a-f]{7,40}\b|\b\w*_\w*\b|\b\w+\.\w+(\.\w+)*\b|(^|\s)--?[\w-]+|`[^`]*`|"""
    r"""\b\w*\d\w*\b|\b[A-Z]{2,}_[A-Z_]+\b)""",
)
_STOP = """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each either few
    for from further get gets got had has have having he her here hers him his how i if in into is
    it its itself just me more most my no nor not now of off on once one only or other our ours
    out over own same she should so some such than that the their theirs them then there these
    they this those through to too under until up us very was we were what when where which while
    who whom why will with would you your yours user assistant agent session segment asked ask
    said says used use using uses make made makes let lets like want wants need needs needed new
    see seen look looked looks way also still again well yes okay ok thanks please sure now then
    first next last done went going go goes tried try tries trying work worked works working
    change changed changes changing add added adds adding update updated updates run ran runs
    running fix fixed fixes fixing check checked checks checking file files code line lines
    instead because since already e g i.e etc via per into onto than two three time times
    passed failed finished warnings warning found error errors ok skipped"""
# Contractions are how people talk to an agent ("let's", "don't"): never a theme, yet frequent
# enough in prompts to win a label ("Cloud: implementation and let's", real sessions)
_CONTRACTIONS = """let's i'm i've i'd i'll it's that's there's here's what's we're we've we'll
    we'd you're you've you'll don't doesn't didn't isn't aren't wasn't weren't can't couldn't
    won't wouldn't shouldn't haven't hasn't"""
STOPWORDS = frozenset(_STOP.split()) | frozenset(_CONTRACTIONS.split())


def clean(text: str) -> str:
    """Text with code noise (paths, file names, hashes, identifiers, flags, numbers) removed."""
    return _NOISE.sub(" ", text)


def terms(text: str) -> list[str]:
    """Words (lower case, stopwords out) and two-word phrases of adjacent kept words."""
    words = [w.lower().strip("'-") for w in _TOKEN.findall(clean(text))]
    out: list[str] = []
    prev: str | None = None
    for w in words:
        if len(w) < 3 or w in STOPWORDS:
            prev = None
            continue
        out.append(w)
        if prev is not None:
            out.append(f"{prev} {w}")
        prev = w
    return out


def keywords(docs_by_cluster: Sequence[Sequence[str]], top: int = 8) -> list[list[str]]:
    """The ``top`` c-TF-IDF terms of each cluster (a phrase counts once more than its words)."""
    counts = [Counter(t for doc in docs for t in terms(doc)) for docs in docs_by_cluster]
    total = Counter[str]()
    for c in counts:
        total.update(c)
    avg = sum(sum(c.values()) for c in counts) / max(len(counts), 1)
    out: list[list[str]] = []
    for c in counts:
        size = sum(c.values()) or 1
        scored = sorted(
            (
                (
                    (n / size) * math.log(1 + avg / total[t]) * (1.5 if " " in t else 1.0),
                    t,
                )
                for t, n in c.items()
                if n >= 2 or len(c) < 20
            ),
            key=lambda p: (-p[0], p[1]),
        )
        picked: list[str] = []
        for _, t in scored:
            # a word already said by a picked phrase (or a phrase repeating a picked word) adds
            # nothing to a label
            if any(_same(t, p) for p in picked):
                continue
            picked.append(t)
            if len(picked) == top:
                break
        out.append(picked)
    return out


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _same(term: str, picked: str) -> bool:
    """A term adds nothing next to a picked one that says it (or its plural) already."""
    a = {_stem(w) for w in term.split()}
    b = {_stem(w) for w in picked.split()}
    return a <= b or b <= a


def label(words: Sequence[str]) -> str:
    """``"Flaky tests: retries and caching"`` from the strongest terms; '(unlabelled)' if none."""
    if not words:
        return "(unlabelled)"
    head = words[0][:1].upper() + words[0][1:]
    rest = list(words[1:3])
    if not rest:
        return head
    return f"{head}: {' and '.join(rest)}"
