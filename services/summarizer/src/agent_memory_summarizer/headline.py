"""A segment's title: what the session set out to do and how it ended.

"Slow reconciliation job — partial index on payments(status), 9 s -> 40 ms" is what a developer
recognises in a table of contents; three key phrases ("Src payments, perf recon, psycopg") are
not. Both halves are taken from what people said, never written anew (offline, deterministic):

- the **goal** is the first request of the segment: the first user turn's first sentence (joined
  with the next one when it is only a label such as "Subscriptions next."), with the politeness
  around it removed ("Let's", "Can you", "Please"); a request of two words or fewer ("Organise
  that?") gives way to the agent's restatement in its first reply ("I'll help you add a
  release job that publishes the package"). A segment with no user turn has no goal.
- the **outcome** is the last sentence that reports a result: "Fixed: ...", "... passes",
  "... now ...", "... is in place", "from 3 s to 200 ms", "released"; a plan ("I'll ..."), a
  question or an aside about unrelated warnings is not one. Without such a sentence, the
  segment's first decision stands for its outcome ("We go with RabbitMQ for payment events").

A title keeps no path, hash, placeholder or payload field: a path becomes its last name
("src/payments/api/pagination.py" -> "pagination"), the rest is dropped (``plain``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from agent_memory_summarizer.keyphrases import is_noise_word
from agent_memory_summarizer.text import names_kept, shorten, split_sentences, squash, tokens

GOAL_CHARS = 70
# A request of two words or fewer ("Organise that?", "commit and push") names no work: the
# agent's restatement of it does, when its first reply has one. A question names its topic
# ("How do we page the results?") and stays.
THIN_GOAL_WORDS = 2
_WH_QUESTION = re.compile(r"^(?:how|what|why|which|where|when|who|should)\b", re.IGNORECASE)
MAX_UNANSWERED = 2  # prompts a segment with no reply may hold and still be titled by a request
OUTCOME_CHARS = 90
# Between goal and outcome; never inside either (``plain`` turns one into a comma), so a rollup
# can take a child's goal back from its title.
WORK_SEPARATOR = " — "

_POLITE_START = re.compile(
    r"^(?:(?:ok(?:ay)?|so|hi|hey|hello|right|now|alright|next|also)\b[,!.:]?\s+)*"
    r"(?:(?:it seems(?: like)?|i think|maybe|perhaps)\s+(?=we\b))?"
    r"(?:let'?s|let us|please|can you|could you|would you|will you|i want (?:you )?to|"
    r"i'd like (?:you )?to|we need to|we should|i need (?:you )?to|time to|help me)\s+",
    re.IGNORECASE,
)
_OUTCOME = re.compile(
    r"^(?:fixed|done|resolved|solved|shipped|released|merged)\b"
    r"|\b(?:now|again|no longer)\b"
    r"|\b(?:pass(?:es|ed)?|green|works?|succeeds?|in place|set up|is fully|are stored|is stored|"
    r"dropped|down to|went from|released|merged|shipped|deployed|is the default|drafted|"
    r"line up|lines up|accepted)\b"
    r"|\bfrom \S+ (?:\w+ )?to \S+|->|→",
    re.IGNORECASE,
)
_LABEL = re.compile(
    r"^(?:fixed|done|resolved|solved|outcome|result|root cause|cause|decision)\s*:\s*", re.I
)
# Not an outcome: a plan, an offer, an aside about findings left alone. (Three more phrases,
# "the missing types", "nothing behavioural" and "for the cleanup ticket", were single
# sentences of the generated coding corpus: removed with issue 52.)
ASIDE = re.compile(
    r"\b(?:left (?:them|it|the rest)|(?:code|files?) i did not touch|style (?:findings|only))\b",
    re.IGNORECASE,
)
_NOT_OUTCOME = re.compile(
    r"^(?:i'll|i will|let me|then i'll|next,? i'll|i'm going to|should i|shall i)\b",
    re.IGNORECASE,
)
# An agent narrating its next step: "Let me look at the generated report to be sure.", "Now
# let's test it:", "Since the cache is empty, let me seed it first.", "Here are the modules
# that need changes:". What it then did is in the tool events after it and
# what it found in a later sentence; as bullets they filled a real session's table of contents
# (``make bench-real``). A report that opens a list ("I've updated the README so that the
# export includes:") is not one: it says what was done.
_NARRATION = re.compile(
    r"^(?:(?:now|next|first|then|so|ok(?:ay)?|good|great|perfect|alright|right)\b[,!.]?\s+)*"
    r"(?:let me|let's|let us)\b"
    r"|^[^.!?]{0,80},\s*let me\b"
    r"|^here (?:are|is)\b[^.!?]*:$",
    re.IGNORECASE,
)


def narrates(role: str, text: str) -> bool:
    """Whether an assistant's sentence only announces what it does next."""
    return role == "assistant" and bool(_NARRATION.search(text.strip()))


