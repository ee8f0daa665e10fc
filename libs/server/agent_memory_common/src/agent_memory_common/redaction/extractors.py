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
    prose_password_ok,
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
