"""Extractors: from a rule's match to the span to redact, or ``None`` for "not a secret".

A rule's regex finds a candidate with its context (a key, a header name, a command line); its
extractor cuts out the secret alone, so the context survives in the output, and applies the
value checks of ``values`` that a regex cannot express. The assignment rules' extractor has a
module of its own (``assignment``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent_memory_common.redaction.values import (
    cli_value_ok,
    cookie_ok,
    is_literal_secret,
    is_plausible_token,
    looks_like_aws_secret,
    looks_like_url_token,
    prose_password_ok,
    varied,
)

Span = tuple[int, int]
Extractor = Callable[[re.Match[str]], Span | None]


def group_or_whole(
    validate: Callable[[str], bool] | None = None,
) -> Extractor:
    """Replace only the ``secret`` group when the rule has one, so context (keys) survives."""

    def extract(m: re.Match[str]) -> Span | None:
        name = "secret" if "secret" in m.re.groupindex else 0
        start, end = m.span(name)
        if start < 0 or start == end:
            return None
        if validate is not None and not validate(m.string[start:end]):
            return None
        return start, end

    return extract


def header_extract(m: re.Match[str]) -> Span | None:
    """A header credential, unless it is code: ``authorization = base64.decodebytes(x)``."""
    start, end = m.span("secret")
    if m.string.startswith("(", end) or not is_plausible_token(m.string[start:end]):
        return None
    return start, end


def cookie_extract(m: re.Match[str]) -> Span | None:
    value = m.group("secret").rstrip()
    if not cookie_ok(value):
        return None
    return m.start("secret"), m.start("secret") + len(value)


# A bare 40-character AWS secret key ("the secret key is wJalr...", the credentials CSV) is only
# recognised with "secret" or "aws" shortly before it, and only if it looks random
# (``values.looks_like_aws_secret``).
_AWS_SECRET_CANDIDATE = re.compile(r"(?<![A-Za-z0-9/+=._\-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_\-])")
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+=")


def aws_secret_extract(m: re.Match[str]) -> Span | None:
    """The first random-looking 40-character key shortly after "secret" or "aws".

    The rule's ``window`` runs up to 240 characters on, and stops at the next "secret" or
    "aws" (that one scans the rest), so dense text costs each character once.
    """
    text = m.string
    start, end = m.span("window")
    for c in _AWS_SECRET_CANDIDATE.finditer(text, start, end):
        if c.end() == end and end < len(text) and text[end] in _B64_CHARS:
            break  # cut by the window: part of a longer string
        if looks_like_aws_secret(c.group()):
            return c.span()
    return None


def any_group_extract(
    validate: Callable[[str], bool] = lambda v: True,
) -> Extractor:
    """Replace the first of the groups ``sq``, ``dq``, ``uq`` that took part in the match."""

    def extract(m: re.Match[str]) -> Span | None:
        for group in ("sq", "dq", "uq"):
            value = m.group(group) if group in m.re.groupindex else None
            if value is not None:
                return m.span(group) if validate(value) else None
        return None

    return extract


_WITH_BEFORE = re.compile(r"(?i:\b(?:with|using|use)[ \t]+(?:the[ \t]+)?)\Z")


def prose_password_extract(m: re.Match[str]) -> Span | None:
    """After "password" a verb ("is", "was", "set to") or, before it, "with"/"using"."""
    if m.group("verb") is None and not _WITH_BEFORE.search(
        m.string, max(0, m.start() - 16), m.start()
    ):
        return None
    value = m.group("uq")
    return m.span("uq") if prose_password_ok(value) else None


_LOGIN_TOOL = re.compile(r"(?:docker|podman|nerdctl|buildah|skopeo|registry|oras)[ \t]+\Z")


def login_extract(m: re.Match[str]) -> Span | None:
    """``docker login -p pw``: only when ``login`` follows a registry client."""
    start = m.start()
    if _LOGIN_TOOL.search(m.string, max(0, start - 24), start) is None:
        return None
    return any_group_extract(cli_value_ok)(m)


_GO_DSN_USERINFO = re.compile(r"""[^\s:@/"']{1,128}:(?P<secret>[^\s"']{1,256})""")


def go_dsn_extract(m: re.Match[str]) -> Span | None:
    """``user:password@tcp(host)``: the rule matches at ``@``; the password is before it.

    The user starts after the last space, quote or ``=`` (``dsn="..."``), found with ``rfind``
    in C rather than a backwards regex search, which would cost the window squared.
    """
    text, at = m.string, m.start()
    lo = max(0, at - 386)
    begin = max(text.rfind(c, lo, at) for c in " \t\n\"'=") + 1
    u = _GO_DSN_USERINFO.fullmatch(text, max(begin, lo), at)
    if u is None or not is_literal_secret(u.group("secret")):
        return None
    return u.span("secret")


_AZURE_SECRET_HEAD = re.compile(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}[0-9]\Z")


def azure_secret_extract(m: re.Match[str]) -> Span | None:
    """Entra ID client secrets: 3 characters, a digit, ``Q~``, 31-34 more."""
    start = m.start()
    head = _AZURE_SECRET_HEAD.search(m.string, max(0, start - 5), start)
    if head is None:
        return None
    return head.start(), m.end()


def standalone_token_extract(m: re.Match[str]) -> Span | None:
    """A token found by a literal-first regex, unless it is the tail of a longer word.

    Scanned rules start with their literal (``ya29.``), so sre finds it at ``memchr`` speed;
    a look-behind in front would turn that search off. The word boundary is checked here.
    """
    start = m.start()
    if start > 0 and (m.string[start - 1].isalnum() or m.string[start - 1] in "_-/"):
        return None
    return m.span() if varied(m.group()) else None


def url_token_extract(m: re.Match[str]) -> Span | None:
    """``https://<token>@host``: a key sent as the user name (``values.looks_like_url_token``)."""
    start, end = m.span("secret")
    return (start, end) if looks_like_url_token(m.string[start:end]) else None


# A libpq password file line, ``hostname:port:database:username:password``: the rule finds
# ``:port:`` (digits or ``*``), this checks the whole line. No field holds a space, so log lines
# and log lines with a ``HH:MM:SS:ms`` time never fit; ``\:`` escapes a colon in a field.
_PGPASS_HOST = re.compile(r"[ \t]*(?:[^\s:\\]|\\.){1,253}")
_PGPASS_REST = re.compile(
    r"(?:[^\s:\\]|\\.){1,128}:(?:[^\s:\\]|\\.){1,128}:(?P<secret>(?:[^\s:\\]|\\.){1,256})(?=\r?\n|\Z)"
)
_PGPASS_HOST_MAX = 320


def pgpass_extract(m: re.Match[str]) -> Span | None:
    text = m.string
    # Both ends are looked for within the fields' bounds, so a long line with many
    # ``:1:`` costs each candidate a few hundred characters, not the line.
    lo = max(0, m.start() - _PGPASS_HOST_MAX)
    line_start = text.rfind("\n", lo, m.start()) + 1
    if line_start == 0 and lo > 0:
        return None
    if _PGPASS_HOST.fullmatch(text, line_start, m.start()) is None:
        return None
    rest = _PGPASS_REST.match(text, m.end())
    if rest is None:
        return None
    secret = rest.group("secret")
    if secret.isdigit() or not is_literal_secret(secret):
        return None  # colon-separated numbers, not a password file
    return rest.span("secret")


# Oracle's ``user/password@connect_identifier``. SQL*Plus's CONNECT is a command only where a
# line begins (after an optional ``SQL>`` prompt); in a program it is a call, ``connect(``.
_SQLPLUS_LINE_START = re.compile(r"(?:SQL>[ \t]*)?")
_CALL_OPENS = re.compile(r"\([ \t]*[\"']?")
# After "oracle", what comes before the login in a driver call (``cx_Oracle.connect("``,
# ``oracledb.connect(``), a JDBC URL (``jdbc:oracle:thin:``) or a setting
# (``ORACLE_CONN="``, ``oracle_dsn: ``).
_AFTER_ORACLE = re.compile(
    r"""[\w.]*connect\([ \t]*["']?|:(?:thin|oci8?|kprb):|\w*[ \t]*[=:][ \t]*["']?""",
    re.IGNORECASE,
)
# The tools take the login as their first argument, after flags (``sqlplus -s -L``) or as
# ``userid=`` (``sqlldr``, ``expdp``).
_BEFORE_LOGIN = re.compile(r"""(?:[ \t]+-{1,2}[A-Za-z]+)*[ \t]+(?:userid=["']?)?""", re.IGNORECASE)
_ORACLE_TOOLS = frozenset({"sqlplus", "sqlldr", "expdp", "impdp"})
_ENDS_A_WORD = frozenset({"", " ", "\t", "\r", "\n", '"', "'", "`"})


def oracle_login_extract(m: re.Match[str]) -> Span | None:
    """``sqlplus scott/tiger@db``, ``jdbc:oracle:thin:scott/tiger@//host``, ``connect(...)``.

    ``a/b@c`` is also a GitHub Actions reference (``owner/action@v1``) or a package spec,
    so the rule starts at an Oracle tool, ``oracle`` or SQL*Plus's CONNECT on the same line.
    Without ``@`` (a local login, ``sqlplus scott/tiger``) only the tools count.
    """
    text = m.string
    tool = m.group("tool").lower()
    if tool.startswith(("conn", "sql>")):
        between = text[m.end("tool") : m.start("user")]
        if _CALL_OPENS.fullmatch(between) is None:
            if between.strip(" \t"):
                return None  # CONNECT is followed by its login, nothing else
            line_start = text.rfind("\n", max(0, m.start() - 80), m.start()) + 1
            head = text[line_start : m.start()].strip()
            if _SQLPLUS_LINE_START.fullmatch(head) is None:
                return None
    elif (
        tool in _ORACLE_TOOLS
        and _BEFORE_LOGIN.fullmatch(text, m.end("tool"), m.start("user")) is None
    ):
        return None  # a path after the tool's name in prose
    elif tool == "oracle" and _AFTER_ORACLE.fullmatch(text, m.end("tool"), m.start("user")) is None:
        return None  # a path after the word in prose
    if m.group("at") is None and (
        tool not in _ORACLE_TOOLS or text[m.end() : m.end() + 1] not in _ENDS_A_WORD
    ):
        return None
    return any_group_extract(cli_value_ok)(m)


_CONTINUED_TOKEN = re.compile(r"[^\s\"'`\\]+")
_LINE_BREAK = re.compile(r"\\\r?\n([ \t]{0,256})")


def continued_end(text: str, end: int, memo: dict[int, int]) -> int:
    """Where a secret cut by a backslash line continuation really ends.

    ``TOKEN="abc\\<newline>def"`` and ``--password abc\\<newline>def`` are one value split for
    width; a span that ends at such a break would leave its second half readable. A value
    quoted across the break keeps the next line's indentation inside the string, so an
    indented continuation only counts when it ends at a quote; an unindented one is one shell
    word with the first half. ``--password x \\`` (a space before the backslash) is a new
    argument on the next line and is left alone.

    ``memo`` maps every end already followed to where its chain stops, shared by the spans of
    one text, so a text of many continued lines is walked once rather than once per span.
    """
    chain: list[int] = []
    while True:
        known = memo.get(end)
        if known is not None:
            end = known
            break
        chain.append(end)
        at = end - 1 if end > 0 and text[end - 1] == "\\" else end
        brk = _LINE_BREAK.match(text, at)
        if brk is None:
            break
        token = _CONTINUED_TOKEN.match(text, brk.end())
        if token is None:
            break
        indented = brk.group(1) != ""
        closes = text[token.end() : token.end() + 1] in ('"', "'") or text.startswith(
            "\\\n", token.end()
        )
        if indented and not closes:
            break
        end = token.end()
    for e in chain:
        memo[e] = end
    return end
