"""The leak lint: product code may not quote the benchmarks that measure it (issue 52).

Run by ``make lint`` (``python -m tests.leak_lint``); ``tests/test_leak_lint.py`` shows both
checks failing on planted copies. A measurement is only worth something while the product
cannot have been fitted to it: a rule written around the words of one labelled sentence or one
benchmark question scores on that set and on nothing else, and a metric that shares the
product's own word list reports "no noise" by construction. Two checks:

``phrases``
    Every run of ``RUN`` (6) or more consecutive words that occurs both in the product's string
    literals or comments (``*.py`` under ``services/`` and ``libs/``, their ``tests`` folders
    left out) and in a benchmark source: the real transcripts, the question files, the labelled
    sets, the generated coding corpus with its generator's phrase tables, the topic corpus, the
    secrets corpora the redaction benchmark scores, and LoCoMo when it is present beside the
    repository (``shared/bench-data``; a fresh clone has no copy, and the check says it skipped
    it). Words are lower-cased runs of letters and digits (an apostrophe inside a word kept),
    so case, punctuation and line breaks do not hide a copy. Six words: five-word runs are
    common English ("at the end of the", "if you want to use"), six and more in both places
    are a quotation. The product's 6-word shingles are hashed into a set (it is small); the
    benchmark texts (tens of MB) are streamed past it, so the whole check takes seconds.
    The only escape is ``tests/leak_lint_allow.txt``: a short list of phrases each with its
    reason, for words both sides hold legitimately (a runtime's documented protocol strings).

``metrics``
    A benchmark module (``tests/bench/**.py``) may not import a word-list constant of a product
    package, nor hold a word-list literal that shares more than half its words with one of the
    product's. A word list is a list, tuple or set literal of at least ``LIST_MIN`` (10) short
    strings, or a string of at least ``LIST_MIN`` bare words (the ``"a b c ...".split()`` form).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import sys
import time
import tokenize
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUN = 6  # words in a row that make a quotation
LIST_MIN = 10  # strings in a collection that make it a word list
SHORT = 30  # characters of a word-list item at most
ALLOW_FILE = "tests/leak_lint_allow.txt"

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")
_BARE_WORD = re.compile(r"^[\w'!.\-]+$")

Gram = tuple[str, ...]


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` (curly apostrophes read as straight ones)."""
    return _WORD.findall(_normal(text))


def _normal(text: str) -> str:
    return text.lower().replace("\u2019", "'")


def grams(ws: list[str]) -> Iterator[tuple[int, Gram]]:
    for i in range(len(ws) - RUN + 1):
        yield i, tuple(ws[i : i + RUN])


# --------------------------------------------------------------------------------------------
# The product's text: string literals and comments
# --------------------------------------------------------------------------------------------


@dataclass
class Block:
    """A stretch of product text read as one: adjacent string literals (implicit concatenation)
    or a block of comment lines."""

    path: Path
    line: int
    words: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # the line of each word

    def add(self, text: str, first_line: int) -> None:
        normal = _normal(text)
        line, at = first_line, 0
        for m in _WORD.finditer(normal):
            line += normal.count("\n", at, m.start())
            at = m.start()
            self.words.append(m.group())
            self.lines.append(line)


def product_files(root: Path) -> list[Path]:
    out = []
    for top in ("services", "libs"):
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).parts
            if "tests" in rel or ".venv" in rel or "node_modules" in rel:
                continue
            out.append(path)
    return out


def _literal_text(token: str) -> str:
    """A string token's text without prefix and quotes (escapes left as written: a regex's
    ``\\b`` glues to its word, so patterns rarely read as English)."""
    body = token.lstrip("rRbBuUfF")
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote) and body.endswith(quote) and len(body) >= 2 * len(quote):
            return body[len(quote) : -len(quote)]
    return body


def product_blocks(path: Path) -> list[Block]:
    blocks: list[Block] = []
    current: Block | None = None
    kind = ""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text()).readline))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return blocks
    for tok in tokens:
        if tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            continue  # a comment block and a concatenation both run across lines
        if tok.type == tokenize.STRING or tok.type == tokenize.COMMENT:
            this = "string" if tok.type == tokenize.STRING else "comment"
            text = _literal_text(tok.string) if this == "string" else tok.string.lstrip("#")
            if current is None or kind != this:
                current = Block(path, tok.start[0])
                blocks.append(current)
                kind = this
            # a string's text starts after its prefix and quotes, on the token's first line
            current.add(text, tok.start[0])
            continue
        current, kind = None, ""
    return blocks


# --------------------------------------------------------------------------------------------
# The benchmarks' text
# --------------------------------------------------------------------------------------------


