# DP Explorer — the README's two commands: `make run` and `make test` (and `make docs`).
# Needs only python3 (>= 3.11) with venv, pip and make; everything else is installed here.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8501
DOCS_PORT ?= 8000
CHROMIUM ?= /usr/bin/chromium

.PHONY: run test lint docs docs-check browser spark postgres clean screenshots

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Re-install whenever pyproject.toml changes.
$(VENV)/.installed-app: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed-app

run: $(VENV)/.installed-app
	$(BIN)/python -m streamlit run app.py --server.port $(PORT) --server.address localhost \
		--server.headless true --browser.gatherUsageStats false

# A headless Chromium for the browser tests: Debian's package when we are root.
# If it truly cannot be had, the browser tests skip with a loud message (never silently).
browser:
	@if [ -x "$(CHROMIUM)" ]; then \
		echo "browser: using $(CHROMIUM)"; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "browser: installing Debian's chromium (apt-get)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
			|| echo "!!! browser: apt-get could not install chromium; browser tests will be SKIPPED !!!"; \
	else \
		echo "!!! browser: $(CHROMIUM) not found and cannot apt-get it (not root); browser tests will be SKIPPED !!!"; \
	fi

# The optional Spark engine: Java 17+ from Debian (when root) and PySpark (the `spark` extra).
# Idempotent: nothing is installed when both are present. If either truly cannot be had, the
# Spark tests skip with a loud message (never silently).
JAVA_OK := java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])'
spark: $(VENV)/.installed-dev
	@if $(JAVA_OK); then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "spark: installing Debian's openjdk-17-jre-headless (apt-get)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null) \
			|| echo "!!! spark: apt-get could not install Java 17; Spark tests will be SKIPPED !!!"; \
	else \
		echo "!!! spark: no Java 17+ and cannot apt-get it (not root); Spark tests will be SKIPPED !!!"; \
	fi
	@$(BIN)/python -c "import pyspark" 2>/dev/null \
		|| $(BIN)/python -m pip install --quiet -e '.[dev,spark]' \
		|| echo "!!! spark: pip could not install pyspark; Spark tests will be SKIPPED !!!"

# Debian's PostgreSQL server binaries for the export test (tests/postgres starts its own server
# on a private socket). Idempotent; if they cannot be had, those tests skip loudly.
postgres:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "postgres: installing Debian's postgresql (apt-get)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
			|| echo "!!! postgres: apt-get could not install postgresql; PostgreSQL tests will be SKIPPED !!!"; \
	else \
		echo "!!! postgres: no PostgreSQL server and cannot apt-get it (not root); PostgreSQL tests will be SKIPPED !!!"; \
	fi

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .

# The documentation site (docs/, mkdocs.yml): `make docs` serves it while you edit;
# `docs-check` builds it with --strict (a broken link, a missing page or anchor fails) into a
# temporary directory that is removed afterwards, so `make test` never writes into the work tree.
# No --quiet: it hides the warnings that --strict counts, and the build then always passes.
docs: $(VENV)/.installed-dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr localhost:$(DOCS_PORT)

docs-check: $(VENV)/.installed-dev
	@site="$$(mktemp -d)"; \
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir "$$site"; \
	status=$$?; rm -rf "$$site"; \
	if [ $$status -ne 0 ]; then echo "!!! docs: mkdocs build --strict failed (see above) !!!"; fi; \
	exit $$status

test: $(VENV)/.installed-dev browser spark postgres lint docs-check
	DPX_CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest

# Refresh the README's and the docs site's images (docs/screenshots/*.png) from the browser tests; `make test`
# itself never writes tracked files (its screenshots go to a temporary directory).
screenshots: $(VENV)/.installed-dev browser
	DPX_CHROMIUM=$(CHROMIUM) DPX_SCREENSHOT_DIR=docs/screenshots $(BIN)/python -m pytest tests/e2e -q -p no:cacheprovider

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
