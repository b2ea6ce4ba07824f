# The book's two commands: `make book` builds the HTML book into _build/html (every notebook
# executed, warnings as errors); `make test` runs every test. Both install what they need.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
ASSETS := _assets/.fetched
BUILT := _build/html/.built
SOURCES := $(shell find book lib/robodyn -type f \( -name '*.ipynb' -o -name '*.md' -o -name '*.py' -o -name '*.bib' \) -not -path '*/.ipynb_checkpoints/*' -not -path '*/__pycache__/*' 2>/dev/null)
PYTEST_ARGS ?=

.PHONY: book test bench chromium clean lab equations

book: $(BUILT)

$(INSTALLED): requirements.txt lib/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(ASSETS): scripts/fetch_assets.sh
	command -v npm >/dev/null || (apt-get update && apt-get install -y npm)
	bash scripts/fetch_assets.sh _assets
	touch $@

$(BUILT): $(INSTALLED) $(ASSETS) _config.yml _toc.yml $(SOURCES)
	@start=$$(date +%s); \
	ROBODYN_STATIC=1 MPLBACKEND=Agg $(VENV)/bin/jupyter-book build . --all -W -n --keep-going; \
	status=$$?; echo "book build: $$(( $$(date +%s) - start )) s"; exit $$status
	touch $@

chromium:
	command -v chromium >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

test: $(INSTALLED) chromium $(BUILT)
	ROBODYN_QUICK=1 MPLBACKEND=Agg $(PY) -m pytest -n 2 --dist loadfile --nbval-lax --nbval-current-env \
	  --doctest-modules tests lib/robodyn book $(PYTEST_ARGS)

# Regenerate the equation index book/equations.md from the pages' labels, the seed list and the
# tests' markers. Not part of `make book`: tests/test_equation_index.py catches a stale page.
equations: $(INSTALLED)
	$(PY) scripts/equation_index.py

bench: $(INSTALLED)
	for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

lab: $(INSTALLED)
	$(PY) -m pip install --quiet jupyterlab==4.6.6
	$(VENV)/bin/jupyter lab

clean:
	rm -rf _build _assets .jupyter_cache