def locomo_path(root: Path) -> Path:
    """``shared/bench-data/locomo/locomo10.json`` beside the repository or beside the folder
    holding it (a worktree), as ``tests.bench.stack.shared_data`` finds it."""
    relative = Path("shared", "bench-data", "locomo", "locomo10.json")
    candidates = [parent / relative for parent in root.parents[:2]]
    return next((c for c in candidates if c.exists()), candidates[0])


def _json_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _json_strings(v)


def _python_strings(path: Path) -> Iterator[str]:
    """A bench module's string literals: its question texts and phrase tables (docstrings
    left out: they describe the generator, they are not what it generates)."""
    try:
        tree = ast.parse(path.read_text())
    except SyntaxError:
        return
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.value


def _file_texts(path: Path) -> Iterator[str]:
    """The texts of a benchmark source: a JSON document's string values, a module's string
    literals, else the file as text (a line or file that is not JSON is read as text too)."""
    if path.suffix == ".py":
        yield from _python_strings(path)
        return
    text = path.read_text(errors="replace")
    if path.suffix == ".jsonl":
        for line in text.splitlines():
            try:
                yield from _json_strings(json.loads(line))
            except ValueError:
                yield line
    elif path.suffix == ".json":
        try:
            yield from _json_strings(json.loads(text))
        except ValueError:
            yield text
    else:
        yield text


def _walk(folder: Path, suffix: str) -> Iterator[Path]:
    """Files of ``folder`` ending in ``suffix``, linked folders followed (a test links the
    benchmark data into a stand-in tree)."""
    for parent, _dirs, files in os.walk(folder, followlinks=True):
        for name in files:
            if name.endswith(suffix):
                yield Path(parent) / name


def bench_files(root: Path) -> tuple[list[Path], list[str]]:
    """Every benchmark source under ``root``, and notes on what was skipped."""
    bench = root / "tests" / "bench"
    found: set[Path] = set()
    found.update(_walk(root / "tests", ".jsonl"))  # transcripts and labelled sets
    found.update(_walk(bench / "real" / "transcripts", ""))  # any runtime's format (.json, .md)
    found.update((bench / "real").glob("questions*.py"))
    found.update((bench / "coding").glob("*.py"))  # the generator, its scenarios, questions
    found.update((bench / "coding").glob("*.json"))  # the generated corpus and questions
    found.add(bench / "topics_corpus.py")
    fixtures = root / "libs" / "server" / "agent_memory_common" / "tests" / "fixtures"
    found.update(fixtures.glob("*.jsonl"))  # the secrets corpora bench_redaction scores
    found = {p for p in found if p.is_file() and p.name != "__init__.py"}
    notes = []
    locomo = locomo_path(root)
    if locomo.exists():
        found.add(locomo)
    else:
        notes.append(f"LoCoMo not checked: {locomo} is absent (a fresh clone has no copy)")
    return sorted(found), notes


# --------------------------------------------------------------------------------------------
# The phrase check
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Leak:
    path: Path
    line: int
    phrase: str
    source: Path


def allowed_grams(root: Path) -> set[Gram]:
    """The 6-word shingles of every phrase in the allowlist (a ``#`` starts its reason)."""
    path = root / ALLOW_FILE
    out: set[Gram] = set()
    if path.exists():
        for line in path.read_text().splitlines():
            phrase = line.split("#", 1)[0]
            out.update(g for _, g in grams(words(phrase)))
    return out


def find_leaks(
    blocks: list[Block],
    sources: Iterable[Path],
    allowed: AbstractSet[Gram] = frozenset(),
) -> list[Leak]:
    """Every maximal run of ``RUN``+ words of a product block that a benchmark source holds."""
    product: set[Gram] = set()
    for block in blocks:
        product.update(g for _, g in grams(block.words) if g not in allowed)
    seen: dict[Gram, Path] = {}
    for source in sources:
        for text in _file_texts(source):
            ws = words(text)
            if len(ws) < RUN:
                continue
            # the shingles of the text, built and looked up in C (set.intersection of a zip)
            for g in product.intersection(zip(*(ws[i:] for i in range(RUN)), strict=False)):
                seen.setdefault(g, source)
    leaks = []
    for block in blocks:
        hits = [(i, seen[g]) for i, g in grams(block.words) if g in seen]
        j = 0
        while j < len(hits):  # overlapping shingles join into one run
            start, source = hits[j]
            end = start + RUN
            while j + 1 < len(hits) and hits[j + 1][0] < end + 1:
                j += 1
                end = hits[j][0] + RUN
            phrase = " ".join(block.words[start:end])
            leaks.append(Leak(block.path, block.lines[start], phrase, source))
            j += 1
    return leaks


# --------------------------------------------------------------------------------------------
# The metric check
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WordList:
    path: Path
    line: int
    name: str  # the constant it is bound to, "" when none
    words: frozenset[str]


