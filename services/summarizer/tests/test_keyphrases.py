"""Key phrases by YAKE, with code noise filtered, the same in every process."""

from __future__ import annotations

import json
import subprocess
import sys

from agent_memory_summarizer.keyphrases import is_noise_phrase, is_noise_word, key_phrases

PROSE = (
    "The nightly reconciliation job got slow after the ledger grew. The reconciliation job "
    "scans every payment row, so we add a partial index on the payment status. After the "
    "partial index the reconciliation job takes forty milliseconds. See src/payments/recon.py "
    "and payment_id in SettlementBatch.close; def end self None [REDACTED:aws_key] 3f9a2c1e."
)


def test_code_noise_is_never_a_key_phrase() -> None:
    for word in ("src/payments/recon.py", "payment_id", "SettlementBatch.close", "def", "end",
                 "self", "3f9a2c1e", "getUser", "42", "[REDACTED:aws_key]", "stdout"):  # fmt: skip
        assert is_noise_word(word), word
    for word in ("FastAPI", "RabbitMQ", "reconciliation", "Postgres"):
        assert not is_noise_word(word), word
    assert is_noise_phrase("logs and git")  # a function word inside: a fragment, not a phrase


def test_key_phrases_name_the_topic() -> None:
    found = key_phrases(PROSE, 6)
    assert "reconciliation job" in found[0]
    assert "partial index" in found
    for phrase in found:
        assert not is_noise_phrase(phrase)


def test_same_phrases_in_every_process() -> None:
    """yake-rust keeps candidates in hash maps; the order must not depend on them."""
    script = (
        "import json, sys\n"
        "from agent_memory_summarizer.keyphrases import key_phrases\n"
        "print(json.dumps(key_phrases(sys.stdin.read(), 6)))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script], input=PROSE, capture_output=True, text=True, check=True
        ).stdout
        for _ in range(4)
    }
    assert outputs == {json.dumps(key_phrases(PROSE, 6)) + "\n"}