_PATH = re.compile(
    r"(?:~|\.{1,2})?/?(?:[\w.{}:-]+/)+[\w.{}:-]*"
    r"|\b[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|rs|go|rb|java|toml|json|jsonl|ya?ml|md|sql|txt|cfg|ini|"
    r"lock|sh|env|log|csv)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"[A-Za-z](?:[A-Za-z_-]*[A-Za-z])?")
_REDACTED = re.compile(r"\[REDACTED[^\]]*\]", re.IGNORECASE)
_WORD = re.compile(r"\S+")
_TRAIL = " ,;:-.?!"


@dataclass(frozen=True)
class Turn:
    """A sentence someone said, for the headline: who, and where (event index, offsets)."""

    role: str
    text: str
    kind: str
    event_index: int
    # the words before the sentence in its event (a short "I see the issue!" is no sentence
    # of its own to the summarizer, but says what the sentence after it is)
    lead: str = ""


def _last_name(path: str) -> str:
    """The last readable name of a path: src/payments/api/pagination.py -> pagination,
    tests/unit/test_parser.py -> test_parser (a name without digits: no version or id)."""
    parts = [p for p in re.split(r"[/\\]", path) if p and not p.startswith("{")]
    for part in reversed(parts):
        stem = part.split(".")[0]
        if _NAME.fullmatch(stem) and not is_noise_word(re.sub(r"[_-]", "", stem)):
            return stem
    return ""


def plain(text: str) -> str:
    """``text`` without what makes a title noise: paths become names, ids and fields go."""
    text = _REDACTED.sub(" ", names_kept(text))
    text = _PATH.sub(lambda m: " " + _last_name(m.group(0)) + " ", text)
    text = _NUMBER_LIST.sub(lambda m: re.sub(r",\s*", "-", m.group(0)), text)
    kept: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        bare = word.strip(_TRAIL + "'\"()")
        if bare and _fragment(bare):
            # a payload word ("newlines", "stdout") ends the phrase at its clause, if one is left
            clause = _clause_end(kept)
            if clause >= 3:
                kept = kept[:clause]
                kept[-1] = kept[-1].rstrip(_TRAIL)
                break
            continue
        kept.append(word)
    out = squash(" ".join(kept)).replace(WORK_SEPARATOR.strip(), ",")
    out = re.sub(r"\s+([,;:.?!])", r"\1", out)
    out = re.sub(r"([,;:])(?:\s+[,;:])+", r"\1", out)  # what a dropped word left behind
    return out.strip(" ,;:-")


_NUMBER_LIST = re.compile(r"\b\d+(?:,\s*\d+)+\b")  # "the 2, 4, 8 hour backoff" -> "2-4-8"


def _clause_end(words: list[str]) -> int:
    """How many of ``words`` precede the last clause boundary (a word ending in , ; :)."""
    for i in range(len(words) - 1, 0, -1):
        if words[i - 1].endswith((",", ";", ":")):
            return i
    return 0


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a clause boundary when one falls in the last two
    thirds ("New tool: lintfix, a formatter that rewrites imports"), else at a word."""
    text = squash(text)
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = max(head.rfind(", "), head.rfind("; "), head.rfind(": "))
    if cut >= limit // 3:
        return head[:cut].rstrip(_TRAIL)
    return shorten(text, limit)


def _fragment(word: str) -> bool:
    """A word a title must not hold: a hash, a path piece or payload field, a placeholder."""
    lower = word.lower()
    if re.fullmatch(r"(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,}", lower):
        return True
    if lower.startswith("toolu_"):
        return True
    if len(word) > 2 and word.isupper() and lower in _FORMATS:  # "from YAML to TOML": prose
        return False
    return lower in _TITLE_FRAGMENTS


_FORMATS = frozenset(("json", "jsonl", "yaml", "yml", "toml", "sql", "csv", "ini"))


# The words of a path or a tool payload that mean nothing in a title (file-type names included:
# "YAML" said in prose reads as the format, but next to paths it is a file suffix).
_TITLE_FRAGMENTS_TEXT = """
    py pyi pyc ts tsx js jsx rs toml json jsonl yaml yml md sql txt cfg ini sh src libs usr
    tmp venv site-packages node_modules file_path filepath old_string oldstring new_string
    newstring structuredpatch originalfile numlines startline totallines stdout stderr isimage
    tool_use_id is_error oldstart oldlines newstart newlines replaceall usermodified redacted"""
_TITLE_FRAGMENTS = frozenset(_TITLE_FRAGMENTS_TEXT.split())


# A command the user ran from the prompt ("!python3 export.py" in Claude Code): not a request.
_SHELL_ESCAPE = re.compile(r"^\s*!\S")


def goal(turns: Sequence[Turn]) -> str:
    """The segment's first request, as a short phrase (empty when no user turn has one)."""
    users = [t for t in turns if t.role == "user" and not _SHELL_ESCAPE.match(t.text)]
    if not users:
        return ""
    first = users[0]
    sentences = [s.text for s in split_sentences(first.text) if not s.is_code]
    if not sentences:
        return ""
    # the summarizer's turns are sentences: the rest of the same prompt is the turns after it
    sentences += [t.text for t in users[1:] if t.event_index == first.event_index]
    text = sentences[0]
    if len(tokens(text)) < 3 and len(sentences) > 1:  # "Subscriptions next." labels the next
        text = text.rstrip(_TRAIL) + ": " + sentences[1]
    text = _POLITE_START.sub("", plain(text).strip())
    text = text.rstrip(" .!")
    if len(tokens(text)) < 2:
        return ""
    return _capital(clip(text, GOAL_CHARS))


def outcome(turns: Sequence[Turn], goal_text: str) -> str:
    """The last result reported in the segment, else its first decision (empty: neither)."""
    said = [t for t in turns if t.role in ("assistant", "user")]
    for turn in reversed(said[1:] if said and said[0].role == "user" else said):
        sentence = turn.text
        if "?" in sentence[-2:] or _NOT_OUTCOME.search(sentence) or ASIDE.search(sentence):
            continue
        if narrates(turn.role, sentence):  # "Now let me create ...": not done yet
            continue
        if not _OUTCOME.search(sentence):
            continue
        text = plain(_LABEL.sub("", sentence)).rstrip(" .!")
        if len(tokens(text)) >= 3 and not _repeats(text, goal_text):
            return shorten(text, OUTCOME_CHARS)
    for turn in said:
        if turn.kind == "decision":
            text = plain(_LABEL.sub("", turn.text)).rstrip(" .!")
            if len(tokens(text)) >= 3 and not _repeats(text, goal_text):
                return clip(text, OUTCOME_CHARS)
    return ""


def _repeats(text: str, goal_text: str) -> bool:
    """Whether an outcome would say the goal again: the goal is the first request clipped
    ("We chose Tantivy as the embedded BM25 engine because readers work in…"), so a sentence
    that starts like it, or that it starts like, is the same sentence (a title "X… — X")."""
    goal_words = goal_text.rstrip("…").rstrip(_TRAIL).lower().split()
    words = text.lower().split()
    if not goal_words or not words:
        return False
    shared = min(len(goal_words), len(words))
    return goal_words[:shared] == words[:shared]


# What an agent says it did: "I've updated the README so that ...", "After reading the logs,
# I've discovered where ...", "I found a way to ...". The verb and what follows is the work.
_DONE = re.compile(
    r"^(?:[^.!?]{0,60},\s*)?(?:i've|i have|i)\s+"
    r"(?:(?:successfully|also|now|just|already|finally|properly)\s+)*"
    r"(?P<work>(?:found|fixed|added|updated|created|moved|changed|removed|rewrote|wrote|made|"
    r"discovered|identified|cleaned|implemented|enhanced|replaced|renamed|installed|configured|"
    r"set up|built|refactored|deleted|copied|split|merged|traced)\b.*)",
    re.IGNORECASE,
)


def report(turns: Sequence[Turn]) -> str:
    """The first thing the agent says it did ("Updated the README so that ..."), as a short
    phrase; empty when it says none."""
    done = next(_agent_says(turns, _DONE, "work"), "")
    return _capital(clip(done, GOAL_CHARS)) if done else ""


def _agent_says(turns: Sequence[Turn], pattern: re.Pattern[str], group: str) -> Iterator[str]:
    """``group`` of each assistant sentence ``pattern`` matches, as plain words (3 or more)."""
    for turn in turns:
        found = pattern.match(turn.text.strip()) if turn.role == "assistant" else None
        if found is None:
            continue
        text = plain(found.group(group)).rstrip(" .!:")
        if len(tokens(text)) >= 3:
            yield text


# What an agent says it found: "I see the issue - the parser drops empty lines.", "Now I see
# the problem! The cache key ignores the lock file, so ...". The finding is the rest of the
# sentence, else the agent's next sentence.
_FOUND_TEXT = (
    r"i\s+(?:see|found|have found|'ve found|(?:have |'ve )?identified|understand)\s+"
    r"(?:the|what(?:'s| is) the)\s+(?:issue|problem|bug|cause|root cause)\b(?:\s+now)?"
)
_FOUND = re.compile(
    r"^(?:(?:now|ok(?:ay)?|ah|great|perfect|good)\b[,!.]?\s+)*"
    + _FOUND_TEXT
    + r"\s*[-\u2013\u2014:,!.]+\s*(?P<rest>.+)$",
    re.IGNORECASE,
)
_FOUND_BEFORE = re.compile(r"\b" + _FOUND_TEXT + r"\s*[-\u2013\u2014:!.]*\s*$", re.IGNORECASE)


def finding(turns: Sequence[Turn]) -> str:
    """The first cause the agent says it found, as a short phrase; empty when it says none."""
    for turn in turns:
        if turn.role != "assistant":
            continue
        found = _FOUND.match(turn.text.strip())
        if found is not None:
            text = found.group("rest")
        elif _FOUND_BEFORE.search(turn.lead):
            text = turn.text
        else:
            continue
        text = plain(text).rstrip(" .!:")
        if len(tokens(text)) >= 3:
            return _capital(clip(text, GOAL_CHARS))
    return ""


# An announced step, without its announcement: "Now let me add the retry decorator:" -> "add
# the retry decorator"; "I'll help you set up a nightly job to ..." -> "set up a nightly job to
# ...".
_ANNOUNCED = re.compile(
    r"^(?:(?:now|next|first|then|so|ok(?:ay)?|good|great|perfect|excellent|alright|right)\b"
    r"[,!.]?\s+)*(?:[^.!?]{0,80},\s*)?"
    r"(?:let me|let's|let us|i'll|i will|i'm going to)\s+(?:(?:help you|now|also|first|then|"
    r"just|quickly)\s+)*(?P<step>.+)$",
    re.IGNORECASE,
)
# Steps that look rather than make: a title of what a piece of work was names what it made
# ("add the mock server fixture"), not that the agent checked something first.
_LOOKING = re.compile(
    r"^(?:check|look|see|verify|test|run|try|examine|read|explore|inspect|search|find out|"
    r"investigate|review|understand|confirm|summari[sz]e|create (?:a |an )?(?:\w+ )?summary|"
    r"clean up and finali[sz]e|start by)\b",
    re.IGNORECASE,
)


def plan(turns: Sequence[Turn]) -> str:
    """The first step the agent announces that makes something (else the first it announces),
    as a short phrase; empty when it announces none."""
    steps = list(_agent_says(turns, _ANNOUNCED, "step"))
    making = [s for s in steps if not _LOOKING.match(s)]
    chosen = (making or steps or [""])[0]
    return _capital(clip(chosen, GOAL_CHARS)) if chosen else ""


def restated(turns: Sequence[Turn]) -> str:
    """What the agent's first reply to the first request says it will make ("Can you
    organise that?" -> "I'll help you add a release job that publishes the package."), as a
    short
    phrase; empty when that reply announces no such step."""
    first_user = next((t.event_index for t in turns if t.role == "user"), -1)
    replies = [t.event_index for t in turns if t.role == "assistant" and t.event_index > first_user]
    said = [t for t in turns if replies and t.event_index == replies[0]]
    making = [s for s in _agent_says(said, _ANNOUNCED, "step") if not _LOOKING.match(s)]
    return _capital(clip(making[0], GOAL_CHARS)) if making else ""


def request(turns: Sequence[Turn]) -> str:
    """The goal of a segment where only the user spoke, when it is a request to an agent
    ("I guess we should publish the package from the release job.", and the reply came
    after a break): a prompt or two that ask for something, not people talking."""
    users = [t for t in turns if t.role == "user"]
    if not users or len({t.event_index for t in users}) > MAX_UNANSWERED:
        return ""
    first = plain(next((s.text for s in split_sentences(users[0].text) if not s.is_code), ""))
    asks = _POLITE_START.match(first.strip()) and not _IDIOM.match(first.strip())
    return goal(turns) if asks else ""


_IDIOM = re.compile(r"^(?:can|could) you (?:believe|imagine|guess)\b", re.IGNORECASE)


def headline(turns: Sequence[Turn]) -> tuple[str, str]:
    """(goal, title) of a segment; the title is "goal — outcome", or whichever half exists.
    A segment where nobody asked for anything (an agent working on after a token-budget cut)
    is titled by what the agent says it did; else by what it found or set out to make, with
    the result it reports; else by that result."""
    g = goal(turns)
    if g and len(tokens(g)) <= THIN_GOAL_WORDS and not _WH_QUESTION.match(g):
        g = restated(turns) or g
    o = outcome(turns, g)
    if g and o:
        return g, g + WORK_SEPARATOR + _capital(o)
    if g:
        return g, g
    done = report(turns)
    if done:
        return "", done
    work = finding(turns) or plan(turns)
    if work and o and not _repeats(o, work):
        return "", work + WORK_SEPARATOR + _capital(o)
    return "", work or _capital(o)


_CODE_MARKS = ("_", "::", "(", "/", "`", "=", "<", "[")


def _capital(text: str) -> str:
    """Capitalised, unless it starts with an identifier (``test_refund_twice``,
    ``event::poll``, ``useState``, ``config.toml``, ``x2``): code's case is part of its name."""
    first = text.split(" ", 1)[0]
    if (
        any(mark in first for mark in _CODE_MARKS)
        or first[1:].lower() != first[1:]
        or "." in first.rstrip(".")
        or any(ch.isdigit() for ch in first)
    ):
        return text
    return text[:1].upper() + text[1:]


def goal_of(title: str) -> str:
    """The goal half of a segment title (the whole title when it has no outcome)."""
    return title.split(WORK_SEPARATOR, 1)[0]
