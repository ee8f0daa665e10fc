"""Assignment-style rules: ``password = "..."``, ``token: ...``, ``--password x``, ``KEY=value``.

The same key can start a Python assignment, a YAML or .env line, a shell variable, a command-line
flag, a JSON member, a URL query parameter or a sentence, and each ends its value differently.
``ASSIGN_TAIL`` is the separator and value syntax that every assignment rule shares, and
``assignment_extract`` decides, from the text around the match, which of those it is: what the
value is (a quoted string, a token, the rest of a config line) and whether it is a value at all
rather than code or prose.
"""

from __future__ import annotations

import re

from agent_memory_common.redaction.extractors import Span
from agent_memory_common.redaction.values import (
    IDENTIFIER,
    is_literal_secret,
    is_unquoted_secret,
    trim_unquoted,
)

# ``&user=...``: the next parameter of a URL query string, where an ``&`` ends a value.
_QUERY_PARAM = re.compile(r"&[A-Za-z_][\w.\-]*=")


# Assignment rules (``password = "..."``, ``token: ...``, ``--password x``) share the separator
# and the value syntax. The key is matched from the trigger literal onwards, so any prefix
# (``PG``PASSWORD, ``DB_``PASSWORD, ``x-``API-KEY) is allowed. The key must end right at the
# separator, which leaves ``max_tokens=``, ``token_count:`` and ``password_file=`` alone.
ASSIGN_TAIL = r"""
    (?:
        (?P<sep>\\?["']?\]?[ \t]*(?::=|=>|=(?!=)|:(?!:))[ \t]*)
      | (?P<wsep>[ \t]+)
      | (?P<csep>["'][ \t]*,[ \t]*(?=["']))
    )
    (?:
        \\"(?P<eq>(?:[^"\\\n]|\\[^"\n]){0,4096})\\"
      | "(?P<dq>(?:[^"\\\n]|\\\r?\n|\\.){0,4096})"
      | '(?P<sq>(?:[^'\n]|(?<=\\)\n|(?<=\\\r)\n){0,4096})'
      | (?P<block>[|>][0-9+\-]{0,2})(?=[ \t]{0,64}(?:\#[^\n]{0,80})?(?:\r?\n|\Z))
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


# A key at a line's start (after indentation, a YAML list dash, ``export`` or an opening
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


def assignment_extract(m: re.Match[str]) -> Span | None:
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
            return m.span(group) if is_literal_secret(value) else None
    if m.group("csep") is not None:
        return None
    if m.group("block") is not None:
        return (
            _block_scalar(m.string, m.start(), m.end("block"))
            if ":" in (m.group("sep") or "")
            else None
        )
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
        if _STRING_PREFIX.match(value) or not is_unquoted_secret(value):
            return None
        value_end = start + len(value)
        if IDENTIFIER.fullmatch(value) and _is_code_continuation(m, sep, value_end):
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
    value = trim_unquoted(m.string[start:end])
    if not is_unquoted_secret(value):
        return None
    value_end = start + len(value)
    if IDENTIFIER.fullmatch(value) and _is_code_continuation(m, sep, value_end):
        return None
    if _is_prose(m, sep, value, value_end):
        return None
    return start, value_end


_INDENT = re.compile(r"[ \t]*")
_BLOCK_LINES_MAX = 256


def _block_scalar(text: str, key_start: int, indicator_end: int) -> Span | None:
    """A YAML block scalar under a secret's key: ``api_token: |`` and the value on the lines below.

    The value is every following line indented deeper than the key's line (blank lines
    included), up to the first line that is not. An encrypted value (``!vault |`` then
    ``$ANSIBLE_VAULT;...``) has a tag before the indicator, so the rule's regex never gets
    here, and a template or a sentence below the key is not a secret.
    """
    line_start = text.rfind("\n", max(0, key_start - 256), key_start) + 1
    if line_start == 0 and key_start > 256:
        return None  # not a YAML line
    indent = _INDENT.match(text, line_start)
    parent = indent.end() - line_start if indent is not None else 0
    pos = text.find("\n", indicator_end)
    start = end = -1
    for _ in range(_BLOCK_LINES_MAX):
        if pos < 0:
            break
        line_begin = pos + 1
        pos = text.find("\n", line_begin)
        line = text[line_begin : len(text) if pos < 0 else pos].rstrip()
        content = line.lstrip(" \t")
        if not content:
            continue
        if len(line) - len(content) <= parent:
            break
        if start < 0:
            start = line_begin + len(line) - len(content)
        end = line_begin + len(line)
    if start < 0:
        return None
    value = text[start:end]
    if not is_literal_secret(value) or (" " in value and _reads_as_sentence(text, start)):
        return None
    return start, end


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
    """ "a note on the token: rotate it every month" is a sentence, not a key.

    A colon (unlike "=") is as common in prose as in YAML, and real secrets are rarely a plain
    word followed by more words on the same line.
    """
    return (
        ":" in sep
        and "=" not in sep
        and value.isalpha()
        and _PROSE_GOES_ON.match(m.string, value_end) is not None
    )
