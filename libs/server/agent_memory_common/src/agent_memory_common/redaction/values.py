"""Value heuristics: whether a string found where a secret could be is one.

The rules find *where* a secret could be (after ``password=``, in ``Basic <x>``, a 40-character
string near "aws"); these checks decide whether the value there is one. Most of them reject
what is plainly not a secret (nulls and type names, templates and references, masks that
someone already applied, documentation placeholders, variables and calls in code), because
redacting those would hide useful context. The others confirm a token's shape: a Luhn check
and an issuer prefix for card numbers, ``user:password`` inside ``Basic`` credentials, mixed
case and Shannon entropy for a bare AWS secret key.

Shared by the assignment-style rules (``assignment``), the extractors of the other rules
(``extractors``), the rule table (``rules``) and the dict-key check of ``Redactor``.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

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
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDISH = re.compile(r"pass|pwd|secret|token|key|cred|auth", re.IGNORECASE)
_KEYWORD_NAMES = frozenset(
    {"password", "passwd", "pass", "pwd", "passphrase", "secret", "token", "key", "apikey"}
    | {"credential", "credentials", "auth", "pw"}
)
_PLAIN_WORDS = re.compile(r"[A-Za-z_.\-]+")


def is_literal_secret(value: str) -> bool:
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


def is_unquoted_secret(value: str) -> bool:
    """Unquoted values are also code, so variables and calls must not count as secrets."""
    if len(value) < 3 or not is_literal_secret(value):
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
        and IDENTIFIER.fullmatch(value)
        and _KEYWORDISH.search(value)
        and (value.islower() or value.isupper())
    )


_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def trim_unquoted(value: str) -> str:
    """Drop sentence dots, colons and closers the value did not open (``f(pwd=None):``)."""
    while value:
        last = value[-1]
        if last in ".:" or (last in _CLOSERS and value.count(_CLOSERS[last]) < value.count(last)):
            value = value[:-1]
        else:
            break
    return value


def is_plausible_token(value: str) -> bool:
    """Header credentials are random; ``Bearer authentication`` or ``YOUR_TOKEN`` are not."""
    if not is_literal_secret(value):
        return False
    return not (_PLAIN_WORDS.fullmatch(value) and len(value) < 32)


def varied(value: str) -> bool:
    """A token, not a mask with a real prefix: ``ghp_xxxxxxxx...``, ``sk_live_000000...``."""
    return len(set(value)) >= 8


def _has_letter_and_digit(body: str) -> bool:
    return any(c.isdigit() for c in body) and any(c.isalpha() for c in body)


def openai_ok(value: str) -> bool:
    # Kebab-case words (``sk-learn-style-option-names``) never mix in digits the way keys do.
    return _has_letter_and_digit(value[3:])


def mixed_case(value: str) -> bool:
    return any(c.islower() for c in value) and any(c.isupper() for c in value)


def basic_ok(value: str) -> bool:
    """``Basic <x>`` is only a credential if ``x`` decodes to ``user:password``."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


def cookie_ok(value: str) -> bool:
    return "=" in value and is_literal_secret(value)


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


def card_ok(value: str) -> bool:
    digits = "".join(c for c in value if c.isdigit())
    return 13 <= len(digits) <= 19 and _card_prefix_ok(digits) and _luhn_ok(digits)


def _shannon_bits(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


# A bare 40-character AWS secret key ("the secret key is wJalr...", the credentials CSV) is only
# recognised if it looks random: upper and lower case, a digit or "/+", not hex (sha1 and git
# commit ids), and ~4.2+ bits per character (random base64 of 40 characters has ~4.6-5; paths
# and identifiers stay under ~4). Where it is looked for: ``extractors.aws_secret_extract``.
_LOWER_RUN = re.compile(r"[a-z]{8}")
_HEX = re.compile(r"[0-9a-fA-F]+")


def looks_like_aws_secret(value: str) -> bool:
    return (
        mixed_case(value)
        and any(c.isdigit() or c in "/+" for c in value)
        and not _HEX.fullmatch(value)
        and not _LOWER_RUN.search(value)  # a word: ``Documentation`` in a path
        and _shannon_bits(value) >= 4.2
    )


def looks_like_url_token(value: str) -> bool:
    """A URL's user name that is a credential: ``https://<key>@o1.ingest.sentry.io/1``.

    User names (``git``, ``jane.doe``, ``deploy-bot``) are words; a key used as the user name
    is random. So: 20+ characters mixing letters and digits, and either hex of 32+ (a Sentry
    DSN key, a classic GitHub token) or mixed case with no 8-letter word and ~4+ bits of
    entropy per character.
    """
    if len(value) < 20 or not _has_letter_and_digit(value) or not is_literal_secret(value):
        return False
    if _HEX.fullmatch(value):
        return len(value) >= 32
    return mixed_case(value) and not _LOWER_RUN.search(value) and _shannon_bits(value) >= 4.0


def prose_password_ok(value: str) -> bool:
    value = value.rstrip(".,;:!?)")
    return (
        len(value) >= 6
        and any(c.isalpha() for c in value)
        and any(not c.isalpha() for c in value)
        and is_unquoted_secret(value)
    )


def cli_value_ok(value: str) -> bool:
    """Not the next flag, a placeholder, or the bare word (``curl -u user:password``)."""
    return (
        not value.startswith("-")
        and value.lower() not in _KEYWORD_NAMES
        and is_literal_secret(value)
    )
