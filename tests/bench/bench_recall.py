"""Recall benchmark: was the answer put in front of the agent, unasked (issue 54)?

Run by ``make bench-recall``. ``bench-coding`` and ``bench-real`` measure what a search returns
to an agent that asks; this measures what reaches an agent that does not: each question is sent
as the user's prompt through the Claude Code hook exactly as the runtime runs it, and the text
the hook hands back as ``additionalContext`` is read for the answer.

1. The corpus: the generated coding sessions (``tests/bench/coding/``) and the real-session
   corpus's parts of the chosen split (``tests/bench/real/corpus.py``; ``--split dev`` by
   default, ``test`` only once, when an issue is judged), every event posted, drained, indexed
   (``tests/bench/stack.py``, as ``bench-coding``).
2. The hook: ``agent-memory install claude-code --project NAME --dir <folder>`` per project into
   a temporary folder; the ``UserPromptSubmit`` command it wrote to ``.claude/settings.json`` is
   run by ``sh -c`` in that folder, as Claude Code runs it, with the documented payload on stdin
   (``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``prompt``), one new
   session per prompt. Its gateway is a closed port, so the prompts it would record are spooled
   instead of stored: a benchmark's questions must not become memories the next one recalls.
3. Per question and budget (300, 600, 1,500 tokens, ``AGENT_MEMORY_RECALL_PROMPT_TOKENS``):
   **answer-in-context** when the injected text holds a gold event's text (its first
   ``NEEDLE_CHARS`` characters, whitespace folded, or the whole when shorter): the agent read the
   answer without asking. Cross-project questions are left out (a hook runs in one project).
4. Off-topic prompts (chat such as "thanks" and "run the tests", and the corpus's questions
   that its sessions cannot answer): the share that got nothing.
5. Tokens injected (p50/p95, characters / 4, the product's own estimate) and the hook's wall
   time (p50/p95, process start to exit, as the runtime waits for it).
6. The brief (``GET /v1/projects/{id}/brief``, 1,500 tokens) of each coding project: of the
   decisions and constraints in force (the decision, constraint and superseded questions' gold
   events), the share it holds (cited by id, or its text quoted); of the replaced ones (the
   superseded questions' stale events), how many it holds (target 0).

A measurement, not a test: the exit code is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests import plain_http
from tests.bench.bench_coding import UNANSWERABLE as CODING_UNANSWERABLE
from tests.bench.bench_coding import event_time
from tests.bench.bench_real import load_corpus as load_real
from tests.bench.bench_real import splits_of
from tests.bench.coding.generate import load_corpus as load_coding
from tests.bench.real.corpus import SPLITS, parts
from tests.bench.report import percentile, stop_on_sigterm, table
from tests.bench.stack import (
    Product,
    add_question_options,
    question_stack,
    start_filled,
    stop_and_clean,
)

BUDGETS = (300, 600, 1500)
NEEDLE_CHARS = 120
# What people type that no memory should answer: chat and commands about the work at hand.
CHAT = (
    "thanks",
    "thank you!",
    "run the tests",
    "ok",
    "yes",
    "continue",
    "go ahead",
    "looks good, commit it",
    "please fix the lint errors",
    "try again",
    "can you explain that?",
    "hi",
)
CLOSED_PORT_URL = "http://127.0.0.1:9"  # discard: nothing listens, a connect is refused at once


@dataclass
class Prompt:
    """One prompt sent through the hook: its kind, project and the gold event texts (none for
    an off-topic prompt)."""

    kind: str
    project: str
    text: str
    gold: list[str]
    corpus: str  # coding, dev or test


@dataclass
class Outcome:
    found: dict[tuple[str, str, int], list[bool]] = field(default_factory=lambda: defaultdict(list))
    tokens: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    off_topic_empty: dict[tuple[str, int], list[bool]] = field(
        default_factory=lambda: defaultdict(list)
    )
    latency_ms: list[float] = field(default_factory=list)
    bad_output: list[str] = field(default_factory=list)
    sample: str = ""


def fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def holds(context: str, gold_text: str) -> bool:
    """The injected context quotes the gold event: its opening (``NEEDLE_CHARS``), whitespace
    folded, appears in it."""
    needle = fold(gold_text)[:NEEDLE_CHARS].rstrip(" .")
    return bool(needle) and needle in fold(context)


def install_hooks(root: Path, projects: Sequence[str]) -> dict[str, tuple[Path, str]]:
    """Per project: a folder where ``agent-memory install claude-code --project NAME`` ran, and
    the ``UserPromptSubmit`` command it wrote there."""
    out: dict[str, tuple[Path, str]] = {}
    exe = Path(sys.executable).with_name("agent-memory")
    for project in projects:
        folder = root / "projects" / project
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [str(exe), "install", "claude-code", "--project", project, "--dir", str(folder)],
            check=True,
            capture_output=True,
            env={**os.environ, "HOME": str(root)},
        )
        settings = json.loads((folder / ".claude" / "settings.json").read_text())
        command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        out[project] = (folder, str(command))
    return out


def hook_env(product: Product, home: Path, budget: int) -> dict[str, str]:
    """The environment the agent gives its hooks: the stack's query service, a closed gateway
    (the prompts are spooled, not stored) and the budget measured."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_MEMORY_")}
    env.update(
        {
            "AGENT_MEMORY_HOME": str(home),
            "AGENT_MEMORY_GATEWAY_URL": CLOSED_PORT_URL,
            "AGENT_MEMORY_QUERY_URL": product.query_url,
            "AGENT_MEMORY_RECALL_PROMPT_TOKENS": str(budget),
        }
    )
    return env