def _word_list(node: ast.AST) -> frozenset[str] | None:
    """The words of ``node`` when it is a word-list literal (module docstring), else None."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        # frozenset({...}), set([...]), _words("""..."""): the literal inside
        return _word_list(node.args[0])
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "split"
        and not node.args
    ):  # """a b c""".split()
        return _word_list(node.func.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        items = node.value.split()
        if len(items) >= LIST_MIN and all(len(w) <= SHORT and _BARE_WORD.match(w) for w in items):
            return frozenset(w.lower() for w in items)
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items_s = [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
        if (
            len(items_s) >= LIST_MIN
            and len(items_s) == len(node.elts)
            and all(len(s) <= SHORT and len(s.split()) <= 3 for s in items_s)
        ):
            return frozenset(s.lower() for s in items_s)
    return None


def word_lists(path: Path) -> list[WordList]:
    """The word lists of a module; a name bound to a string that a word list is built from
    (``_X_TEXT = \"\"\"...\"\"\"``) counts as that list."""
    try:
        tree = ast.parse(path.read_text())
    except SyntaxError:
        return []
    out: list[WordList] = []
    assigned: set[int] = set()  # literals already counted as an assignment's value
    for node in ast.walk(tree):
        target = ""
        value: ast.AST | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            value = node.value
            if isinstance(node.targets[0], ast.Name):
                target = node.targets[0].id
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            value = node.value
            if isinstance(node.target, ast.Name):
                target = node.target.id
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)) and id(node) not in assigned:
            value = node  # an unnamed literal (an argument, a default)
        if value is None:
            continue
        assigned.add(id(value))
        found = _word_list(value)
        if found is not None:
            out.append(WordList(path, getattr(node, "lineno", 0), target, found))
    # a constant built from a named text: X = frozenset(_X_TEXT.split())
    texts = {w.name: w for w in out if w.name}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            bound = node.targets[0]
            names = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            if isinstance(bound, ast.Name) and bound.id not in texts:
                for name in names & set(texts):
                    out.append(WordList(path, node.lineno, bound.id, texts[name].words))
    return out


@dataclass(frozen=True)
class Copy:
    path: Path
    line: int
    what: str


def find_copies(product: list[Path], bench: list[Path]) -> list[Copy]:
    """Benchmark modules that import a product word list or hold a near copy of one."""
    lists = [w for path in product for w in word_lists(path)]
    names = {w.name for w in lists if w.name}
    out = []
    for path in bench:
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agent_memory"):
                for alias in node.names:
                    if alias.name in names:
                        out.append(
                            Copy(path, node.lineno, f"imports the product word list {alias.name}")
                        )
            if isinstance(node, ast.Attribute) and node.attr in names:
                base = node.value
                if isinstance(base, ast.Name) and base.id.startswith(("agent_memory", "_am")):
                    out.append(Copy(path, node.lineno, f"reads the product word list {node.attr}"))
        reported: set[tuple[int, frozenset[str]]] = set()
        for mine in word_lists(path):
            for theirs in lists:
                shared = mine.words & theirs.words
                if len(shared) * 2 > len(mine.words) and (mine.line, theirs.words) not in reported:
                    reported.add((mine.line, theirs.words))  # X_TEXT and X = f(X_TEXT): once
                    label = mine.name or "a word list"
                    out.append(
                        Copy(
                            path,
                            mine.line,
                            f"{label} shares {len(shared)} of its {len(mine.words)} words with "
                            f"{theirs.name or 'a word list'} of {theirs.path.name}:{theirs.line}",
                        )
                    )
    return out


def bench_modules(root: Path) -> list[Path]:
    return sorted((root / "tests" / "bench").rglob("*.py"))


# --------------------------------------------------------------------------------------------


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO, help="the tree to check")
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only")
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    started = time.monotonic()
    product = product_files(root)
    blocks = [b for path in product for b in product_blocks(path)]
    sources, notes = bench_files(root)
    leaks = find_leaks(blocks, sources, allowed_grams(root))
    copies = find_copies(product, bench_modules(root))
    for leak in leaks:
        print(
            f"{_rel(leak.path, root)}:{leak.line}: quotes {_rel(leak.source, root)}: "
            f'"{leak.phrase}"'
        )
    for copy in copies:
        print(f"{_rel(copy.path, root)}:{copy.line}: {copy.what}")
    if not args.quiet:
        for note in notes:
            print(f"leak-lint: {note}", file=sys.stderr)
        print(
            f"leak-lint: {len(leaks)} quoted phrase(s), {len(copies)} copied word list(s); "
            f"{len(product)} product files against {len(sources)} benchmark sources in "
            f"{time.monotonic() - started:.1f}s",
            file=sys.stderr,
        )
    return 1 if leaks or copies else 0


if __name__ == "__main__":
    sys.exit(main())
