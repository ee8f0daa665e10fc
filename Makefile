# agent-memory: every target installs what it needs itself (only python3 is assumed).
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
UV_VERSION := 0.13.8
BOOT := .uv-bootstrap
UV := $(BOOT)/bin/uv
VENV := .venv
BIN := $(VENV)/bin
# The CPU build of torch lives in a local wheel folder on our machines; elsewhere PyPI serves it.
FIND_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)
export UV_PYTHON := $(PYTHON)
export UV_PROJECT_ENVIRONMENT := $(VENV)
export HF_HUB_OFFLINE := 1

MEMBERS := $(wildcard libs/*/*/pyproject.toml services/*/pyproject.toml)

.PHONY: help install run test check lint format typecheck test-fast k8s-tools k8s-render proto browser screenshots chaos bench bench-ingest bench-toc bench-search bench-locomo bench-coding bench-real bench-recall bench-summary bench-summary-real bench-lifecycle bench-erasure bench-topics bench-topics-real bench-embed bench-cli bench-move bench-freshness bench-scale node clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

$(UV):
	$(PYTHON) -m venv $(BOOT)
	$(BOOT)/bin/python -m pip install --quiet --disable-pip-version-check 'uv==$(UV_VERSION)'

# torch is not in uv.lock (root pyproject: override-dependencies drops it): resolved by uv from
# PyPI it comes as the CUDA build plus GBs of nvidia-* wheels, and uv does not read pip's
# find-links. So `sync` installs everything else (--inexact: keep the torch installed below)
# and torch is installed pinned, as the CPU wheel from /opt/wheels where that folder exists
# (2.13.0+cpu satisfies ==2.13.0 and sorts above the PyPI build), else from PyPI.
# --no-config: `uv pip` would otherwise apply the override and install nothing.
TORCH := torch==2.13.0

#
# Then every installed module is compiled to bytecode (~40 s here, once per install). uv leaves
# that to the first import, which never writes it where PYTHONDONTWRITEBYTECODE is set (as on
# our CI image): each process then compiles what it imports from source, every time it starts
# (`import torch, sentence_transformers` 16.6 s instead of 7.8 s, the gateway 1.6 s instead of
# 1.1 s). A second, offline sync only compiles: it is the one uv step that takes in the torch
# installed after the first.
$(VENV)/.synced: $(UV) uv.lock pyproject.toml $(MEMBERS)
	$(UV) sync --frozen --all-packages --inexact $(FIND_LINKS)
	$(UV) pip install --no-config --python $(BIN)/python '$(TORCH)' $(FIND_LINKS)
	$(UV) sync --frozen --all-packages --inexact --offline --compile-bytecode $(FIND_LINKS)
	@touch $@

install: $(VENV)/.synced ## create .venv with every package (uv workspace, one lock)

run: install ## start NATS, Postgres and every service; Ctrl-C stops
	$(BIN)/agent-memory up

# The suite runs on $(TEST_WORKERS) pytest-xdist workers, a module per worker at a time (its
# shared stack started once), the slow modules first; then the tests marked `serial` alone
# (default ports, wall-clock budgets). Why and how: tests/scheduling.py.
# --durations=20: the 20 slowest tests printed at the end, so a test that grows is seen at once.
TEST_WORKERS ?= 3
# The suite's ~400 service starts and its pytest processes keep the bytecode of our own modules
# and pytest's rewritten test modules (gitignored __pycache__/) even where the environment says
# PYTHONDONTWRITEBYTECODE: compiled once instead of at every start (collection 24 s -> 11 s of CPU).
TEST_ENV := PYTHONDONTWRITEBYTECODE=
PARALLEL := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: install check k8s-tools browser node ## lint, type-check, then the whole test suite on real servers
	$(TEST_ENV) $(BIN)/pytest $(PARALLEL) -m "not serial" --durations=20
	$(TEST_ENV) $(BIN)/pytest -m serial --durations=5

# The dashboard's browser tests drive Debian's chromium through its chromedriver (Selenium is
# given both paths, so it never downloads a browser). Installed here when missing: as root
# directly, otherwise through sudo.
browser: ## Debian's chromium and chromedriver for the browser tests, installed when missing
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null; then SUDO=sudo; \
	else echo "chromium missing: install Debian's chromium and chromium-driver as root" >&2; exit 1; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
		--no-install-recommends chromium chromium-driver fonts-dejavu-core

# The OpenCode plugin test (libs/agents/agent_memory_hooks) runs the plugin file in node, as
# OpenCode does. Debian's nodejs, installed here when no node is on PATH: as root directly,
# otherwise through sudo.
node: ## Debian's nodejs for the OpenCode plugin test, installed when missing
	@if command -v node >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null; then SUDO=sudo; \
	else echo "node missing: install Debian's nodejs as root" >&2; exit 1; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
		--no-install-recommends nodejs

SCREENSHOTS ?= docs/screenshots
screenshots: install browser ## PNGs of every dashboard page, on a real stack (SCREENSHOTS=folder)
	AGENT_MEMORY_SCREENSHOTS=$(abspath $(SCREENSHOTS)) $(BIN)/pytest tests/browser -q -k screenshots

test-fast: install k8s-tools node ## the test suite without the slow crash/restart tests
	$(TEST_ENV) $(BIN)/pytest $(PARALLEL) -m "not slow and not serial" --durations=20
	$(TEST_ENV) $(BIN)/pytest -m "serial and not slow" --durations=5

check: lint typecheck ## ruff lint and format check, import contracts, mypy

# leak_lint: product code quotes no benchmark text and no metric copies a product word list
# (docs/architecture.md, "The leak lint"; tests/leak_lint.py).
lint: install ## ruff lint and format check; lint-imports and the leak lint: docs/architecture.md
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python -m tests.leak_lint

format: install ## apply ruff fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck: install ## mypy (strict) in a worker per core: ~1 min instead of ~1 min 45 s here, cold
	$(BIN)/mypy --num-workers auto

proto: install ## regenerate the Python stubs of proto/ into libs/agents/agent_memory_proto (commit them)
	$(BIN)/python libs/agents/agent_memory_proto/generate.py

# kubectl renders deploy/k8s (its built-in kustomize) for tests/test_k8s.py. The one already on
# PATH is used when there is one; else Debian's kubernetes-client package is unpacked into
# .tools/ (no root, nothing installed system-wide): it is in every Debian mirror.
KUBECTL_TOOL := .tools/kubectl
k8s-tools: ## kubectl for rendering deploy/k8s (PATH's, or Debian's unpacked into .tools/)
	@if command -v kubectl >/dev/null 2>&1 || [ -x $(KUBECTL_TOOL) ]; then exit 0; fi; \
	  set -e; tmp=$$(mktemp -d); \
	  (cd $$tmp && apt-get download kubernetes-client >/dev/null 2>&1 || \
	    (apt-get update >/dev/null && apt-get download kubernetes-client >/dev/null)); \
	  dpkg-deb -x $$tmp/kubernetes-client_*.deb $$tmp/x; mkdir -p .tools; \
	  cp $$tmp/x/usr/bin/kubectl $(KUBECTL_TOOL); rm -rf $$tmp; \
	  echo "kubectl: $(KUBECTL_TOOL) (Debian kubernetes-client)"

k8s-render: k8s-tools ## print the Kubernetes manifests of deploy/k8s/overlays/example
	@PATH="$$PATH:$(CURDIR)/.tools" kubectl kustomize deploy/k8s/overlays/example

chaos: install ## seeded kill -9 of services, NATS and Postgres mid-ingest; then audit (SEED=1)
	$(BIN)/python -m tests.chaos --seed $(or $(SEED),1)

bench: bench-ingest bench-toc bench-search bench-locomo bench-coding bench-real bench-summary bench-topics bench-embed bench-cli bench-lifecycle bench-erasure ## every benchmark

bench-ingest: install ## gateway events/s accepted, recorder events/s recorded, request latency
	$(BIN)/python -m tests.bench.bench_ingest $(ARGS)

bench-toc: install ## segments summarized/s; p50/p95 of each TOC call and of a year -> segment descent
	$(BIN)/python -m tests.bench.bench_toc $(ARGS)

bench-search: install ## search p50/p95 at 10k and 100k events, query embedding included
	$(BIN)/python -m tests.bench.bench_search $(ARGS)

bench-locomo: install ## LoCoMo recall@1/5/10 (turn, session) through the real pipeline
	$(BIN)/python -m tests.bench.bench_locomo $(ARGS)

bench-coding: install ## coding sessions: found@k by question kind, TOC usefulness, memory-kind F1
	$(BIN)/python -m tests.bench.bench_coding $(ARGS)

bench-real: install ## a public real Claude Code session: found@k by kind, its TOC read whole
	$(BIN)/python -m tests.bench.bench_real $(ARGS)

bench-recall: install ## what the Claude Code hook injects: answer-in-context@300/600/1500, off-topic silence, hook p50/p95
	$(BIN)/python -m tests.bench.bench_recall $(ARGS)

bench-lifecycle: install ## retention cleanup of 100,000 events' indexes: dry run and run, per store
	$(BIN)/python -m tests.bench.bench_lifecycle $(ARGS)

bench-erasure: install ## erasure of one session and of a 100,000-event project: wall time, per store
	$(BIN)/python -m tests.bench.bench_erasure $(ARGS)

bench-summary: install ## ROUGE of our session summaries vs LoCoMo's, beside lead-3 and TextRank
	$(BIN)/python -m tests.bench.bench_summary $(ARGS)

bench-summary-real: install ## ROUGE of our summaries of real sessions vs the runtime's compaction summaries (dev)
	$(BIN)/python -m tests.bench.bench_summary_real $(ARGS)

bench-topics: install ## topic clusterer: ARI/NMI and labels (coding corpus, LoCoMo), re-cluster at 1k-100k
	$(BIN)/python -m tests.bench.bench_topics $(ARGS)

bench-topics-real: install ## topics of the real sessions' dev projects imported months later: sizes, labels, importance
	$(BIN)/python -m tests.bench.bench_topics_real $(ARGS)

bench-embed: install ## the embedding model's texts/s: torch vs ONNX, texts per run, one thread
	$(BIN)/python -m tests.bench.bench_embed $(ARGS)

bench-cli: install ## agent-memory's own time: --help, status, search, projects, sessions
	$(BIN)/python -m tests.bench.bench_cli $(ARGS)

bench-move: install ## a store moved with export --vectors / import: time until searchable, vs without
	$(BIN)/python -m tests.bench.bench_move $(ARGS)

bench-freshness: install ## 20 agents posting 20 events/s for 10 min: 202 -> found by BM25, by vector, in a TOC segment
	$(BIN)/python -m tests.bench.bench_freshness $(ARGS)

# Not in `bench`: a million events through the whole pipeline take many hours on two cores.
bench-scale: install ## 10k/100k/1M events through the stack: drain per consumer, latency vs size (PNG)
	$(BIN)/python -m tests.bench.bench_scale $(ARGS)

clean: ## remove the environments (data in .agent-memory is kept)
	rm -rf $(VENV) $(BOOT) .mypy_cache .ruff_cache .pytest_cache