def run_hook(folder: Path, command: str, env: dict[str, str], session: str, prompt: str) -> Any:
    """The hook as Claude Code runs it: its command through a shell, the payload on stdin; the
    wall time, the exit code and stdout."""
    payload = {
        "session_id": session,
        "transcript_path": str(folder / "no-transcript.jsonl"),
        "cwd": str(folder),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    t0 = time.perf_counter()
    done = subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=30,
    )
    return (time.perf_counter() - t0) * 1000, done.returncode, done.stdout


def injected(stdout: str, bad: list[str]) -> str:
    """The ``additionalContext`` of the hook's output ("" for none); anything that is not the
    documented shape is recorded as bad."""
    if not stdout.strip():
        return ""
    try:
        data = json.loads(stdout)
        out = data["hookSpecificOutput"]
        if set(data) != {"hookSpecificOutput"} or out["hookEventName"] != "UserPromptSubmit":
            raise ValueError("unexpected keys")
        return str(out["additionalContext"])
    except (ValueError, KeyError, TypeError) as exc:
        bad.append(f"{exc}: {stdout[:200]!r}")
        return ""


def tokens_of(text: str) -> int:
    return (len(text) + 3) // 4


def measure(
    product: Product, workdir: Path, prompts: Sequence[Prompt], budgets: Sequence[int]
) -> Outcome:
    out = Outcome()
    hooks = install_hooks(workdir / "hooks", sorted({p.project for p in prompts}))
    # a home and sessions of this run's own: a --reuse run must not find the ids an earlier
    # run was given (the hook never gives a session the same memory twice)
    run = time.strftime("%Y%m%dT%H%M%S")
    n = 0
    for budget in budgets:
        env = hook_env(product, workdir / "hooks" / f"home-{run}", budget)
        for p in prompts:
            n += 1
            folder, command = hooks[p.project]
            ms, code, stdout = run_hook(folder, command, env, f"bench-recall-{run}-{n}", p.text)
            out.latency_ms.append(ms)
            if code != 0:
                out.bad_output.append(f"exit {code}")
            context = injected(stdout, out.bad_output)
            out.tokens[budget].append(tokens_of(context))
            if not p.gold:
                out.off_topic_empty[(p.corpus, budget)].append(not context)
                continue
            hit = any(holds(context, g) for g in p.gold)
            out.found[(p.corpus, p.kind, budget)].append(hit)
            out.found[(p.corpus, "all", budget)].append(hit)
            if budget == 600 and hit and not out.sample:
                out.sample = f"prompt: {p.text}\n{stdout.strip()}"
    return out


def coding_prompts() -> tuple[list[dict[str, Any]], list[Prompt]]:
    sessions, questions = load_coding()
    events = sorted((e for s in sessions for e in s["events"]), key=event_time)
    text = {e["event_id"]: str(e["text"]) for e in events}
    prompts = [
        Prompt(
            q["kind"], q["project_id"], q["question"], [text[i] for i in q["event_ids"]], "coding"
        )
        for q in questions
        if q["project_id"]  # cross-project questions: a hook runs in one project
    ]
    projects = sorted({p.project for p in prompts})
    prompts += [
        Prompt("off-topic", projects[i % len(projects)], q, [], "coding")
        for i, q in enumerate((*CHAT, *CODING_UNANSWERABLE))
    ]
    return events, prompts


def real_prompts(split: str) -> tuple[list[dict[str, Any]], list[Prompt]]:
    chosen = [p for p in parts() if p.split == split]
    events = load_real(chosen)
    text = {e["event_id"]: str(e["text"]) for e in events}
    prompts: list[Prompt] = []
    for s in splits_of(chosen, events):
        prompts += [
            Prompt(
                q["kind"], q["project_id"], q["question"], [text[i] for i in q["event_ids"]], split
            )
            for q in s.questions
        ]
        projects = sorted({q["project_id"] for q in s.questions})
        for a, b in s.unanswerable:  # (project, question); some modules write it the other way
            project, question = (a, b) if a in projects else (b, a)
            prompts.append(Prompt("off-topic", project, question, [], split))
        prompts += [
            Prompt("off-topic", projects[i % len(projects)], q, [], split)
            for i, q in enumerate(CHAT)
        ]
    return events, prompts


