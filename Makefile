# The whole set-up is `make demo` and `make test` (`make check` while editing); each bootstraps .venv
# through `make install`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install install-browser test check manifests demo bench fuzz clean

# Python packages, then graphviz's dot for the pictures (apt-get as root when missing; otherwise
# one line says what to install), then the compiled explorer (mypyc, when a C compiler is there;
# rebuilt only when its sources changed; otherwise one line says the explorer runs uncompiled:
# docs/compiled.md). Every step is idempotent.
install: $(STAMP)
	@scripts/provide-tools.sh $(BIN) dot
	@$(BIN)/python scripts/build_compiled.py --if-stale

# The report test opens report.html in headless Chromium; only `make test` needs it, so `make
# demo` does not pay for it.
install-browser: $(STAMP)
	@scripts/provide-tools.sh $(BIN) chromium

# Re-install only when the project metadata changes; the install is editable, so code edits
# need nothing.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,flink,compiled]'
	touch $(STAMP)

# Two lanes side by side (scripts/run-tests.sh says how and why). One: the pure-Python tests on
# both cores; then the tests that patch a compiled module, once more in the pure build (the
# `pure_python` marker: tests/cover/compiled_build.py); then flipcheck as a user gets it: a wheel
# (`python -m build`) installed into a clean venv outside the repository, with the example user
# project (examples/user-project) whose bug must fail with the full report and whose refactoring
# must pass (scripts/check_user_project.py; about a minute).
# Two: the tests that start Spark, a browser or real Flink, one at a time (they mostly wait on
# JVMs: 0.6 of a core), after what only they need is fetched (chromium; Flink 1.20.0 for the one
# live older-release test: about 250 MB).
test: install
	scripts/run-tests.sh $(BIN)

# The inner loop: everything but tests/slow/ (the `slow` marker), Spark and the browser, on both
# cores, in about 3 minutes; `make test` is the full run CI does.
check: install
	$(BIN)/python -m pytest -n 2 -m "not slow and not spark and not browser and not flink"

# Re-measure every pinned manifest entry (tests/manifests/, docs/manifests.md), `seconds`
# included, by running the tests that read them in recording mode; review with `git diff`.
MANIFEST_TESTS = $(shell grep -rlE '^(import manifest|from recovery_mutant_checks import)' tests --include='test_*.py')
manifests: install
	FLIPCHECK_REGENERATE_MANIFESTS=1 $(BIN)/python -m pytest -n 2 $(MANIFEST_TESTS)

demo: install
	$(BIN)/flipcheck demo

# The hostile-input suite (tests/hostile) with a larger, randomised budget than `make test`'s
# 25 derandomised examples per test; FUZZ_EXAMPLES=N sets it.
FUZZ_EXAMPLES ?= 200
fuzz: install
	FLIPCHECK_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) HYPOTHESIS_PROFILE=thorough $(BIN)/python -m pytest -n 2 tests/hostile

bench: install
	$(BIN)/flipcheck bench plan

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
