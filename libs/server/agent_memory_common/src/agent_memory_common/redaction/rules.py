"""The rule table: every built-in detector, its kind (the name in the placeholder) and triggers.

``BUILTIN_RULES`` is ordered by priority: where two rules find overlapping spans, the earlier
one names the placeholder. ``SENSITIVE_KEY`` is the same key vocabulary for JSON metadata, where
the key is a dict key rather than text next to the value. Placeholders are
``[REDACTED:<kind>]``: they say what was there, never what it was.

The rules follow the gitleaks and detect-secrets rule sets; ``docs/redaction.md`` lists them and
why each looks the way it does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agent_memory_common.redaction.assignment import ASSIGN_TAIL, assignment_extract
from agent_memory_common.redaction.extractors import (
    Extractor,
    any_group_extract,
    aws_secret_extract,
    azure_secret_extract,
    cookie_extract,
    go_dsn_extract,
    group_or_whole,
    header_extract,
    login_extract,
    oracle_login_extract,
    pgpass_extract,
    prose_password_extract,
    standalone_token_extract,
    url_token_extract,
)
from agent_memory_common.redaction.values import (
    basic_ok,
    card_ok,
    cli_value_ok,
    is_literal_secret,
    mixed_case,
    openai_ok,
    varied,
)


@dataclass(frozen=True, slots=True)
class Trigger:
    """A literal that must occur exactly where the rule's regex starts to match.

    ``guard`` is an optional zero-width condition on what follows the literal, checked inside
    the prefilter. Common words ("42 passed", "tokens", "basic") then never reach Python.

    ``anchor`` overrides the anchor character (see ``prefilter._anchor_index``). A literal
    made only of common letters (``curl``, ``machine``) is cheaper anchored on a character that
    other triggers already anchor on (``c``, ``p``): the prefilter then stops at no new
    positions.
    """

    literal: str
    ci: bool = False
    guard: str = ""
    anchor: str = ""


@dataclass(frozen=True, slots=True)
class Rule:
    """One detector.

    A rule with triggers is only run where the prefilter saw one of them. A rule without
    triggers is scanned with ``finditer``. That suits user patterns, regexes that start with a
    literal (sre then searches for it at ``memchr`` speed), and rules whose ``precheck`` can
    cheaply rule a text out.
    """

    kind: str
    regex: re.Pattern[str]
    extract: Extractor
    triggers: tuple[Trigger, ...] = ()
    precheck: Callable[[str], bool] | None = None


def _cs(*literals: str, guard: str = "", anchor: str = "") -> tuple[Trigger, ...]:
    return tuple(Trigger(lit, False, guard, anchor) for lit in literals)


def _ci(*literals: str, guard: str = "") -> tuple[Trigger, ...]:
    return tuple(Trigger(lit, True, guard) for lit in literals)


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
    triggers: tuple[Trigger, ...] = (),
    extract: Extractor | None = None,
    flags: int = 0,
    precheck: Callable[[str], bool] | None = None,
) -> Rule:
    return Rule(
        kind,
        re.compile(pattern, flags | re.VERBOSE),
        extract or group_or_whole(varied),
        triggers,
        precheck,
    )


# ``:port:db:user:`` and the first character of the password, after a ``.pgpass`` host.
_PGPASS_AFTER_HOST = r"(?:[0-9]{1,5}|\*):(?:[^\s:\\]|\\.){1,128}:(?:[^\s:\\]|\\.){1,128}:[^\s:]"

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


def _may_contain_google_oauth_token(text: str) -> bool:
    return "ya29." in text or "1//0" in text


def _may_contain_card(text: str) -> bool:
    if len(text) < 13:
        return False
    shape = text.encode("utf-8", "surrogatepass").translate(_DIGIT_SHAPE)
    return _CARD_SHAPE.search(shape) is not None


# A bare ``pass`` is a key on its own (``pass=``, ``db_pass:``) or glued to an upper-case
# prefix in an environment name (``SSHPASS``, ``LDAPPASS``), never inside a lower-case word
# (``bypass``, ``compass``).
_ASSIGNMENT_KEYS_PASSWORD = (
    r"(?:(?i:passw(?:or)?d|passphrase|pwd|(?<![A-Za-z])pass(?![A-Za-z]))"
    r"|(?<=[A-Z])PASS(?![A-Za-z]))"
)
# A bare ``auth`` key is only recognised in metadata dict keys: as a text trigger its letters
# are too common to anchor on cheaply (see the prefilter notes).
_ASSIGNMENT_KEYS_GENERIC = r"""(?i:
    (?:secret|token|api[_\-]?key|access[_\-]?key|account[_\-]?key|private[_\-]?key
      |credentials?)
    (?:[_\-]?key)?
)"""
_BOUNDARY = r"(?<![A-Za-z0-9])"


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


# Order is priority: earlier rules win overlaps. Provider-specific rules come before the
# generic heuristics so that the placeholder names the most specific kind.
BUILTIN_RULES: tuple[Rule, ...] = (
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
        aws_secret_extract,
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
        group_or_whole(),  # the path is the secret, whatever it looks like
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
        group_or_whole(openai_ok),
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
    # Google OAuth access tokens (``ya29.``, what ``gcloud auth print-access-token`` prints)
    # and refresh tokens (``1//0``). Scanned behind two substring tests in C: neither literal
    # is worth a new prefilter anchor.
    _rule(
        "google_oauth_token",
        r"""(?:ya29\.[A-Za-z0-9_\-]{20,2048}(?:\.[A-Za-z0-9_\-]{1,2048}){0,3}
              |1//0[A-Za-z0-9_\-]{30,2048})(?![A-Za-z0-9_\-])""",
        (),
        standalone_token_extract,
        precheck=_may_contain_google_oauth_token,
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
        group_or_whole(mixed_case),
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
        azure_secret_extract,
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
        group_or_whole(is_literal_secret),
        precheck=_may_contain_url_password,
    ),
    _rule(
        "url_token",
        # A key sent as the URL's user name, with no password: a Sentry DSN
        # (``https://<key>@o1.ingest.sentry.io/1``), ``https://<token>@github.com/...``.
        r"://(?P<secret>[A-Za-z0-9_\-.~]{20,256})@(?=[A-Za-z0-9\[])",
        (),
        url_token_extract,
        precheck=_may_contain_url_password,
    ),
    _rule(
        "basic_auth",
        _BOUNDARY + r"(?i:basic)[ \t]+(?P<secret>[A-Za-z0-9+/]{6,1024}={0,2})(?![A-Za-z0-9+/=])",
        _ci("basic", guard=r"[ \t]"),
        group_or_whole(basic_ok),
    ),
    _rule(
        "bearer_token",
        _BOUNDARY
        + r"(?i:bearer)[ \t]+(?P<secret>[A-Za-z0-9\-._~+/]{8,8192}=*)"
        + r"(?![A-Za-z0-9\-._~+/=])",
        _ci("bearer", guard=r"[ \t]"),
        header_extract,
    ),
    _rule(
        "authorization_header",
        _BOUNDARY
        + r"""(?i:authorization)\\?["']?[ \t]*[:=][ \t]*\\?["']?
              (?:[A-Za-z][A-Za-z0-9_\-]*[ \t]+)?
              (?P<secret>[A-Za-z0-9\-._~+/]{8,8192}=*)(?![A-Za-z0-9\-._~+/=])""",
        _ci("authorization", guard=r"""[\\"' \t:=]"""),
        header_extract,
    ),
    _rule(
        "cookie",
        _BOUNDARY + r"""(?i:cookie)\\?["']?[ \t]*:[ \t]*\\?["']?(?P<secret>[^\r\n"'\\]{1,8192})""",
        _ci("cookie", guard=r"""[\\"' \t:]"""),
        cookie_extract,
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
        any_group_extract(cli_value_ok),
    ),
    _rule(
        "password",
        r"""\bsshpass\b"""
        + _rest_of_command("sshpass", 128)
        + r"""(?<=[\s"'])-p[ \t"',]*"""
        + _CLI_VALUE,
        _cs("sshpass", anchor="p"),
        any_group_extract(cli_value_ok),
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
        login_extract,
    ),
    _rule(
        "password",
        # The MongoDB shells and tools: ``mongosh -u admin -p pw`` (``--port`` is the port).
        r"""mongo(?:sh|dump|restore|export|import|stat|top|files)?\b"""
        + _rest_of_command("mongo", 256)
        + r"""(?<=[\s"'])-p[ \t"',]+"""
        + _CLI_VALUE,
        _cs("mongo"),
        any_group_extract(cli_value_ok),
    ),
    _rule(
        "password",
        r"""redis-cli\b"""
        + _rest_of_command("redis-cli", 256)
        + r"""(?<=[\s"'])-a[ \t"',]+"""
        + _CLI_VALUE,
        _cs("redis-cli", anchor="c"),
        any_group_extract(cli_value_ok),
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
        any_group_extract(cli_value_ok),
    ),
    _rule(
        "password",
        # .netrc: ``machine host login user password pw``
        r"""\bmachine[ \t]+\S{1,256}(?:\s+(?:login|account|port)[ \t]+\S{1,256}){0,3}
            \s+password[ \t]+(?P<uq>\S{1,256})""",
        _cs("machine", anchor="c"),
        any_group_extract(cli_value_ok),
    ),
    _rule(
        "password",
        # ``htpasswd -b[c] file user password`` takes the password as the last argument.
        r"""htpasswd[ \t]+(?:-[a-zA-Z]*b[a-zA-Z]*[ \t]+)(?:-[a-zA-Z]+[ \t]+)*
            [^\s-]\S{0,255}[ \t]+[^\s-]\S{0,127}[ \t]+"""
        + _CLI_VALUE,
        _cs("htpasswd", anchor="p"),
        any_group_extract(cli_value_ok),
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
        prose_password_extract,
    ),
    _rule(
        "password",
        # Oracle's ``user/password@db``: ``sqlplus scott/tiger@orcl``, ``CONNECT scott/tiger``,
        # ``jdbc:oracle:thin:scott/tiger@//host:1521/svc``, ``oracledb.connect("scott/...")``.
        # SQL*Plus's CONNECT is matched in upper case or after the ``SQL>`` prompt: a
        # lower-case "conn" trigger would stop the prefilter at every "co" of ordinary text.
        r"""(?P<tool>(?i:sqlplus|sqlldr|expdp|impdp|oracle)
              |SQL>[ \t]*(?i:conn(?:ect)?)|CONN(?:ECT)?)"""
        + _rest_of_command("(?i:sqlplus|sqlldr|expdp|impdp|oracle)", 160)
        + r"""(?<![\w$\#/@.\-])(?P<user>[A-Za-z][\w$\#]{0,127})/
            (?:"(?P<dq>[^"\n]{1,128})"|(?P<uq>[^\s/@"'`,;()]{1,128}))
            (?P<at>@(?=[A-Za-z0-9(\[/]))?""",
        (
            Trigger("sqlplus", True, "", "q"),
            Trigger("sqlldr", True, "", "q"),
            Trigger("expdp", True, "", "x"),
            Trigger("impdp", True, "", "p"),
            Trigger("oracle", True, "", "c"),
            Trigger("SQL>", False, "", "Q"),
            Trigger("CONN", False, r"(?:ECT)?[ \t]", "C"),
        ),
        oracle_login_extract,
    ),
    _rule(
        "password",
        # A libpq password file (``~/.pgpass``) line: ``host:port:db:user:password``.
        # The prefilter stops at ``:port:`` followed by two more fields (a timestamp fails at
        # its space, JSON at the space after its colon); ``pgpass_extract`` checks the line.
        r":(?:[0-9]{1,5}|\*):",
        _cs(":", guard=_PGPASS_AFTER_HOST),
        pgpass_extract,
    ),
    _rule(
        "url_password",
        # Go's MySQL DSN has no scheme: ``user:password@tcp(host:3306)/db``.
        r"@(?:tcp|unix)\(",
        _cs("@tcp(", "@unix("),
        go_dsn_extract,
    ),
    _rule(
        "password",
        _ASSIGNMENT_KEYS_PASSWORD + ASSIGN_TAIL,
        _ci("pass", guard=_PASS_END) + _ci("pwd", guard=_KEY_END),
        assignment_extract,
    ),
    _rule(
        "generic_secret",
        _ASSIGNMENT_KEYS_GENERIC + ASSIGN_TAIL,
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
        assignment_extract,
    ),
    _rule(
        "card_number",
        r"""(?<![\w.+/\-])
            (?:[0-9]{13,19}
              |[0-9]{4}(?P<s1>[ \-])[0-9]{4}(?P=s1)[0-9]{4}(?P=s1)[0-9]{1,4}(?:(?P=s1)[0-9]{1,3})?
              |[0-9]{4}(?P<s2>[ \-])[0-9]{6}(?P=s2)[0-9]{4,5})
            (?![\w\-]|[.,][0-9])""",
        (),
        group_or_whole(card_ok),
        precheck=_may_contain_card,
    ),
)

BUILTIN_KINDS: tuple[str, ...] = tuple(dict.fromkeys(r.kind for r in BUILTIN_RULES))

# Metadata arrives as JSON objects, where the key that makes a value secret is a dict key rather
# than text next to the value. Same key vocabulary as the assignment rules, matched as a whole.
SENSITIVE_KEY = re.compile(
    r"""(?i)^[\w.\-]*?(?:
        (?P<password>passw(?:or)?d|passphrase|pwd|(?<![A-Za-z])pass|(?-i:(?<=[A-Z])PASS))
      | (?P<generic_secret>secret|token|api[_\-]?key|access[_\-]?key|account[_\-]?key
          |private[_\-]?key
          |credentials?|(?<![A-Za-z])auth)(?:[_\-]?key)?
      | (?P<authorization_header>(?<![A-Za-z])(?:proxy[_\-])?authorization)
      | (?P<cookie>(?<![A-Za-z])(?:set[_\-])?cookie)
    )$""",
    re.VERBOSE,
)


KIND_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"