def measure_brief(url: str, budget: int = 1500) -> tuple[int, int, int, int, str]:
    """(live held, live, replaced held, replaced, one brief) over the coding projects."""
    sessions, questions = load_coding()
    text = {e["event_id"]: str(e["text"]) for s in sessions for e in s["events"]}
    briefs: dict[str, dict[str, Any]] = {}
    for project in sorted({q["project_id"] for q in questions if q["project_id"]}):
        r = plain_http.get(f"{url}/v1/projects/{project}/brief", params={"budget_tokens": budget})
        r.raise_for_status()
        briefs[project] = r.json()

    def held(project: str, ids: Sequence[str]) -> bool:
        brief = briefs[project]
        return any(i in brief["ids"] or holds(brief["context"], text[i]) for i in ids)

    live = [q for q in questions if q["kind"] in ("decision", "constraint", "superseded")]
    stale = [q for q in questions if q["stale_event_ids"]]
    return (
        sum(held(q["project_id"], q["event_ids"]) for q in live if q["project_id"]),
        sum(1 for q in live if q["project_id"]),
        sum(held(q["project_id"], q["stale_event_ids"]) for q in stale if q["project_id"]),
        sum(1 for q in stale if q["project_id"]),
        next(iter(briefs.values()))["context"] if briefs else "",
    )


def found_rows(out: Outcome, budgets: Sequence[int]) -> str:
    rows = [["corpus", "kind", "n", *(f"@{b}" for b in budgets)]]
    keys = sorted({(c, k) for c, k, _ in out.found}, key=lambda ck: (ck[0], ck[1] != "all", ck[1]))
    for corpus, kind in keys:
        hits = [out.found[(corpus, kind, b)] for b in budgets]
        rows.append(
            [corpus, kind, str(len(hits[0])), *(f"{statistics.fmean(h):.3f}" for h in hits)]
        )
    return table(rows, [False, False, True, *([True] * len(budgets))])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    add_question_options(parser, limit=10)
    parser.add_argument(
        "--split",
        choices=SPLITS,
        default="dev",
        help="the real corpus's side to ask (default dev; test is scored once, when judged)",
    )
    parser.add_argument(
        "--budgets", default=",".join(map(str, BUDGETS)), help="token budgets, comma separated"
    )
    parser.add_argument("--no-coding", action="store_true", help="only the real corpus")
    parser.add_argument(
        "--brief-only", action="store_true", help="only the coding projects' briefs (with --reuse)"
    )
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    stop_on_sigterm()
    events, prompts = ([], []) if args.no_coding else coding_prompts()
    real_events, more = real_prompts(args.split)
    events = sorted({e["event_id"]: e for e in [*events, *real_events]}.values(), key=event_time)
    prompts += more
    answerable = sum(bool(p.gold) for p in prompts)
    print(
        f"recall bench: {len(events)} events, {answerable} answerable prompts,"
        f" {len(prompts) - answerable} off-topic; split {args.split}; budgets {budgets}"
    )
    product, workdir, reuse = question_stack(args, "agent-memory-bench-recall-")
    failed = True
    out = Outcome()
    brief: tuple[int, int, int, int, str] | None = None
    try:
        start_filled(product, events, reuse)
        product.wait_until_quiet()
        if not args.no_coding:
            brief = measure_brief(product.query_url)
        if not args.brief_only:
            out = measure(product, workdir, prompts, budgets)
        failed = False
    except KeyboardInterrupt:
        print("interrupted")
    finally:
        stop_and_clean(product, workdir, args.keep or failed or reuse)
    if failed:
        return 1
    if brief is not None:
        live_held, live, stale_held, stale, sample = brief
        print(
            f"\n=== brief @1500 (coding projects) ===\n  decisions and constraints in force held:"
            f" {live_held} of {live} ({live_held / max(live, 1):.1%}); replaced ones held:"
            f" {stale_held} of {stale}\n\n{sample}"
        )
    if args.brief_only:
        return 0
    print("\n=== answer-in-context@budget (a gold event's text in additionalContext) ===")
    print(found_rows(out, budgets))
    print("\n=== off-topic prompts that got nothing ===")
    for (corpus, budget), empty in sorted(out.off_topic_empty.items()):
        print(
            f"  {corpus:<7} @{budget:<5} {sum(empty)} of {len(empty)}"
            f" ({statistics.fmean(empty):.1%})"
        )
    print("\n=== tokens injected (every prompt, empty ones included) ===")
    for budget in budgets:
        t = out.tokens[budget]
        given = [x for x in t if x]
        print(
            f"  @{budget:<5} p50 {percentile(t, 50)}  p95 {percentile(t, 95)};"
            f" when any: p50 {percentile(given, 50) if given else 0}"
        )
    lat = out.latency_ms
    print(
        f"\nhook wall time (sh -c, process start to exit): p50 {percentile(lat, 50):.0f} ms,"
        f" p95 {percentile(lat, 95):.0f} ms, max {max(lat):.0f} ms over {len(lat)} runs"
    )
    print(f"output not of the documented shape or exit != 0: {len(out.bad_output)}")
    for line in out.bad_output[:5]:
        print(f"  {line}")
    if out.sample:
        print(f"\n=== an injection, verbatim (@600) ===\n{out.sample}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
