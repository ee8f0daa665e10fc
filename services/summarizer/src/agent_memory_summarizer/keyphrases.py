"""Key phrases: YAKE over what people said, with code noise filtered out.

YAKE (Campos et al., Information Sciences 2020) scores each 1-3 word candidate from local
features of the text alone (casing, position, frequency, how many sentences hold it, how many
different words surround it): no model, no corpus, no download, so it runs offline and gives
the same phrases on every replica. The implementation is ``yake-rust`` (MIT; the reference
Python package is AGPL-3.0, which a network service cannot take on lightly).

Coding text defeats any keyphrase method on its own: paths (``src/payments/api.py``), hashes,
identifiers (``payment_id``, ``SettlementBatch.close``), language keywords (``def``, ``end``,
``self``), command output and redaction placeholders are frequent and distinctive, so they
score well and make titles such as "End, socket assigns, pane_id". The caller passes prose
only (fenced code and inline code removed, tool lines dropped); this module then drops every
candidate holding such a token (``is_noise_word``) and keeps phrases a person would search for.

Determinism: ``yake-rust`` keeps candidates in hash maps, so its order among equal scores is
not fixed; the candidates are asked for generously and re-sorted here by (score, phrase).
"""

from __future__ import annotations

import functools
import re

from yake_rust import Yake

from agent_memory_summarizer.text import STOP_WORDS

MAX_NGRAM = 3
ASKED = 40  # candidates asked of YAKE before filtering (the filter drops up to half)
MAX_INPUT_CHARS = 20_000  # YAKE is linear but a segment's prose beyond this adds little

# Programming-language keywords and shell words: noise as a key phrase whatever the text says.
_CODE_WORDS_TEXT = """
    def self cls none true false null nil end elif else async await return import from const
    let var fn func lambda kwargs args init str int float dict bool tuple println printf echo fi
    esac then do done sudo lib bin dist impl pub mut struct enum mod crate use class public
    private static void string println! unwrap expect err ok some interrupted command
    description exit stdout stderr traceback error warning info debug"""
_CODE_WORDS = frozenset(_CODE_WORDS_TEXT.split())
# Pieces of a path or file name, and field names of the tool payloads the hooks record.
_FRAGMENT_WORDS_TEXT = """
    py pyi pyc ts tsx js jsx rs toml json jsonl yaml yml md sql txt cfg ini sh src libs usr
    tmp venv site-packages node_modules file_path filepath old_string oldstring new_string
    newstring structuredpatch originalfile numlines startline totallines isimage toolu
    tool_use_id is_error oldstart oldlines newstart newlines replaceall usermodified home dev
    redacted"""
_FRAGMENT_WORDS = frozenset(_FRAGMENT_WORDS_TEXT.split())
_HASH = re.compile(r"^(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,}$", re.IGNORECASE)
# snake_case, dotted.names, paths, lowerCamel, syntax; PascalCase stays (FastAPI, RabbitMQ)
_IDENTIFIER = re.compile(r"_|::|\.\w|/|\\|^[a-z]+[A-Z]|[(){}\[\]<>=$`#@~|*]")
_NUMBERISH = re.compile(r"^[\d.,:%+\-x]+$")


@functools.lru_cache(maxsize=65536)
def is_noise_word(word: str) -> bool:
    """A word no person would look a memory up by: code, a path piece, an id, a number."""
    bare = word.strip("-'\".,;:!?")
    lower = bare.lower()
    if len(bare) < 2 or len(bare) > 30:
        return True
    if lower in _CODE_WORDS or lower in _FRAGMENT_WORDS:
        return True
    if _HASH.match(bare) or _NUMBERISH.match(bare) or _IDENTIFIER.search(bare):
        return True
    return sum(ch.isdigit() for ch in bare) * 3 >= len(bare)


def is_noise_phrase(phrase: str) -> bool:
    """Too long, holding a function word ("logs and git") or any noise word."""
    words = phrase.lower().split()
    if not words or len(words) > MAX_NGRAM:
        return True
    if any(w in STOP_WORDS or w in _extractor().stopwords for w in words):
        return True
    return any(is_noise_word(w) for w in words)


@functools.lru_cache(maxsize=1)
def _extractor() -> Yake:
    return Yake(language="en", ngrams=MAX_NGRAM, remove_duplicates=False)


def key_phrases(prose: str, limit: int) -> list[str]:
    """The best ``limit`` key phrases of ``prose`` (lower case), best first."""
    text = prose[:MAX_INPUT_CHARS].strip()
    if not text:
        return []
    scored = _extractor().get_n_best(text, n=ASKED)
    ranked = sorted(((score, phrase.lower()) for phrase, score in scored), key=lambda sp: sp)
    out: list[str] = []
    for _score, phrase in ranked:
        if len(out) >= limit:
            break
        if is_noise_phrase(phrase) or phrase in out:
            continue
        # one phrase per idea: not a phrase whose words a kept one holds, or holding one's
        words = set(phrase.split())
        if any(words <= set(kept.split()) or set(kept.split()) <= words for kept in out):
            continue
        out.append(phrase)
    return out
