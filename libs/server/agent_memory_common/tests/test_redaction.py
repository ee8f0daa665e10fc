"""Redaction before publish: what is caught, what is left alone, and the configuration knobs.

The labelled corpus lives in ``fixtures/secrets_corpus.jsonl``: one case per line with the
exact expected output, so a change in what is kept around a secret shows up as a diff. Every
secret in it is fake (documented examples such as ``AKIAIOSFODNN7EXAMPLE`` or synthetic
strings of the right shape).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_memory_common.redaction.engine import Redactor

CORPUS_PATH = Path(__file__).parent / "fixtures" / "secrets_corpus.jsonl"
PLACEHOLDER = re.compile(r"\[REDACTED:([A-Za-z0-9_.\-]+)\]")

GITHUB_TOKEN = "ghp_" + "AbCdEfGhJkLmNpQrStUvWxYz0123456789"[:34] + "42"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


def _load_corpus() -> list[dict[str, Any]]:
    with CORPUS_PATH.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


CORPUS = _load_corpus()
SECRETS = [c for c in CORPUS if c["category"] == "secret"]
LOOKALIKES = [c for c in CORPUS if c["category"] == "lookalike"]


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor()


# --------------------------------------------------------------------------------------------
# The labelled corpus
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", SECRETS, ids=[c["id"] for c in SECRETS])
def test_secret_is_replaced_by_a_typed_placeholder(
    redactor: Redactor, case: dict[str, Any]
) -> None:
    text, counts = redactor.redact(case["text"])
    assert text == case["expected"]
    assert counts == case["counts"]


@pytest.mark.parametrize("case", LOOKALIKES, ids=[c["id"] for c in LOOKALIKES])
def test_lookalike_is_left_alone(redactor: Redactor, case: dict[str, Any]) -> None:
    assert redactor.redact(case["text"]) == (case["text"], {})


def test_corpus_is_consistent() -> None:
    """The counts in each case agree with the placeholders in its expected text."""
    assert len({c["id"] for c in CORPUS}) == len(CORPUS)
    for case in SECRETS:
        placed: dict[str, int] = {}
        for kind in PLACEHOLDER.findall(case["expected"]):
            placed[kind] = placed.get(kind, 0) + 1
        assert placed == case["counts"], case["id"]
    for case in LOOKALIKES:
        assert "expected" not in case and case["counts"] == {}, case["id"]


def test_every_builtin_kind_has_a_positive_example(redactor: Redactor) -> None:
    covered = {kind for case in SECRETS for kind in case["counts"]}
    assert set(redactor.kinds) <= covered


def test_kinds_required_by_the_gateway_exist(redactor: Redactor) -> None:
    required = {
        "aws_access_key", "aws_secret_key", "github_token", "gitlab_token", "slack_token",
        "slack_webhook", "stripe_key", "openai_key", "anthropic_key", "google_api_key",
        "npm_token", "pypi_token", "huggingface_token", "twilio_key", "sendgrid_key", "jwt",
        "bearer_token", "basic_auth", "private_key", "url_password", "password",
        "generic_secret", "card_number",
    }  # fmt: skip
    assert required <= set(redactor.kinds)


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_redacting_twice_changes_nothing(redactor: Redactor, case: dict[str, Any]) -> None:
    """Placeholders are never mistaken for secrets, so re-processing an event is harmless."""
    once, _ = redactor.redact(case["text"])
    assert redactor.redact(once) == (once, {})


def test_clean_text_and_empty_text_give_no_counts(redactor: Redactor) -> None:
    assert redactor.redact("") == ("", {})
    assert redactor.redact("all tests passed") == ("all tests passed", {})


def test_counts_add_up_across_kinds_and_repeats(redactor: Redactor) -> None:
    text = (
        f"a={GITHUB_TOKEN} b={GITHUB_TOKEN} key AKIAIOSFODNN7EXAMPLE "
        "postgres://u:pw1@h/db password=hunter2"
    )
    out, counts = redactor.redact(text)
    assert counts == {"github_token": 2, "aws_access_key": 1, "url_password": 1, "password": 1}
    assert GITHUB_TOKEN not in out and "AKIAIOSFODNN7EXAMPLE" not in out
    assert "pw1" not in out and "hunter2" not in out


def test_secret_stuck_out_of_a_stronger_span_is_merged_not_leaked(redactor: Redactor) -> None:
    # The JWT rule ends at the signature; the bearer rule sees the trailing ".v2" too.
    out, counts = redactor.redact(f"Authorization: Bearer {JWT}.v2")
    assert out == "Authorization: Bearer [REDACTED:jwt]"
    assert counts == {"jwt": 1}


def test_long_unquoted_value_is_redacted_to_its_end(redactor: Redactor) -> None:
    value = "Zq9" * 700  # longer than the regex bound on unquoted values
    out, counts = redactor.redact(f"SECRET={value} next")
    assert out == "SECRET=[REDACTED:generic_secret] next"
    assert counts == {"generic_secret": 1}


@pytest.mark.parametrize(
    "text",
    [
        "password=" * 20_000,
        'password="' * 20_000,
        "--pass " * 20_000,
        "eyJ" * 50_000,
        "://u:" * 30_000,
        "-----BEGIN RSA PRIVATE KEY-----\n" * 5_000,
        "4111 " * 30_000,
        "Bearer " * 20_000,
        "sk-" * 50_000,
        "a" * 200_000,
        "aws " * 60_000,
        "secret " * 35_000,
        "curl -u " * 30_000,
        "mysql " * 40_000,
        "docker login " * 18_000,
        "a:b@tcp(" * 30_000,
        "Q~" * 120_000,
    ],
    ids=lambda t: repr(t[:12]),
)
def test_dense_triggers_still_finish(redactor: Redactor, text: str) -> None:
    """Adversarial events up to the event size limit must not take quadratic time.

    Not a timing assertion: a quadratic blow-up here would take minutes and trip the suite's
    timeout, while the linear behaviour takes tens of milliseconds.
    """
    out, counts = redactor.redact(text)
    assert isinstance(out, str)
    assert sum(counts.values()) == len(PLACEHOLDER.findall(out))


# --------------------------------------------------------------------------------------------
# Configuration: extra patterns and disabled kinds
# --------------------------------------------------------------------------------------------


def test_extra_pattern_replaces_the_whole_match() -> None:
    r = Redactor({"acme_token": r"acme_[a-z0-9]{16}"})
    assert r.redact("use acme_0123456789abcdef now") == (
        "use [REDACTED:acme_token] now",
        {"acme_token": 1},
    )
    assert "acme_token" in r.kinds


def test_extra_pattern_with_secret_group_replaces_only_the_group() -> None:
    r = Redactor({"door_pin": r"(?i)door pin:\s*(?P<secret>\d{4,8})"})
    assert r.redact("Door PIN: 48151623, floor 2") == (
        "Door PIN: [REDACTED:door_pin], floor 2",
        {"door_pin": 1},
    )


def test_extra_pattern_takes_priority_over_builtins() -> None:
    r = Redactor({"acme_github_bot": r"ghp_[A-Za-z0-9]{36}"})
    assert r.redact(f"token: {GITHUB_TOKEN}") == (
        "token: [REDACTED:acme_github_bot]",
        {"acme_github_bot": 1},
    )


def test_builtins_still_apply_alongside_extra_patterns() -> None:
    r = Redactor({"acme_token": r"acme_[a-z0-9]{16}"})
    out, counts = r.redact("acme_0123456789abcdef AKIAIOSFODNN7EXAMPLE")
    assert out == "[REDACTED:acme_token] [REDACTED:aws_access_key]"
    assert counts == {"acme_token": 1, "aws_access_key": 1}


def test_invalid_extra_regex_raises_value_error_naming_the_kind() -> None:
    with pytest.raises(ValueError, match="broken_kind"):
        Redactor({"broken_kind": "(unclosed"})


def test_extra_regex_matching_empty_string_is_refused() -> None:
    with pytest.raises(ValueError, match="maybe_nothing"):
        Redactor({"maybe_nothing": r"x*"})


def test_kind_name_that_would_break_the_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match="bad kind"):
        Redactor({"bad kind]": r"secret\d+"})


def test_disabled_kind_is_left_alone_and_others_still_work() -> None:
    r = Redactor(disabled=["card_number"])
    assert "card_number" not in r.kinds
    text = "card 4111 1111 1111 1111 key AKIAIOSFODNN7EXAMPLE"
    assert r.redact(text) == (
        "card 4111 1111 1111 1111 key [REDACTED:aws_access_key]",
        {"aws_access_key": 1},
    )


def test_disabling_the_stronger_rule_lets_the_next_one_name_it() -> None:
    r = Redactor(disabled=["github_token"])
    assert r.redact(f"token: {GITHUB_TOKEN}") == (
        "token: [REDACTED:generic_secret]",
        {"generic_secret": 1},
    )


def test_disabling_url_password_keeps_connection_strings() -> None:
    r = Redactor(disabled=["url_password"])
    text = "postgres://user:secret@host:5432/db"
    assert r.redact(text) == (text, {})


def test_extra_kind_can_be_disabled() -> None:
    r = Redactor({"acme_token": r"acme_[a-z0-9]{16}"}, disabled=["acme_token"])
    assert "acme_token" not in r.kinds
    assert r.redact("acme_0123456789abcdef") == ("acme_0123456789abcdef", {})


def test_unknown_disabled_kind_is_an_error() -> None:
    with pytest.raises(ValueError, match="no_such_kind"):
        Redactor(disabled=["no_such_kind"])


def test_everything_disabled_redacts_nothing() -> None:
    r = Redactor(disabled=Redactor().kinds)
    assert r.kinds == []
    assert r.redact("AKIAIOSFODNN7EXAMPLE password=hunter2") == (
        "AKIAIOSFODNN7EXAMPLE password=hunter2",
        {},
    )


def test_kinds_lists_builtins_in_priority_order_then_extras() -> None:
    kinds = Redactor({"zz_custom": r"zz_[0-9]{8}"}).kinds
    assert kinds[0] == "private_key"
    assert kinds[-1] == "zz_custom"
    assert kinds.index("github_token") < kinds.index("generic_secret")
    assert len(kinds) == len(set(kinds))


# --------------------------------------------------------------------------------------------
# Metadata (JSON-like values)
# --------------------------------------------------------------------------------------------


def test_redact_value_recurses_and_keeps_keys_and_non_strings(redactor: Redactor) -> None:
    metadata = {
        "cmd": f"git push https://{GITHUB_TOKEN}@github.com/acme/repo",
        "env": {"PGPASSWORD": "hunter2", "HOME": "/root", "PGPORT": 5432},
        "argv": ["curl", "-H", f"Authorization: Bearer {JWT}"],
        "pair": ("AKIAIOSFODNN7EXAMPLE", 1.5),
        "ok": True,
        "nothing": None,
        "AKIAIOSFODNN7EXAMPLE": "keys are kept as they are",
    }
    cleaned, counts = redactor.redact_value(metadata)
    assert cleaned == {
        "cmd": "git push https://[REDACTED:github_token]@github.com/acme/repo",
        "env": {"PGPASSWORD": "[REDACTED:password]", "HOME": "/root", "PGPORT": 5432},
        "argv": ["curl", "-H", "Authorization: Bearer [REDACTED:jwt]"],
        "pair": ("[REDACTED:aws_access_key]", 1.5),
        "ok": True,
        "nothing": None,
        "AKIAIOSFODNN7EXAMPLE": "keys are kept as they are",
    }
    assert counts == {"github_token": 1, "password": 1, "jwt": 1, "aws_access_key": 1}
    assert metadata["env"] == {"PGPASSWORD": "hunter2", "HOME": "/root", "PGPORT": 5432}


@pytest.mark.parametrize(
    ("metadata", "expected", "counts"),
    [
        ({"password": "hunter2"}, {"password": "[REDACTED:password]"}, {"password": 1}),
        ({"db_pass": "x9"}, {"db_pass": "[REDACTED:password]"}, {"password": 1}),
        ({"apiKey": "abc"}, {"apiKey": "[REDACTED:generic_secret]"}, {"generic_secret": 1}),
        ({"auth": "dXNlcjpwYXNz"}, {"auth": "[REDACTED:generic_secret]"}, {"generic_secret": 1}),
        (
            {"headers": {"Cookie": "sid=1"}},
            {"headers": {"Cookie": "[REDACTED:cookie]"}},
            {"cookie": 1},
        ),
        (
            {"Authorization": "opaque-value"},
            {"Authorization": "[REDACTED:authorization_header]"},
            {"authorization_header": 1},
        ),
    ],
)
def test_sensitive_dict_key_redacts_its_whole_string_value(
    redactor: Redactor, metadata: dict[str, Any], expected: dict[str, Any], counts: dict[str, int]
) -> None:
    assert redactor.redact_value(metadata) == (expected, counts)


@pytest.mark.parametrize(
    "metadata",
    [
        {"password": "${DB_PASSWORD}"},
        {"password": ""},
        {"token": "<your-token>"},
        {"secret": "***"},
        {"password": 1234},
        {"max_tokens": "4096"},
        {"tokens": "many"},
        {"author": "Jane Doe"},
        {"password_hint": "the usual one"},
    ],
)
def test_sensitive_looking_keys_without_a_secret_value_are_kept(
    redactor: Redactor, metadata: dict[str, Any]
) -> None:
    assert redactor.redact_value(metadata) == (metadata, {})


def test_dict_key_redaction_follows_disabled_kinds() -> None:
    r = Redactor(disabled=["password"])
    assert r.redact_value({"password": "hunter2"}) == ({"password": "hunter2"}, {})


def test_clean_metadata_is_returned_as_the_same_object(redactor: Redactor) -> None:
    metadata = {"tool": "bash", "exit": 0, "files": ["a.py", "b.py"], "nested": {"k": ("v",)}}
    cleaned, counts = redactor.redact_value(metadata)
    assert cleaned is metadata
    assert counts == {}


@pytest.mark.parametrize("value", ["AKIAIOSFODNN7EXAMPLE", ["AKIAIOSFODNN7EXAMPLE"]])
def test_redact_value_accepts_bare_strings_and_lists(redactor: Redactor, value: object) -> None:
    cleaned, counts = redactor.redact_value(value)
    assert counts == {"aws_access_key": 1}
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(cleaned)


@pytest.mark.parametrize("value", [None, 3, 2.5, True, b"AKIAIOSFODNN7EXAMPLE"])
def test_non_strings_are_returned_as_they_are(redactor: Redactor, value: object) -> None:
    cleaned, counts = redactor.redact_value(value)
    assert cleaned is value
    assert counts == {}


# --------------------------------------------------------------------------------------------
# Argument vectors and the shared read-side functions
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--password", "cliPass77"], ["--password", "[REDACTED:password]"]),
        (["mysql", "-u", "root", "-pS3cretPw"], ["mysql", "-u", "root", "-p[REDACTED:password]"]),
        (
            ["curl", "-u", "admin:AdminPass99", "https://ci.example.com"],
            ["curl", "-u", "admin:[REDACTED:password]", "https://ci.example.com"],
        ),
        (
            ("sshpass", "-p", "Vq7xLm2z", "ssh", "h"),
            ("sshpass", "-p", "[REDACTED:password]", "ssh", "h"),
        ),
    ],
)
def test_argument_vector_flag_and_value_in_separate_elements(
    redactor: Redactor, argv: list[str] | tuple[str, ...], expected: object
) -> None:
    out, counts = redactor.redact_value({"args": argv})
    assert out == {"args": expected}
    assert counts == {"password": 1}


@pytest.mark.parametrize(
    "argv",
    [
        ["docker", "run", "-p", "8080:80", "nginx"],
        ["pytest", "-p", "no:cacheprovider"],
        ["psql", "-p", "5432", "--password-file", "/run/secrets/pg"],
        ["--password", "--host", "db"],
        ["curl", "-u", "admin", "https://ci.example.com"],
    ],
)
def test_argument_vector_without_a_secret_is_the_same_object(
    redactor: Redactor, argv: list[str]
) -> None:
    out, counts = redactor.redact_value(argv)
    assert out is argv and counts == {}


def test_read_side_functions_use_one_shared_default_redactor() -> None:
    from agent_memory_common.redaction import engine as redaction

    assert redaction.default_redactor() is redaction.default_redactor()
    assert redaction.redact_text("password: Tr0ub4dor&3") == "password: [REDACTED:password]"
    assert redaction.redact_text("all tests passed") == "all tests passed"
    data = {"args": ["--password", "cliPass77"], "note": f"token {GITHUB_TOKEN}", "n": 3}
    assert redaction.redact_json(data) == {
        "args": ["--password", "[REDACTED:password]"],
        "note": "token [REDACTED:github_token]",
        "n": 3,
    }
    clean = {"tool": "bash", "args": ["-la"]}
    assert redaction.redact_json(clean) is clean


def test_subpackage_imports_only_the_standard_library() -> None:
    """Every module of ``agent_memory_common.redaction`` imports the stdlib and its siblings only.

    Any service may redact (the gateway before publishing, the query service on every answer),
    so the subpackage must not drag a dependency into all of them. A new module is covered
    without touching this test: every ``*.py`` of the package directory is read.
    """
    import ast
    import sys

    import agent_memory_common.redaction as package

    allowed = set(sys.stdlib_module_names) | {"__future__"}
    modules = sorted(Path(package.__file__).parent.glob("*.py"))
    assert {m.stem for m in modules} >= {"engine", "rules", "values"}
    for module in modules:
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # ``from . import x``: the subpackage itself
                    continue
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed or name.startswith(f"{package.__name__}."), (
                    f"{module.name} imports {name}"
                )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A flag's value ends at a backtick (Markdown inline code), and "x" is too short.
        ("like `--password x`, or `--password=x`.", "like `--password x`, or `--password=x`."),
        ("`--password=Tr0ub4dor&3`", "`--password=[REDACTED:password]`"),
        # The quote opened before a config-line key closes its value.
        ('"token: abc123def" was printed', '"token: [REDACTED:generic_secret]" was printed'),
        # The bare word is a placeholder in documentation.
        ("curl -u user:password https://x", "curl -u user:password https://x"),
    ],
)
def test_value_ends_where_the_surrounding_syntax_ends(
    redactor: Redactor, text: str, expected: str
) -> None:
    assert redactor.redact(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("db password: Tr0ub4dor&3", "db password: [REDACTED:password]"),
        ("set password=Tr0ub4dor&3 then", "set password=[REDACTED:password] then"),
        # an ``&`` that starts the next parameter of a query string still ends the value
        ("?user=bob&password=hunter2&page=1", "?user=bob&password=[REDACTED:password]&page=1"),
    ],
)
def test_a_value_in_prose_is_not_cut_at_an_ampersand(text: str, expected: str) -> None:
    from agent_memory_common.redaction.engine import redact_text

    assert redact_text(text) == expected
