"""Secret redaction for ingested events, run before anything is published.

Raw events are kept append-only forever, so a secret that gets past this module can never be
taken back: every rule errs towards redacting. The output is a typed placeholder,
``[REDACTED:<kind>]``, so a later reader (human or agent) still knows *what* was there.

Why not a library: Yelp's ``detect-secrets`` 1.5 (the maintained Python option) was measured on
this gateway's workload and on the labelled corpus in the tests
(``tests/bench/bench_redaction.py``). Its ad-hoc ``scan_line`` API takes hundreds of ms per
100-event batch of ~300-byte texts (~21 ms with only its regex plugins), against a budget of
well under 1 ms for the batch. It also returns secret *values* per line, not spans, has no
rules for command lines, connection strings or unquoted config values, and its entropy plugins
flag git commit ids and digests: recall 0.55 and precision 0.64 on that corpus, against 1.0
and 1.0 here. So this is a compiled-regex detector whose rules follow the gitleaks and
detect-secrets rule sets (see ``docs/redaction.md`` for the list, the figures and the timing).

For read-side use, ``default_redactor()``, ``redact_text()`` and ``redact_json()`` share one
``Redactor`` with the built-in rules. This module imports only the standard library.

Why it is fast: Python's ``re`` has no multi-pattern (Aho-Corasick) search, and one big
alternation, or 30 regexes each scanning the whole text, costs tens of microseconds per event.
Instead, every rule names short *trigger* literals (``AKIA``, ``ghp_``, ``password``...). One
prefilter regex is built from all triggers, each anchored on its rarest character (or on one
that other triggers already anchor on, see ``_Trigger.anchor``). sre's
first-character set then skips most of a clean text in C, and fixed-width look-arounds confirm
the rest of the literal. An empty marker group says which rule fired and where, and only that
rule's regex is then run, with ``match`` at that position rather than a full scan. Clean text
costs one prefilter pass of a few microseconds per 300 bytes.

Overlaps: every rule sees the original text. Spans are resolved by rule priority (user patterns
first, then provider-specific rules, then the generic heuristics), so ``token: ghp_...`` is
reported as ``github_token`` rather than ``generic_secret``. A lower-priority span that sticks
out of a higher one is merged into it, never dropped, so no tail of a secret is left behind.

A ``Redactor`` is immutable once built, so one instance can be shared by every request and
thread.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

__all__ = ["Redactor", "default_redactor", "redact_json", "redact_text"]

_Span = tuple[int, int]
_Extractor = Callable[[re.Match[str]], _Span | None]

# --------------------------------------------------------------------------------------------
# Value heuristics shared by the assignment-style rules
# --------------------------------------------------------------------------------------------

# Words that, as a value, mean "no secret here" (nulls, booleans, type names in annotations such
# as ``password: str``, and the markers other tools leave after their own masking).
_NOT_A_VALUE = frozenset(
    {
        "none", "null", "nil", "undefined", "true", "false", "yes", "no", "on", "off",
        "empty", "str", "string", "bytes", "int", "integer", "bool", "boolean", "any", "object",
        "secretstr", "secretbytes", "optional", "required", "redacted", "hidden", "masked",
        "filtered", "removed", "placeholder", "bearer", "basic", "token",
    }
)  # fmt: skip

# References and templates: the value is resolved elsewhere, so there is nothing to hide and
# hiding it would lose useful context (``${PASSWORD}``, ``$PGPASSWORD``, ``{{ .Values.pw }}``,
# ``<your-password>``, ``%(pw)s``, ``[REDACTED:...]`` from an earlier pass).
# A "$" counts only at the start or as ${...} / $(...), so a password like P@$$w0rd is kept.
_TEMPLATE = re.compile(
    r"""^\$[A-Za-z_] | \$\{ | \$\(
      | \{\{ | \{% | \#\{
      | ^<[^<>]*>$
      | ^%\(?[A-Za-z_]*\)?[sd]$ | ^%[A-Za-z_]+%$
      | ^\[(?:REDACTED|FILTERED|HIDDEN|MASKED)
    """,
    re.IGNORECASE | re.VERBOSE,
)
# Masks someone already applied: ``***``, ``xxxx``, ``....``, ``••••``, also after a token
# prefix (``ghp_xxxxxxxx``).
_MASK = re.compile(r"(?:[A-Za-z0-9]{1,12}[_\-])?(?:[*•·.#?\-]+|x{3,}|X{3,}|0{8,})|x+|X+")
# Documentation placeholders: ``your-api-key``, ``YOUR_TOKEN_HERE``, ``replace_me``.
_PLACEHOLDER = re.compile(
    r"(?:your|replace|change|insert|enter|put|example|placeholder|todo)(?:[_\-. ]|$)|changeme$",
    re.IGNORECASE,
)
_HAS_ALNUM = re.compile(r"[^\W_]")
# Code references in unquoted position: ``os.environ["X"]``, ``get_pw()``, ``self.password``,
# ``settings.SECRET_KEY``, ``Optional[str]``.
_CODE_REF = re.compile(r"[A-Za-z_]\w*(?:(?:\.[A-Za-z_]\w*)+(?:[(\[].*)?|[(\[].*)", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDISH = re.compile(r"pass|pwd|secret|token|key|cred|auth", re.IGNORECASE)
_KEYWORD_NAMES = frozenset(
    {"password", "passwd", "pass", "pwd", "passphrase", "secret", "token", "key", "apikey"}
    | {"credential", "credentials", "auth", "pw"}
)
_PLAIN_WORDS = re.compile(r"[A-Za-z_.\-]+")


def _is_literal_secret(value: str) -> bool:
    """Reject values that are clearly not a secret: empty, templates, masks, doc placeholders.

    Runs once per candidate, so the regexes sit behind cheap substring checks.
    """
    s = value.strip()
    if not s or "***" in s or not _HAS_ALNUM.search(s):  # empty, masked, or punctuation only
        return False
    if len(s) <= 12 and s.lower() in _NOT_A_VALUE:
        return False
    if ("$" in s or "{" in s or s[0] in "<%[") and _TEMPLATE.search(s):
        return False
    if s[-5:].lower() in ("_here", "-here") or s.endswith(("...", "\u2026")):
        return False  # ``YOUR_KEY_HERE``, ``sk-...``: elided in documentation
    if len(s) <= 12 and s[-1] in "_-" and s[:-1].isalnum():
        return False  # a bare token prefix (``ghp_``, ``glpat-``) named in prose
    return not (_MASK.fullmatch(s) or _PLACEHOLDER.match(s))


def _is_unquoted_secret(value: str) -> bool:
    """Unquoted values are also code, so variables and calls must not count as secrets."""
    if len(value) < 3 or not _is_literal_secret(value):
        return False
    if value[0] in "!/~" or value.startswith("./"):  # YAML tags and file paths
        return False
    if _CODE_REF.fullmatch(value):
        return False
    # ``password=password``, ``token=access_token``, ``api_key=API_KEY``: a variable, not a
    # value. Only snake_case / UPPER_CASE names and the bare keywords count: ``mailpass123``
    # or ``Hunter2Password`` are more likely real passwords.
    if value.lower() in _KEYWORD_NAMES:
        return False
    return not (
        "_" in value
        and _IDENTIFIER.fullmatch(value)
        and _KEYWORDISH.search(value)
        and (value.islower() or value.isupper())
    )


_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}
# ``&user=...``: the next parameter of a URL query string, where an ``&`` ends a value.
_QUERY_PARAM = re.compile(r"&[A-Za-z_][\w.\-]*=")


def _trim_unquoted(value: str) -> str:
    """Drop sentence dots, colons and closers the value did not open (``f(pwd=None):``)."""
    while value:
        last = value[-1]
        if last in ".:" or (last in _CLOSERS and value.count(_CLOSERS[last]) < value.count(last)):
            value = value[:-1]
        else:
            break
    return value


def _header_extract(m: re.Match[str]) -> _Span | None:
    """A header credential, unless it is code: ``authorization = base64.decodebytes(x)``."""
    start, end = m.span("secret")
    if m.string.startswith("(", end) or not _is_plausible_token(m.string[start:end]):
        return None
    return start, end


def _is_plausible_token(value: str) -> bool:
    """Header credentials are random; ``Bearer authentication`` or ``YOUR_TOKEN`` are not."""
    if not _is_literal_secret(value):
        return False
    return not (_PLAIN_WORDS.fullmatch(value) and len(value) < 32)


# Assignment rules (``password = "..."``, ``token: ...``, ``--password x``) share the separator
# and the value syntax. The key is matched from the trigger literal onwards, so any prefix
# (``PG``PASSWORD, ``DB_``PASSWORD, ``x-``API-KEY) is allowed. The key must end right at the
# separator, which leaves ``max_tokens=``, ``token_count:`` and ``password_file=`` alone.
_ASSIGN_TAIL = r"""
    (?:
        (?P<sep>\\?["']?\]?[ \t]*(?::=|=>|=(?!=)|:(?!:))[ \t]*)
      | (?P<wsep>[ \t]+)
      | (?P<csep>["'][ \t]*,[ \t]*(?=["']))
    )
    (?:
        \\"(?P<eq>(?:[^"\\\n]|\\[^"\n]){0,4096})\\"
      | "(?P<dq>(?:[^"\\\n]|\\.){0,4096})"
      | '(?P<sq>[^'\n]{0,4096})'
      | (?P<uq>[^\s"'`,;&\\<>{}()=\[\]][^\s"'`,;&]{0,1023})
    )
"""


def _word_start(text: str, pos: int, extra: str) -> int:
    while pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] in extra):
        pos -= 1
    return pos


def _is_long_flag(text: str, key_start: int) -> bool:
    return text.startswith("--", _word_start(text, key_start, "_-"))


def _is_attribute(text: str, key_start: int) -> bool:
    i = _word_start(text, key_start, "_")
    return i > 0 and text[i - 1] == "."


_UQ_MAX = 1024  # keep in step with the {0,1023} of the ``uq`` group above
_UQ_REST = re.compile(r"[^\s\"'`,;&]*")
_PROSE_GOES_ON = re.compile(r"[ \t]+[A-Za-z]")
_EXPRESSION_GOES_ON = re.compile(r"[ \t]*(?:[-+*/%|&^<>?=]|(?:if|else|or|and)\b)")

# ``https://x-access-token:ghp_...@github.com``: a key-looking user name in a URL is userinfo,
# which url_password handles; read as ``token: value`` it would swallow the rest of the URL.
_IN_URL_AUTHORITY = re.compile(r"://[^\s/?#@;'\"<>]*\Z")


# A key at the start of a line (after indentation, a YAML list dash, ``export`` or an opening
# quote) is a config file line: YAML, TOML, INI, .env. There a value runs to the end of the
# token, whatever characters it holds (``password: Tr0ub4dor&3``), and for ``key: value`` and
# ``key = value`` (not shell's ``KEY=value cmd``) to the end of the line, minus a `` #`` comment.
_CONFIG_LINE_PREFIX = re.compile(r"""[ \t]*(?:-[ \t]+)?(?:(?:export|set|setx)[ \t]+)?["']?""")
_NON_SPACE = re.compile(r"\S*")
_FLAG_VALUE = re.compile(r"[^\s`]*")
_LINE_REST = re.compile(r"[^\n]*")
_TRAILING_COMMENT = re.compile(r"[ \t]+(?:[#;].*)?$", re.DOTALL)
# ``f"{user}-pw"``, ``b'...'``: a Python string prefix, so code rather than a config value.
_STRING_PREFIX = re.compile(r"[rbfuRBFU]{1,2}[\"']")


def _is_config_line_key(text: str, key_start: int) -> bool:
    i = _word_start(text, key_start, "_-.")
    line_start = text.rfind("\n", max(0, i - 64), i) + 1
    if line_start == 0 and i > 64:
        return False
    return _CONFIG_LINE_PREFIX.fullmatch(text, line_start, i) is not None


def _config_value_end(text: str, value_end: int, sep: str) -> int:
    """Where an unquoted value on a config line ends (see ``_CONFIG_LINE_PREFIX``)."""
    spaced_equals = "=" in sep and sep.lstrip("\\\"'")[:1] in (" ", "\t")
    if ":" not in sep and not spaced_equals:
        return value_end  # shell: ``PGPASSWORD=x psql -h db``
    rest = _LINE_REST.match(text, value_end)
    if rest is None:
        return value_end
    tail = text[value_end : rest.end()]
    comment = _TRAILING_COMMENT.search(tail)
    if comment is not None:
        tail = tail[: comment.start()]
    return value_end + len(tail)


def _assignment_extract(m: re.Match[str]) -> _Span | None:
    # Whitespace only separates a key from its value on a command line (``--password x``);
    # in prose it would turn "re-pass the ball" into a finding.
    # And ``--password --host db`` (prompt for it) has no value: the next flag is not one.
    flag_value = m.end("wsep") if m.group("csep") is None else m.end("csep") + 1
    if (m.group("wsep") is not None or m.group("csep") is not None) and (
        not _is_long_flag(m.string, m.start()) or m.string.startswith("-", flag_value)
    ):
        # ``"--password", "x"`` is the same flag and value in a JSON or Python argument list.
        return None
    if _IN_URL_AUTHORITY.search(m.string, max(0, m.start() - 256), m.start()):
        return None
    for group in ("eq", "dq", "sq"):
        value = m.group(group)
        if value is not None:
            return m.span(group) if _is_literal_secret(value) else None
    if m.group("csep") is not None:
        return None
    start, end = m.span("uq")
    sep = m.group("sep") or ""
    key_start = _word_start(m.string, m.start(), "_-.")
    if key_start > 0 and m.string[key_start - 1] == ":" and ":" in sep:
        return None  # ``arn:aws:secretsmanager:...:secret:prod/db``: a path, not a key
    if _is_config_line_key(m.string, m.start()):
        token = _NON_SPACE.match(m.string, start)
        token_end = token.end() if token is not None else end
        value = m.string[start:token_end].rstrip(";,")
        quote = m.string[key_start - 1] if key_start > 0 else ""
        if quote in ("'", '"') and quote not in sep and quote in value:
            # ``"token: abc"``: the quote opened before the key closes the value.
            value = value[: value.index(quote)]
        if _STRING_PREFIX.match(value) or not _is_unquoted_secret(value):
            return None
        value_end = start + len(value)
        if _IDENTIFIER.fullmatch(value) and _is_code_continuation(m, sep, value_end):
            return None
        if _reads_as_sentence(m.string, start):
            if _is_prose(m, sep, value, value_end):
                return None  # "Password: reset it in settings", "- password: The password for"
            return start, value_end
        return start, _config_value_end(m.string, value_end, sep)
    if _is_long_flag(m.string, m.start()) or (
        m.group("wsep") is None
        and _QUERY_PARAM.match(m.string, end) is None
        and m.string.startswith("&", end)
    ):
        # ``--password=Tr0ub4dor&3``: a flag's value runs to the next space (or backtick: the
        # end of inline code in Markdown), less a trailing ``,`` or ``;``. So does a
        # ``password: Tr0ub4dor&3`` in a sentence, whose value goes on after an ``&`` that
        # does not start the next ``&key=`` of a query string: cutting there left ``&3``.
        token = _FLAG_VALUE.match(m.string, start)
        if token is not None:
            end = max(end, start + len(token.group().rstrip(",;")))
    if end - start >= _UQ_MAX:
        # The regex is bounded so that dense triggers cannot cost n^2; a genuinely long value
        # is followed to its end here, once (the caller skips triggers inside the result).
        rest = _UQ_REST.match(m.string, end)
        if rest is not None:
            end = rest.end()
    value = _trim_unquoted(m.string[start:end])
    if not _is_unquoted_secret(value):
        return None
    value_end = start + len(value)
    if _IDENTIFIER.fullmatch(value) and _is_code_continuation(m, sep, value_end):
        return None
    if _is_prose(m, sep, value, value_end):
        return None
    return start, value_end


_FUNCTION_WORDS = frozenset(
    {
        "a", "an", "the", "to", "of", "for", "in", "on", "at", "by", "is", "are", "was", "be",
        "it", "its", "this", "that", "and", "or", "not", "with", "from", "you", "your", "if",
        "when", "as", "use", "used", "see",
    }
)  # fmt: skip


def _reads_as_sentence(text: str, value_start: int) -> bool:
    """Whether the rest of a config line is prose rather than a passphrase of plain words.

    ``password: correct horse battery staple`` is a value; ``password: The password for the
    account.`` is a description. Prose starts with a capital, ends with a full stop or uses a
    function word; a passphrase of random words rarely does all the things a sentence does.
    """
    end = text.find("\n", value_start)
    line = text[value_start : len(text) if end < 0 else end].rstrip()
    if line[:1].isupper() or line.endswith((".", "!", "?")):
        return True
    return any(w.strip(".,;:!?").lower() in _FUNCTION_WORDS for w in line.split())


def _is_code_continuation(m: re.Match[str], sep: str, value_end: int) -> bool:
    """``self.password = user`` and ``Token = Ignore + PlainToken`` are code.

    That is an attribute, or a spaced ``=`` followed by an operator. Shell
    (``PGPASSWORD=x && psql``) and INI files (``password = hunter2``) have neither.
    """
    spaced_equals = "=" in sep and sep.lstrip("\\\"'")[:1] in (" ", "\t")
    return _is_attribute(m.string, m.start()) or bool(
        spaced_equals and _EXPRESSION_GOES_ON.match(m.string, value_end)
    )


def _is_prose(m: re.Match[str], sep: str, value: str, value_end: int) -> bool:
    """ "a default for a secret: compose refuses to start" is a sentence, not a key.

    A colon (unlike "=") is as common in prose as in YAML, and real secrets are rarely a plain
    word followed by more words on the same line.
    """
    return (
        ":" in sep
        and "=" not in sep
        and value.isalpha()
        and _PROSE_GOES_ON.match(m.string, value_end) is not None
    )


def _group_or_whole(
    validate: Callable[[str], bool] | None = None,
) -> _Extractor:
    """Replace only the ``secret`` group when the rule has one, so context (keys) survives."""

    def extract(m: re.Match[str]) -> _Span | None:
        name = "secret" if "secret" in m.re.groupindex else 0
        start, end = m.span(name)
        if start < 0 or start == end:
            return None
        if validate is not None and not validate(m.string[start:end]):
            return None
        return start, end

    return extract


def _varied(value: str) -> bool:
    """A token, not a mask with a real prefix: ``ghp_xxxxxxxx...``, ``sk_live_000000...``."""
    return len(set(value)) >= 8


def _has_letter_and_digit(body: str) -> bool:
    return any(c.isdigit() for c in body) and any(c.isalpha() for c in body)


def _openai_ok(value: str) -> bool:
    # Kebab-case words (``sk-learn-style-option-names``) never mix in digits the way keys do.
    return _has_letter_and_digit(value[3:])


def _mixed_case(value: str) -> bool:
    return any(c.islower() for c in value) and any(c.isupper() for c in value)


def _basic_ok(value: str) -> bool:
    """``Basic <x>`` is only a credential if ``x`` decodes to ``user:password``."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


def _cookie_ok(value: str) -> bool:
    return "=" in value and _is_literal_secret(value)


def _cookie_extract(m: re.Match[str]) -> _Span | None:
    value = m.group("secret").rstrip()
    if not _cookie_ok(value):
        return None
    return m.start("secret"), m.start("secret") + len(value)


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _card_prefix_ok(d: str) -> bool:
    """Issuer prefixes (Visa, Mastercard, Amex, Diners, JCB, Discover, UnionPay).

    Luhn alone passes one random number in ten; requiring a real issuer prefix rejects most
    long ids and compact timestamps (``20240501120000`` is not a Mastercard 2-series number).
    """
    n2, n3, n4 = int(d[:2]), int(d[:3]), int(d[:4])
    return (
        d[0] == "4"
        or 51 <= n2 <= 55
        or 2221 <= n4 <= 2720
        or n2 in (34, 35, 36, 37, 38, 39, 62, 65)
        or 300 <= n3 <= 305
        or 644 <= n3 <= 649
        or n4 == 6011
    )


def _card_ok(value: str) -> bool:
    digits = "".join(c for c in value if c.isdigit())
    return 13 <= len(digits) <= 19 and _card_prefix_ok(digits) and _luhn_ok(digits)


def _shannon_bits(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


# A bare 40-character AWS secret key ("the secret key is wJalr...", the credentials CSV) is only
# recognised with "secret" or "aws" shortly before it, and only if it looks random: upper and
# lower case, a digit or "/+", not hex (sha1 and git commit ids), and ~4.2+ bits per character
# (random base64 of 40 characters has ~4.6-5; paths and identifiers stay under ~4).
_AWS_SECRET_CANDIDATE = re.compile(r"(?<![A-Za-z0-9/+=._\-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_\-])")
_LOWER_RUN = re.compile(r"[a-z]{8}")
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+=")
_HEX = re.compile(r"[0-9a-fA-F]+")


def _looks_like_aws_secret(value: str) -> bool:
    return (
        _mixed_case(value)
        and any(c.isdigit() or c in "/+" for c in value)
        and not _HEX.fullmatch(value)
        and not _LOWER_RUN.search(value)  # a word: ``Documentation`` in a path
        and _shannon_bits(value) >= 4.2
    )


def _aws_secret_extract(m: re.Match[str]) -> _Span | None:
    """The first random-looking 40-character key shortly after "secret" or "aws".

    The rule's ``window`` runs up to 240 characters on, and stops at the next "secret" or
    "aws" (that one scans the rest), so dense text costs each character once.
    """
    text = m.string
    start, end = m.span("window")
    for c in _AWS_SECRET_CANDIDATE.finditer(text, start, end):
        if c.end() == end and end < len(text) and text[end] in _B64_CHARS:
            break  # cut by the window: part of a longer string
        if _looks_like_aws_secret(c.group()):
            return c.span()
    return None


def _any_group_extract(
    validate: Callable[[str], bool] = lambda v: True,
) -> _Extractor:
    """Replace the first of the groups ``sq``, ``dq``, ``uq`` that took part in the match."""

    def extract(m: re.Match[str]) -> _Span | None:
        for group in ("sq", "dq", "uq"):
            value = m.group(group) if group in m.re.groupindex else None
            if value is not None:
                return m.span(group) if validate(value) else None
        return None

    return extract


def _prose_password_ok(value: str) -> bool:
    value = value.rstrip(".,;:!?)")
    return (
        len(value) >= 6
        and any(c.isalpha() for c in value)
        and any(not c.isalpha() for c in value)
        and _is_unquoted_secret(value)
    )


_WITH_BEFORE = re.compile(r"(?i:\b(?:with|using|use)[ \t]+(?:the[ \t]+)?)\Z")


def _prose_password_extract(m: re.Match[str]) -> _Span | None:
    """After "password" a verb ("is", "was", "set to") or, before it, "with"/"using"."""
    if m.group("verb") is None and not _WITH_BEFORE.search(
        m.string, max(0, m.start() - 16), m.start()
    ):
        return None
    value = m.group("uq")
    return m.span("uq") if _prose_password_ok(value) else None


def _cli_value_ok(value: str) -> bool:
    """Not the next flag, a placeholder, or the bare word (``curl -u user:password``)."""
    return (
        not value.startswith("-")
        and value.lower() not in _KEYWORD_NAMES
        and _is_literal_secret(value)
    )


_LOGIN_TOOL = re.compile(r"(?:docker|podman|nerdctl|buildah|skopeo|registry|oras)[ \t]+\Z")


def _login_extract(m: re.Match[str]) -> _Span | None:
    """``docker login -p pw``: only when ``login`` follows a registry client."""
    start = m.start()
    if _LOGIN_TOOL.search(m.string, max(0, start - 24), start) is None:
        return None
    return _any_group_extract(_cli_value_ok)(m)


_GO_DSN_USERINFO = re.compile(r"""[^\s:@/"']{1,128}:(?P<secret>[^\s"']{1,256})""")


def _go_dsn_extract(m: re.Match[str]) -> _Span | None:
    """``user:password@tcp(host)``: the rule matches at ``@``; the password is before it.

    The user starts after the last space, quote or ``=`` (``dsn="..."``), found with ``rfind``
    in C rather than a backwards regex search, which would cost the window squared.
    """
    text, at = m.string, m.start()
    lo = max(0, at - 386)
    begin = max(text.rfind(c, lo, at) for c in " \t\n\"'=") + 1
    u = _GO_DSN_USERINFO.fullmatch(text, max(begin, lo), at)
    if u is None or not _is_literal_secret(u.group("secret")):
        return None
    return u.span("secret")


_AZURE_SECRET_HEAD = re.compile(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}[0-9]\Z")


def _azure_secret_extract(m: re.Match[str]) -> _Span | None:
    """Entra ID client secrets: 3 characters, a digit, ``Q~``, 31-34 more."""
    start = m.start()
    head = _AZURE_SECRET_HEAD.search(m.string, max(0, start - 5), start)
    if head is None:
        return None
    return head.start(), m.end()


def _rest_of_command(names: str, limit: int) -> str:
    """The arguments between a command's name and its credential flag: the same line, up to a
    ``|``, ``;`` or ``&``, and not past the next occurrence of the name. That last condition
    keeps dense text (``curl curl curl ...``) linear: a failed scan stops where the next
    trigger's scan starts instead of reading the same characters again.
    """
    return rf"(?:(?!{names})[^\n|;&]){{0,{limit}}}?"


# The value of a command-line credential flag: quoted (any characters) or up to whitespace.
_CLI_VALUE = (
    r"""(?:'(?P<sq>[^'\n]{1,256})'|"(?P<dq>[^"\n]{1,256})"|(?P<uq>[^\s'"`][^\s'"`]{0,255}))"""
)


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Trigger:
    """A literal that must occur exactly where the rule's regex starts to match.

    ``guard`` is an optional zero-width condition on what follows the literal, checked inside
    the prefilter. Common words ("42 passed", "tokens", "basic") then never reach Python.

    ``anchor`` overrides the anchor character (see ``_anchor_index``). A literal made only of
    common letters (``curl``, ``machine``) is cheaper anchored on a character that other
    triggers already anchor on (``c``, ``p``): the prefilter then stops at no new positions.
    """

    literal: str
    ci: bool = False
    guard: str = ""
    anchor: str = ""


@dataclass(frozen=True, slots=True)
class _Rule:
    """One detector.

    A rule with triggers is only run where the prefilter saw one of them. A rule without
    triggers is scanned with ``finditer``. That suits user patterns, regexes that start with a
    literal (sre then searches for it at ``memchr`` speed), and rules whose ``precheck`` can
    cheaply rule a text out.
    """

    kind: str
    regex: re.Pattern[str]
    extract: _Extractor
    triggers: tuple[_Trigger, ...] = ()
    precheck: Callable[[str], bool] | None = None


def _cs(*literals: str, guard: str = "", anchor: str = "") -> tuple[_Trigger, ...]:
    return tuple(_Trigger(lit, False, guard, anchor) for lit in literals)


def _ci(*literals: str, guard: str = "") -> tuple[_Trigger, ...]:
    return tuple(_Trigger(lit, True, guard) for lit in literals)


# What may follow an assignment key: a ``_key`` suffix, a closing quote, a separator, or the
# space before a command-line value. Shared by all rules that use the same literal, because
# the prefilter emits one alternative per literal.
_SEP_START = r"""[\\"' \t:=]"""
_KEY_END = r"(?i:[_\-]?key)?" + _SEP_START
_SECRET_END = r"(?i:[_\-]?access)?(?i:[_\-]?key)?" + _SEP_START  # + aws_secret_access_key
_PASS_END = r"(?i:w(?:or)?d|phrase)?" + _SEP_START  # password, passwd, passphrase, bare pass


def _rule(
    kind: str,
    pattern: str,
    triggers: tuple[_Trigger, ...] = (),
    extract: _Extractor | None = None,
    flags: int = 0,
    precheck: Callable[[str], bool] | None = None,
) -> _Rule:
    return _Rule(
        kind,
        re.compile(pattern, flags | re.VERBOSE),
        extract or _group_or_whole(_varied),
        triggers,
        precheck,
    )


# Card numbers are the one rule with no literal to anchor on, and digits are everywhere in
# logs, so a candidate needs a cheaper gate than a regex: map every byte to a digit, a
# separator or "other" in C (``bytes.translate``), then look for the digit shapes a card has.
_DIGIT_SHAPE = bytes(
    0x30 if 0x30 <= b <= 0x39 else 0x20 if b in (0x20, 0x2D) else 0x78 for b in range(256)
)
# 13+ digits in a row, or 4-4-4 / 4-6-4 groups. The shared "0000" prefix lets sre search for a
# literal, which is faster here than three ``in`` tests on a haystack full of zeros.
_CARD_SHAPE = re.compile(rb"0000(?:000000000| 0000 0000| 000000 0000)")


def _may_contain_url_password(text: str) -> bool:
    return "@" in text and "://" in text


def _may_contain_card(text: str) -> bool:
    if len(text) < 13:
        return False
    shape = text.encode("utf-8", "surrogatepass").translate(_DIGIT_SHAPE)
    return _CARD_SHAPE.search(shape) is not None


_ASSIGNMENT_KEYS_PASSWORD = r"(?i:passw(?:or)?d|passphrase|pwd|(?<![A-Za-z])pass(?![A-Za-z]))"
# A bare ``auth`` key is only recognised in metadata dict keys: as a text trigger its letters
# are too common to anchor on cheaply (see the prefilter notes).
_ASSIGNMENT_KEYS_GENERIC = r"""(?i:
    (?:secret|token|api[_\-]?key|access[_\-]?key|account[_\-]?key|private[_\-]?key
      |credentials?)
    (?:[_\-]?key)?
)"""
_BOUNDARY = r"(?<![A-Za-z0-9])"

# Order is priority: earlier rules win overlaps. Provider-specific rules come before the
# generic heuristics so that the placeholder names the most specific kind.
_BUILTIN_RULES: tuple[_Rule, ...] = (
    _rule(
        "private_key",
        r"""-----BEGIN[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----
            (?:.*?-----END[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----|.*)
          | AGE-SECRET-KEY-1[0-9A-Z]{58}""",
        _cs("-----BEGIN", "AGE-SECRET-KEY-1"),
        flags=re.DOTALL,
    ),
    _rule(
        "aws_access_key",
        _BOUNDARY + r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
        _cs("AKIA", "ASIA", "ABIA", "ACCA", guard="[A-Z0-9]{16}")
        + _cs("A3T", guard="[A-Z0-9]{17}"),
    ),
    _rule(
        "aws_secret_key",
        r"""(?i:secret[_\-]?access[_\-]?key|(?<=aws[_\-])secret[_\-]?key)
            \\?["']?[ \t]*(?::=|=>|=|:)[ \t]*\\?["']?
            (?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])""",
        _ci("secret", guard=_SECRET_END),
    ),
    _rule(
        "aws_secret_key",
        # A bare 40-character key ("the secret key is wJalr...", the credentials CSV) with
        # "secret" or "aws" shortly before it, if it looks random: both cases, a digit or
        # "/+", not hex (sha1, git commit ids), and 4.2+ bits per character (random base64
        # has ~4.6-5; paths and identifiers stay under ~4).
        r"(?<![A-Za-z0-9/+=])(?i:secret|aws)"
        r"(?P<window>(?:(?!(?<![A-Za-z0-9/+=])(?i:secret|aws))[\s\S]){0,240})",
        _ci("secret", "aws"),
        _aws_secret_extract,
    ),
    _rule(
        "github_token",
        _BOUNDARY
        + r"(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,244})(?![A-Za-z0-9_])",
        _cs("ghp_", "gho_", "ghu_", "ghs_", "ghr_", guard="[A-Za-z0-9]{36}")
        + _cs("github_pat_", guard="[A-Za-z0-9_]{22}"),
    ),
    _rule(
        "gitlab_token",
        _BOUNDARY
        + r"gl(?:pat|dt|rt|ptt|ft|cbt|imt|soat)-[A-Za-z0-9_\-]{20,256}"
        + r"(?:\.[A-Za-z0-9_\-]{1,64}){0,4}",
        _cs("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glcbt-", "glimt-", "glsoat-"),
    ),
    _rule(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+\-]{16,256})",
        _cs("hooks.slack.com/"),
        _group_or_whole(),  # the path is the secret, whatever it looks like
    ),
    _rule(
        "slack_token",
        _BOUNDARY + r"(?:xox[abeoprs]-[A-Za-z0-9\-]{10,256}|xapp-[0-9]-[A-Za-z0-9\-]{10,256})",
        _cs("xox", "xapp-"),
    ),
    _rule(
        "stripe_key",
        _BOUNDARY
        + r"(?:[sr]k_(?:live|test)_[A-Za-z0-9]{10,247}|whsec_[A-Za-z0-9+/=]{24,256})"
        + r"(?![A-Za-z0-9])",
        _cs("sk_live_", "rk_live_", "sk_test_", "rk_test_", "whsec_"),
    ),
    _rule(
        "anthropic_key",
        _BOUNDARY + r"sk-ant-[A-Za-z0-9_\-]{20,512}",
        _cs("sk-ant-"),
    ),
    _rule(
        "openai_key",
        r"""(?<![A-Za-z0-9_\-])sk-
            (?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,512}
              |[A-Za-z0-9]{20,512}(?![A-Za-z0-9_\-]))""",
        _cs("sk-"),
        _group_or_whole(_openai_ok),
    ),
    _rule(
        "google_api_key",
        r"(?<![A-Za-z0-9_\-])AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])",
        _cs("AIza"),
    ),
    _rule(
        "google_oauth_secret",
        r"GOCSPX-[A-Za-z0-9_\-]{24,40}(?![A-Za-z0-9_\-])",
        _cs("GOCSPX-"),
    ),
    _rule(
        "npm_token",
        r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
        _cs("npm_"),
    ),
    _rule(
        "pypi_token",
        r"pypi-AgE[A-Za-z0-9_\-]{50,512}",
        _cs("pypi-AgE"),
    ),
    _rule(
        "huggingface_token",
        r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,128}(?![A-Za-z0-9_])",
        _cs("hf_"),
        _group_or_whole(_mixed_case),
    ),
    _rule(
        "sendgrid_key",
        _BOUNDARY + r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}(?![A-Za-z0-9_\-])",
        _cs("SG."),
    ),
    _rule(
        "twilio_key",
        _BOUNDARY + r"(?:AC|SK)[0-9a-fA-F]{32}(?![A-Za-z0-9])",
        _cs("AC", "SK", guard="[0-9a-fA-F]{32}"),
    ),
    _rule(
        "azure_storage_key",
        r"(?:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{40,512}={0,2})",
        _cs("AccountKey=", "SharedAccessKey="),
    ),
    _rule(
        "vault_token",
        _BOUNDARY + r"hv[sb]\.[A-Za-z0-9_\-]{24,512}",
        _cs("hvs.", "hvb."),
    ),
    _rule(
        "digitalocean_token",
        _BOUNDARY + r"do[opr]_v1_[a-f0-9]{64}(?![a-f0-9])",
        _cs("dop_v1_", "doo_v1_", "dor_v1_"),
    ),
    _rule(
        "dockerhub_token",
        _BOUNDARY + r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,128}",
        _cs("dckr_pat_", "dckr_oat_"),
    ),
    _rule(
        "heroku_token",
        _BOUNDARY + r"HRKU-[A-Za-z0-9_\-]{20,128}",
        _cs("HRKU-"),
    ),
    _rule(
        "shopify_token",
        _BOUNDARY + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])",
        _cs("shpat_", "shpca_", "shppa_", "shpss_"),
    ),
    _rule(
        "azure_client_secret",
        r"Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
        _cs("Q~"),
        _azure_secret_extract,
    ),
    _rule(
        "azure_sas_token",
        r"(?<=[?&;])sig=(?P<secret>[A-Za-z0-9%+/]{20,256}={0,2})",
        _cs("sig=", anchor="g"),
    ),
    _rule(
        "jwt",
        # The header is short; bounding it keeps a long run of "eyJ" from costing n^2.
        r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{4,512}\.eyJ[A-Za-z0-9_\-]{4,16384}"
        r"\.[A-Za-z0-9_\-]{0,1024}",
        _cs("eyJ", guard=r"[A-Za-z0-9_\-]{4,512}\.eyJ"),
    ),
    _rule(
        "url_password",
        # Scanned, not triggered: both characters it needs are checked in C first, and the
        # regex starts with a literal that sre then finds at memchr speed.
        r"""://[^\s:/?#@'"<>\[\]]{0,256}:(?P<secret>[^\s/?#'"<>]{1,512})@(?=[A-Za-z0-9\[])""",
        (),
        _group_or_whole(_is_literal_secret),
        precheck=_may_contain_url_password,
    ),
    _rule(
        "basic_auth",
        _BOUNDARY + r"(?i:basic)[ \t]+(?P<secret>[A-Za-z0-9+/]{6,1024}={0,2})(?![A-Za-z0-9+/=])",
        _ci("basic", guard=r"[ \t]"),
        _group_or_whole(_basic_ok),
    ),
    _rule(
        "bearer_token",
        _BOUNDARY
        + r"(?i:bearer)[ \t]+(?P<secret>[A-Za-z0-9\-._~+/]{8,8192}=*)"
        + r"(?![A-Za-z0-9\-._~+/=])",
        _ci("bearer", guard=r"[ \t]"),
        _header_extract,
    ),
    _rule(
        "authorization_header",
        _BOUNDARY
        + r"""(?i:authorization)\\?["']?[ \t]*[:=][ \t]*\\?["']?
              (?:[A-Za-z][A-Za-z0-9_\-]*[ \t]+)?
              (?P<secret>[A-Za-z0-9\-._~+/]{8,8192}=*)(?![A-Za-z0-9\-._~+/=])""",
        _ci("authorization", guard=r"""[\\"' \t:=]"""),
        _header_extract,
    ),
    _rule(
        "cookie",
        _BOUNDARY + r"""(?i:cookie)\\?["']?[ \t]*:[ \t]*\\?["']?(?P<secret>[^\r\n"'\\]{1,8192})""",
        _ci("cookie", guard=r"""[\\"' \t:]"""),
        _cookie_extract,
    ),
    # Command lines. Each rule starts at the command's name and reads to its flag on the same
    # line, so ``-p 5432``, ``docker run -p 8080:80`` or ``pytest -p no:cacheprovider`` are
    # never read as passwords: only the tools where the flag means one are.
    _rule(
        "password",
        # mysql and its tools take the password glued to -p: ``mysql -u root -pS3cret``.
        r"""\b(?:mysql|mariadb)[\w\-]*\b"""
        + _rest_of_command("mysql|mariadb", 512)
        + r"""(?<=[\s"'])-p"""
        + _CLI_VALUE,
        _cs("mysql", "mariadb"),
        _any_group_extract(_cli_value_ok),
    ),
    _rule(
        "password",
        r"""\bsshpass\b"""
        + _rest_of_command("sshpass", 128)
        + r"""(?<=[\s"'])-p[ \t"',]*"""
        + _CLI_VALUE,
        _cs("sshpass", anchor="p"),
        _any_group_extract(_cli_value_ok),
    ),
    _rule(
        "password",
        # ``docker login -u user -p pw`` (also podman, nerdctl, buildah, skopeo, helm registry,
        # oras).
        r"""login\b"""
        + _rest_of_command("login", 256)
        + r"""(?<=[\s"'])-p[ \t"',]+"""
        + _CLI_VALUE,
        _cs("login"),
        _login_extract,
    ),
    _rule(
        "password",
        # The MongoDB shells and tools: ``mongosh -u admin -p pw`` (``--port`` is the port).
        r"""mongo(?:sh|dump|restore|export|import|stat|top|files)?\b"""
        + _rest_of_command("mongo", 256)
        + r"""(?<=[\s"'])-p[ \t"',]+"""
        + _CLI_VALUE,
        _cs("mongo"),
        _any_group_extract(_cli_value_ok),
    ),
    _rule(
        "password",
        r"""redis-cli\b"""
        + _rest_of_command("redis-cli", 256)
        + r"""(?<=[\s"'])-a[ \t"',]+"""
        + _CLI_VALUE,
        _cs("redis-cli", anchor="c"),
        _any_group_extract(_cli_value_ok),
    ),
    _rule(
        "password",
        # ``curl -u user:password`` / ``--user user:password``: only the part after the colon.
        r"""\bcurl\b"""
        + _rest_of_command("curl", 512)
        + r"""(?<=[\s"'])(?:-u[ \t"',]*|--user[ \t=]+)
            (?:'[^\s:'"\[\]]{1,128}:(?P<sq>[^'\n]{1,256})'
              |"[^\s:'"\[\]]{1,128}:(?P<dq>[^"\n]{1,256})"
              |[^\s:'"\[\]]{1,128}:(?P<uq>[^\s'"`]{1,256}))""",
        _cs("curl", anchor="c"),
        _any_group_extract(_cli_value_ok),
    ),
    _rule(
        "password",
        # .netrc: ``machine host login user password pw``
        r"""\bmachine[ \t]+\S{1,256}(?:\s+(?:login|account|port)[ \t]+\S{1,256}){0,3}
            \s+password[ \t]+(?P<uq>\S{1,256})""",
        _cs("machine", anchor="c"),
        _any_group_extract(_cli_value_ok),
    ),
    _rule(
        "password",
        # ``htpasswd -b[c] file user password`` takes the password as the last argument.
        r"""htpasswd[ \t]+(?:-[a-zA-Z]*b[a-zA-Z]*[ \t]+)(?:-[a-zA-Z]+[ \t]+)*
            [^\s-]\S{0,255}[ \t]+[^\s-]\S{0,127}[ \t]+"""
        + _CLI_VALUE,
        _cs("htpasswd", anchor="p"),
        _any_group_extract(_cli_value_ok),
    ),
    _rule(
        "password",
        # Prose: "the admin password is vX8k2Lq9 until Friday", "log in with password
        # vX8k2Lq9". Only a value that mixes letters with digits or symbols: "the password is
        # stored in Vault" and "with password rotation" stay.
        r"""(?i:passw(?:or)?d|passphrase)[ \t]+
            (?:(?P<verb>is|was|will[ \t]+be|(?:set|changed|reset)[ \t]+to)[ \t]+)?
            [`"']?(?P<uq>[^\s`"']{6,128})""",
        _ci("pass", guard=_PASS_END),
        _prose_password_extract,
    ),
    _rule(
        "url_password",
        # Go's MySQL DSN has no scheme: ``user:password@tcp(host:3306)/db``.
        r"@(?:tcp|unix)\(",
        _cs("@tcp(", "@unix("),
        _go_dsn_extract,
    ),
    _rule(
        "password",
        _ASSIGNMENT_KEYS_PASSWORD + _ASSIGN_TAIL,
        _ci("pass", guard=_PASS_END) + _ci("pwd", guard=_KEY_END),
        _assignment_extract,
    ),
    _rule(
        "generic_secret",
        _ASSIGNMENT_KEYS_GENERIC + _ASSIGN_TAIL,
        _ci("secret", guard=_SECRET_END)
        + _ci(
            "token",
            "api_key",
            "apikey",
            "api-key",
            "access_key",
            "accesskey",
            "access-key",
            "private_key",
            "private-key",
            "account_key",
            "account-key",
            "accountkey",
            guard=_KEY_END,
        )
        + _ci("credential", guard=r"(?i:s)?" + _KEY_END),
        _assignment_extract,
    ),
    _rule(
        "card_number",
        r"""(?<![\w.+/\-])
            (?:[0-9]{13,19}
              |[0-9]{4}(?P<s1>[ \-])[0-9]{4}(?P=s1)[0-9]{4}(?P=s1)[0-9]{1,4}(?:(?P=s1)[0-9]{1,3})?
              |[0-9]{4}(?P<s2>[ \-])[0-9]{6}(?P=s2)[0-9]{4,5})
            (?![\w\-]|[.,][0-9])""",
        (),
        _group_or_whole(_card_ok),
        precheck=_may_contain_card,
    ),
)

BUILTIN_KINDS: tuple[str, ...] = tuple(dict.fromkeys(r.kind for r in _BUILTIN_RULES))

# Metadata arrives as JSON objects, where the key that makes a value secret is a dict key rather
# than text next to the value. Same key vocabulary as the assignment rules, matched as a whole.
_SENSITIVE_KEY = re.compile(
    r"""(?i)^[\w.\-]*?(?:
        (?P<password>passw(?:or)?d|passphrase|pwd|(?<![A-Za-z])pass)
      | (?P<generic_secret>secret|token|api[_\-]?key|access[_\-]?key|account[_\-]?key
          |private[_\-]?key
          |credentials?|(?<![A-Za-z])auth)(?:[_\-]?key)?
      | (?P<authorization_header>(?<![A-Za-z])(?:proxy[_\-])?authorization)
      | (?P<cookie>(?<![A-Za-z])(?:set[_\-])?cookie)
    )$""",
    re.VERBOSE,
)

# --------------------------------------------------------------------------------------------
# Prefilter construction
# --------------------------------------------------------------------------------------------

# Printable ASCII from rarest to most common, as counted over a mix of Python, Markdown, YAML
# and JSON (this repository plus parts of the standard library), with digits and "/" moved
# towards the common end because logs, timestamps and paths are full of them. Only used to pick
# the anchor of each trigger: a poor choice costs speed, never correctness.
_RARITY_ORDER = (
    "~&@QX!Z^K;$<WV?J%BYzHU+\\*GqF|>MjDL#CPIOR}{A][SxTN'E`kwbvy=()7896543/210:_,gh-.umpfcd\""
    "lainosrte \t\n"
)
_RARITY = {ch: i for i, ch in enumerate(_RARITY_ORDER)}


def _anchor_index(trigger: _Trigger) -> int:
    if trigger.anchor:
        return trigger.literal.index(trigger.anchor)

    def cost(i: int) -> int:
        ch = trigger.literal[i]
        if trigger.ci and ch.isalpha():
            ch = ch.lower()  # both cases get scanned; lowercase is the common one
        return _RARITY.get(ch, len(_RARITY_ORDER) // 2)

    return min(range(len(trigger.literal)), key=cost)


@dataclass(frozen=True, slots=True)
class _Entry:
    rule: int
    trigger: _Trigger
    anchor: int  # index of the anchor character in the literal

    def compatible(self, other: _Entry, anchor_char: str) -> bool:
        """Whether ``other`` could match at the same anchor position as this entry.

        sre reports only the first alternative that matches at a position, so an entry must
        also schedule every rule whose literal could match there at the same time
        (``sk-ant-`` and ``sk-``; ``ACCA`` and ``AC``). Scheduling one too many costs a failed
        ``match``; one too few would miss a secret. Case only folds if either side ignores it.
        """
        fold = self.trigger.ci or other.trigger.ci
        mine, theirs = self.trigger.literal, other.trigger.literal
        if fold:
            mine, theirs, anchor_char = mine.lower(), theirs.lower(), anchor_char.lower()
        if theirs[other.anchor] != anchor_char:
            return False
        a, b = mine[: self.anchor], theirs[: other.anchor]
        c, d = mine[self.anchor + 1 :], theirs[other.anchor + 1 :]
        return (a.endswith(b) or b.endswith(a)) and (c.startswith(d) or d.startswith(c))


def _quick_reject(group: Sequence[_Entry]) -> str:
    """A one-character look-ahead shared by a whole anchor group.

    Most candidates are ordinary letters that are not part of any trigger. Checking the next
    character once, instead of trying every alternative's look-arounds, makes rejecting them
    cost a single assertion.
    """
    nxt: set[str] = set()
    for e in group:
        rest = e.trigger.literal[e.anchor + 1 :]
        if not rest:
            return ""
        nxt.update({rest[0].lower(), rest[0].upper()} if e.trigger.ci else {rest[0]})
    return "(?=[" + "".join(re.escape(c) for c in sorted(nxt)) + "])"


def _build_prefilter(
    rules: Sequence[_Rule],
) -> tuple[re.Pattern[str] | None, list[tuple[tuple[int, int], ...]]]:
    """One regex over all triggers, plus for each marker group the (rule, offset) pairs to run.

    ``offset`` is how far the literal starts before the anchor, so the rule is matched at
    ``prefilter_match.start() - offset``.
    """
    entries = [
        _Entry(i, t, _anchor_index(t)) for i, rule in enumerate(rules) for t in rule.triggers
    ]
    if not entries:
        return None, [()]
    by_anchor: dict[str, list[_Entry]] = {}
    for e in entries:
        ch = e.trigger.literal[e.anchor]
        variants = {ch.lower(), ch.upper()} if e.trigger.ci else {ch}
        for v in sorted(variants):
            by_anchor.setdefault(v, []).append(e)

    markers: list[tuple[tuple[int, int], ...]] = [()]  # group 0 is the whole match
    branches = []
    # At each candidate position sre tries the top-level branches in order; putting the most
    # common anchor characters first keeps that walk short for the bulk of the candidates.
    common_first = sorted(by_anchor, key=lambda c: -_RARITY.get(c, len(_RARITY_ORDER) // 2))
    for ch in common_first:
        group = by_anchor[ch]
        group.sort(key=lambda e: -len(e.trigger.literal))
        alternatives = []
        emitted: set[tuple[str, bool, str]] = set()
        for e in group:
            lit_key = e.trigger.literal.lower() if e.trigger.ci else e.trigger.literal
            key = (lit_key, e.trigger.ci, e.trigger.guard)
            if key in emitted:
                continue  # same literal for another rule: already in the first one's marker
            emitted.add(key)
            lit, flags = e.trigger.literal, "(?i:" if e.trigger.ci else "(?:"
            behind = f"(?<={flags}{re.escape(lit[: e.anchor + 1])}))" if e.anchor else ""
            rest = lit[e.anchor + 1 :]
            ahead = f"{flags}{re.escape(rest)})" if rest else ""
            if e.trigger.guard:
                ahead += e.trigger.guard
            alternatives.append(f"{behind}(?={ahead})()" if ahead else f"{behind}()")
            implied = [(o.rule, o.anchor) for o in entries if e.compatible(o, ch)]
            markers.append(tuple(dict.fromkeys([(e.rule, e.anchor), *implied])))
        branches.append(f"{re.escape(ch)}{_quick_reject(group)}(?:{'|'.join(alternatives)})")
    return re.compile("|".join(branches)), markers


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

_KIND_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


def _placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class Redactor:
    """Replaces secrets with ``[REDACTED:<kind>]`` and counts what it replaced."""

    def __init__(
        self, extra_patterns: Mapping[str, str] | None = None, disabled: Iterable[str] = ()
    ) -> None:
        """Compile user patterns and the prefilter once, so each ``redact`` only does matching.

        Bad configuration fails here, at startup, rather than on the first request: an invalid
        regex, a kind name that would break the placeholder, a pattern that matches the empty
        string, and an unknown name in ``disabled`` (a typo there would silently leave a rule
        on that the operator believes is off, or hide that the rule they wanted is missing).
        """
        disabled_set = set(disabled)
        extra_rules: list[_Rule] = []
        for kind, pattern in (extra_patterns or {}).items():
            if not _KIND_NAME.fullmatch(kind):
                raise ValueError(
                    f"redaction kind {kind!r} must use only letters, digits, '_', '.', '-'"
                )
            try:
                compiled = re.compile(pattern)
            except (re.error, TypeError) as exc:
                raise ValueError(f"invalid redaction pattern for kind {kind!r}: {exc}") from exc
            if compiled.fullmatch("") is not None:
                raise ValueError(f"redaction pattern for kind {kind!r} matches the empty string")
            if kind not in disabled_set:
                extra_rules.append(_Rule(kind, compiled, _group_or_whole()))

        known = set(BUILTIN_KINDS) | set(extra_patterns or {})
        unknown = sorted(disabled_set - known)
        if unknown:
            raise ValueError(f"unknown redaction kinds in disabled: {', '.join(unknown)}")

        builtin = [r for r in _BUILTIN_RULES if r.kind not in disabled_set]
        # User patterns take priority: they encode knowledge of the user's own secret formats.
        self._rules: tuple[_Rule, ...] = (*extra_rules, *builtin)
        self._scanned: tuple[tuple[int, _Rule], ...] = tuple(
            (i, r) for i, r in enumerate(self._rules) if not r.triggers
        )
        offset = len(extra_rules)
        prefilter, markers = _build_prefilter(builtin)
        self._prefilter = prefilter
        self._markers: list[tuple[tuple[int, int], ...]] = [
            tuple((ri + offset, off) for ri, off in m) for m in markers
        ]
        self._placeholders = tuple(_placeholder(r.kind) for r in self._rules)
        self._enabled_kinds = {r.kind for r in self._rules}
        self._kinds = list(dict.fromkeys(r.kind for r in (*builtin, *extra_rules)))

    @property
    def kinds(self) -> list[str]:
        """Enabled kinds: built-ins in priority order, then user kinds."""
        return list(self._kinds)

    def redact(self, text: str) -> tuple[str, dict[str, int]]:
        """Return the text with secrets replaced, and how many of each kind were replaced."""
        if not text:
            return text, {}
        found = self._find(text)
        if not found:
            return text, {}
        return self._apply(text, found)

    def redact_value(self, value: object) -> tuple[object, dict[str, int]]:
        """Redact every string inside JSON-like metadata; keys and non-strings are kept.

        A dict key can itself say "secret" (``{"password": "hunter2"}``), and the value then has
        no context of its own, so a string under such a key is replaced whole. Containers
        that needed no change are returned as the same object, so clean metadata costs no copy.
        """
        counts: dict[str, int] = {}
        return self._walk(value, None, counts), counts

    # -- internals -----------------------------------------------------------------------

    def _find(self, text: str) -> list[tuple[int, int, int]]:
        """Candidate spans as (priority, start, end); priority is the index into _rules."""
        found: list[tuple[int, int, int]] = []
        rules = self._rules
        if self._prefilter is not None:
            markers = self._markers
            # How far each rule has already matched: a trigger inside that region can only
            # repeat the finding, and skipping it keeps dense triggers ("password=password=...")
            # linear instead of quadratic.
            covered: dict[int, int] = {}
            for pm in self._prefilter.finditer(text):
                anchor = pm.start()
                for ri, off in markers[pm.lastindex or 0]:
                    pos = anchor - off
                    if pos < covered.get(ri, -1):
                        continue
                    rule = rules[ri]
                    m = rule.regex.match(text, pos)
                    if m is None:
                        continue
                    span = rule.extract(m)
                    if span is None:
                        covered[ri] = m.end()
                    else:
                        covered[ri] = max(m.end(), span[1])
                        found.append((ri, span[0], span[1]))
        for ri, rule in self._scanned:
            if rule.precheck is not None and not rule.precheck(text):
                continue
            for m in rule.regex.finditer(text):
                span = rule.extract(m)
                if span is not None:
                    found.append((ri, span[0], span[1]))
        return found

    def _apply(self, text: str, found: list[tuple[int, int, int]]) -> tuple[str, dict[str, int]]:
        found.sort()  # strongest rule first
        # Accepted spans are pairwise disjoint and kept sorted, so their ends are sorted too and
        # the spans overlapping a candidate are one contiguous slice found by bisection.
        starts: list[int] = []
        ends: list[int] = []
        prios: list[int] = []
        for pri, start, end in found:
            lo = bisect.bisect_right(ends, start)
            hi = bisect.bisect_left(starts, end, lo)
            if lo == hi:
                starts.insert(lo, start)
                ends.insert(lo, end)
                prios.insert(lo, pri)
            elif not (hi - lo == 1 and starts[lo] <= start and end <= ends[lo]):
                # Sticks out of a stronger span: merge, so no fragment of either stays visible.
                merged = (min(start, starts[lo]), max(end, ends[hi - 1]), min(prios[lo:hi]))
                starts[lo:hi], ends[lo:hi], prios[lo:hi] = [merged[0]], [merged[1]], [merged[2]]
        parts: list[str] = []
        counts: dict[str, int] = {}
        pos = 0
        for start, end, pri in zip(starts, ends, prios, strict=True):
            parts.append(text[pos:start])
            parts.append(self._placeholders[pri])
            kind = self._rules[pri].kind
            counts[kind] = counts.get(kind, 0) + 1
            pos = end
        parts.append(text[pos:])
        return "".join(parts), counts

    def _walk(self, value: object, key: object, counts: dict[str, int]) -> object:
        if isinstance(value, str):
            new, found = self.redact(value)
            if not found and isinstance(key, str):
                kind = self._sensitive_key_kind(key)
                if kind is not None and _is_literal_secret(value):
                    new, found = _placeholder(kind), {kind: 1}
            for kind, n in found.items():
                counts[kind] = counts.get(kind, 0) + n
            return new
        if isinstance(value, dict):
            out = {k: self._walk(v, k, counts) for k, v in value.items()}
            changed = any(out[k] is not v for k, v in value.items())
            return out if changed else value
        if isinstance(value, list | tuple):
            items = [self._walk(v, None, counts) for v in value]
            if len(items) > 1 and any(isinstance(v, str) and v[:1] == "-" for v in items):
                self._redact_argv(items, counts)
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return tuple(items) if isinstance(value, tuple) else items
        return value

    def _redact_argv(self, items: list[object], counts: dict[str, int]) -> None:
        """An argument vector (``["mysql", "-u", "root", "-pS3cret"]``, ``["--password", "x"]``).

        A flag and its value are separate elements, so neither has the context that makes the
        other a secret. The string elements are joined with spaces, as a shell would show the
        command, the text rules run over that line, and each span found is cut back to the
        elements it covers. Only lists with a ``-flag`` element get here.
        """
        strings = [(i, v) for i, v in enumerate(items) if isinstance(v, str)]
        if len(strings) < 2:
            return
        line = " ".join(v for _, v in strings)
        found = self._find(line)
        if not found:
            return
        local: dict[int, list[tuple[int, int, int]]] = {}
        pos = 0
        for i, v in strings:
            end = pos + len(v)
            for pri, start, stop in found:
                lo, hi = max(start, pos), min(stop, end)
                if lo < hi:
                    local.setdefault(i, []).append((pri, lo - pos, hi - pos))
            pos = end + 1
        for i, spans in local.items():
            text = items[i]
            assert isinstance(text, str)
            items[i], found_here = self._apply(text, spans)
            for kind, n in found_here.items():
                counts[kind] = counts.get(kind, 0) + n

    def _sensitive_key_kind(self, key: str) -> str | None:
        # Metadata keys repeat from event to event ("tool", "duration_ms"...): short ones are
        # matched once and remembered (a bounded cache: a few hundred KiB at most).
        kind = _cached_key_group(key) if len(key) <= 64 else _sensitive_key_group(key)
        return kind if kind in self._enabled_kinds else None


def _sensitive_key_group(key: str) -> str | None:
    m = _SENSITIVE_KEY.match(key)
    return None if m is None else m.lastgroup


_cached_key_group = functools.lru_cache(maxsize=4096)(_sensitive_key_group)


# --------------------------------------------------------------------------------------------
# Shared detector for read-side use
# --------------------------------------------------------------------------------------------

_J = TypeVar("_J")


@functools.cache
def default_redactor() -> Redactor:
    """The built-in rules with no configuration, built once per process and shared.

    For services that pass stored text through the current detector when they read it, so a
    rule added after an event was recorded still hides what it finds.
    """
    return Redactor()


def redact_text(text: str) -> str:
    """``text`` with every secret the built-in rules find replaced by its placeholder."""
    return default_redactor().redact(text)[0]


def redact_json(value: _J) -> _J:
    """Redact every string inside JSON-like data (dicts, lists, tuples); keys are kept.

    Also catches what only the structure shows: a string under a key that names a secret
    (``{"password": "..."}``) and a flag and its value as separate list elements
    (``["--password", "..."]``). Data with nothing to redact is returned as the same object.
    """
    return cast(_J, default_redactor().redact_value(value)[0])
