"""The leak lint bites (``tests/leak_lint.py``, run by ``make lint``).

Each case builds a small tree in a temporary folder: a product module under ``services/``, and
the repository's real benchmark sources reached through a link (``tests/bench``), so the lint
judges the stand-in product against the data it guards. A benchmark sentence planted in a
comment or a string fails it, and the same module without the plant passes, which shows that
the failure comes from the plant alone. The metric check is shown the same way: a bench module
that copies a product word list, or imports one, fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CLEAN_MODULE = '''"""Ranks sentences by how much they say."""

# Short sentences carry little; long ones are cut at a clause.
LIMIT = 90


def weight(sentence: str) -> float:
    """More words weigh more, up to the limit."""
    return min(len(sentence), LIMIT) / LIMIT
'''

WORD_LIST = "alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima"


def _labelled_sentence() -> str:
    """A sentence of the real labelled set, long enough to hold a 6-word run."""
    path = ROOT / "tests" / "bench" / "real" / "kinds_real.jsonl"
    for line in path.read_text().splitlines():
        text = str(json.loads(line)["text"])
        if 10 <= len(text.split()) <= 30 and text.isascii():
            return text
    raise AssertionError("no labelled sentence of 10 to 30 words")


def _tree(tmp_path: Path, module: str, bench_modules: dict[str, str] | None = None) -> Path:
    package = tmp_path / "services" / "ranker" / "src" / "agent_memory_ranker"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "rank.py").write_text(module)
    tests = tmp_path / "tests"
    tests.mkdir()
    if bench_modules is None:
        (tests / "bench").symlink_to(ROOT / "tests" / "bench", target_is_directory=True)
    else:  # a bench of its own: the metric check reads only the modules given
        (tests / "bench").mkdir()
        for name, source in bench_modules.items():
            (tests / "bench" / name).write_text(source)
    return tmp_path


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.leak_lint", "--root", str(tree)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_clean_module_passes(tmp_path: Path) -> None:
    result = _lint(_tree(tmp_path, CLEAN_MODULE))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 quoted phrase(s), 0 copied word list(s)" in result.stderr


def test_a_benchmark_sentence_planted_in_a_comment_fails(tmp_path: Path) -> None:
    sentence = _labelled_sentence()
    planted = CLEAN_MODULE.replace(
        "# Short sentences", f"# e.g. {sentence!r} (a real user's words)\n# Short sentences"
    )
    result = _lint(_tree(tmp_path, planted))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "services/ranker/src/agent_memory_ranker/rank.py:3: quotes tests/bench/real/" in (
        result.stdout
    )


def test_a_benchmark_sentence_in_a_rule_fails_whatever_its_case_and_punctuation(
    tmp_path: Path,
) -> None:
    words = _labelled_sentence().split()[:8]
    shouted = ",  ".join(w.upper() for w in words)  # another case, other punctuation
    planted = CLEAN_MODULE + f'\n\nRULE = "{shouted}"\n'
    result = _lint(_tree(tmp_path, planted))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "rank.py:12: quotes" in result.stdout


def test_the_allowlist_is_the_only_escape(tmp_path: Path) -> None:
    sentence = _labelled_sentence()
    tree = _tree(tmp_path, CLEAN_MODULE + f"\n# {sentence}\n")
    assert _lint(tree).returncode == 1
    (tree / "tests" / "leak_lint_allow.txt").write_text(f"{sentence}  # a reason\n")
    result = _lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_metric_that_copies_a_product_word_list_fails(tmp_path: Path) -> None:
    product = (
        CLEAN_MODULE
        + f'\n\n_NOISE_TEXT = """{WORD_LIST}"""\nNOISE = frozenset(_NOISE_TEXT.split())\n'
    )
    copied = [*WORD_LIST.split()[:-2], "mike", "november"]  # 10 of its 12 words
    metric = f"NOISY = {{{', '.join(repr(w) for w in copied)}}}\n"
    result = _lint(_tree(tmp_path, product, {"metrics.py": metric}))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "tests/bench/metrics.py:1: NOISY shares 10 of its 12 words with" in result.stdout

    unrelated = "NOISY = {" + ", ".join(repr(f"w{i}") for i in range(12)) + "}\n"
    result = _lint(_tree(tmp_path / "clean", product, {"metrics.py": unrelated}))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_metric_that_imports_a_product_word_list_fails(tmp_path: Path) -> None:
    product = CLEAN_MODULE + f'\n\nNOISE = frozenset("""{WORD_LIST}""".split())\n'
    metric = "from agent_memory_ranker.rank import NOISE\n\nnoisy = NOISE\n"
    result = _lint(_tree(tmp_path, product, {"metrics.py": metric}))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "imports the product word list NOISE" in result.stdout
