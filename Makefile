# The book's two commands: `make book` builds the HTML book into _build/html (every notebook
# executed, warnings as errors); `make test` runs every test. Both install what they need.
# `make pdf` builds the whole book as one PDF through XeLaTeX. `make site` puts that PDF into the
# built site (_build/html/_downloads/, where every page's download menu links it): the site as
# .github/workflows/pages.yml publishes it.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
# The reader's venv (`make lab`, and the kernel `make test` runs the notebooks in; see below).
# Set here, before any rule names them: a rule's prerequisites are expanded when it is read.
READER_VENV ?= .venv-reader
READER_INSTALLED := $(READER_VENV)/.installed
READER_KERNEL := robodyn-reader
READER_KERNELS := $(abspath $(READER_VENV))/test-kernels
READER_HASH = $$(cat requirements-reader.txt lib/pyproject.toml | sha256sum | cut -c1-16)
ASSETS := _assets/.fetched
BUILT := _build/html/.built
PDF := _build/latex/robot-dynamics-interactively.pdf
SITE_PDF := _build/html/_downloads/robot-dynamics-interactively.pdf
# Debian's TeX Live for `make pdf` (about 60 s to install, without recommends): XeLaTeX and
# latexmk, the LaTeX packages Sphinx and Jupyter Book's LaTeX class load, the fonts (FreeFont,
# DejaVu Sans Mono for code), and poppler-utils (pdfinfo, pdftoppm) for scripts/check_pdf.py.
TEX_PACKAGES := latexmk texlive-xetex texlive-latex-recommended texlive-latex-extra \
  texlive-fonts-recommended fonts-freefont-otf fonts-dejavu-core poppler-utils
TEST_ASSETS := _test_assets/.fetched
SOURCES := $(shell find book lib/robodyn -type f \( -name '*.ipynb' -o -name '*.md' -o -name '*.py' -o -name '*.c' -o -name '*.bib' \) -not -path '*/.ipynb_checkpoints/*' -not -path '*/__pycache__/*' 2>/dev/null)
PYTEST_ARGS ?=

.PHONY: book test pdf site tex bench bench-summary chromium clean lab reader venv equations

book: $(BUILT)

# The full set (requirements.txt) in .venv alone: what the instructor commands of the README
# (python -m robodyn.grading, nbgrader) run in.
venv: $(INSTALLED)

$(INSTALLED): requirements.txt requirements-reader.txt lib/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(ASSETS): scripts/fetch_assets.sh scripts/pyodide_precompile.mjs | $(INSTALLED)
	command -v npm >/dev/null || (apt-get update && apt-get install -y npm)
	PIP="$(PY) -m pip" bash scripts/fetch_assets.sh _assets
	touch $@

# No MPLBACKEND here: the notebooks' kernels use matplotlib's inline backend, so plt.show()
# puts each figure into the page (with Agg the book had none of them). After Sphinx: the
# offline bundle _build/html/_downloads/robot-dynamics-interactively-html.zip (book/intro.md).
# The notebooks run first, one per core (scripts/execute_book.py, into the build's jupyter-cache,
# emptied first; _config.yml's execute_notebooks: cache); Sphinx then reads their outputs.
$(BUILT): $(INSTALLED) $(ASSETS) _config.yml _toc.yml $(SOURCES) book/theme/book.css scripts/bundle_html.py \
  scripts/site_address.py scripts/execute_book.py book/images/social-mark.png \
  book/_ext/live_static/live.js book/_ext/live_static/live.css
	@start=$$(date +%s); \
	ROBODYN_STATIC=1 $(PY) scripts/execute_book.py && \
	ROBODYN_STATIC=1 $(VENV)/bin/jupyter-book build . --all -W -n --keep-going; \
	status=$$?; echo "book build: $$(( $$(date +%s) - start )) s"; exit $$status
	$(PY) scripts/bundle_html.py _build/html
	touch $@

# Test-only assets (the axe-core accessibility checker), never part of the site.
$(TEST_ASSETS): scripts/fetch_test_assets.sh
	command -v npm >/dev/null || (apt-get update && apt-get install -y npm)
	bash scripts/fetch_test_assets.sh
	touch $@

chromium:
	command -v chromium >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

# installs only the packages that are missing; a no-op (well under a second) once they are there
tex:
	@missing=$$(for p in $(TEX_PACKAGES); do \
	  dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null | grep -qx installed || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	fi

# The notebooks' outputs: those of this checkout's `make book` when that build is up to date
# (the same sources give the same outputs), else every notebook executed again, one per core;
# matplotlib's inline backend so plt.show() gives images (MPLBACKEND unset). LaTeX errors stop
# the build instead of prompting.
pdf: $(INSTALLED) $(ASSETS) tex
	@start=$$(date +%s); \
	if $(MAKE) --no-print-directory -q $(BUILT) 2>/dev/null; then \
	  echo "pdf: the notebooks' outputs of make book (up to date)"; \
	else env -u MPLBACKEND ROBODYN_STATIC=1 $(PY) scripts/execute_book.py || exit 1; fi; \
	env -u MPLBACKEND ROBODYN_STATIC=1 LATEXOPTS="-interaction=nonstopmode -halt-on-error" \
	  $(VENV)/bin/jupyter-book build . --builder pdflatex -W -n --keep-going; \
	status=$$?; echo "pdf build: $$(( $$(date +%s) - start )) s"; [ $$status -eq 0 ] || exit $$status; \
	$(PY) scripts/check_pdf.py $(PDF)

# The published site: the built HTML book (make book) with the whole book's PDF (make pdf) in
# _downloads/ beside the offline zip. Builds neither: run after both.
site:
	@test -f $(BUILT) || { echo "make site: no built book, run make book first" >&2; exit 1; }
	@test -f $(PDF) || { echo "make site: no $(PDF), run make pdf first" >&2; exit 1; }
	cp $(PDF) $(SITE_PDF)

# Two workers, one per core (the tests are bound by the CPU: a third worker made the run
# slower). conftest.py groups the tests (a notebook, a file, or one slow test) and sends the
# slow groups first.
test: $(INSTALLED) $(READER_INSTALLED) chromium $(BUILT) $(TEST_ASSETS)
	ROBODYN_QUICK=1 MPLBACKEND=Agg JUPYTER_PATH=$(READER_KERNELS) $(PY) -m pytest -n 2 --dist loadgroup --no-loadscope-reorder \
	  --nbval-lax --nbval-kernel-name $(READER_KERNEL) \
	  --doctest-modules tests lib/robodyn book scripts/book_toc.py scripts/site_address.py \
	  scripts/lab.py scripts/lab/book_refs.py scripts/colab_cell.py scripts/execute_book.py \
	  $(PYTEST_ARGS)

# Regenerate the equation index book/equations.md from the pages' labels, the seed list and the
# tests' markers. Not part of `make book`: tests/test_equation_index.py catches a stale page.
equations: $(INSTALLED)
	$(PY) scripts/equation_index.py

bench: $(INSTALLED)
	for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

# every row of the speed table as a same-run ratio to its reference, in under 5 minutes
bench-summary: $(INSTALLED)
	$(PY) bench/summary.py

# A reader's JupyterLab: the reader's set (requirements-reader.txt: the library, numpy, scipy,
# sympy, matplotlib, ipywidgets, JupyterLab, jupyterlab-myst, the two reference libraries the
# check cells compare with; no test stack, no nbgrader) in its own venv, then scripts/lab.py:
# headless (it prints the address to open, with its token), on 127.0.0.1 only, --allow-root only
# when run as root, nbgrader's extensions off. Python, pip and make are all it needs: where npm is
# at hand it also fetches the offline assets (_assets/plotly: the 3D scenes of robodyn.viz.Scene
# turn with the mouse); without npm it says so and the scenes show their still picture.
# The venv holds the reader's set ALONE: when requirements-reader.txt or lib/pyproject.toml
# changes it is made again from nothing (pip's cache makes that quick and offline), and its
# .installed records the two files' hash (tests/test_reader_notebooks.py compares). `make test`
# runs every notebook under nbval in a kernel of this venv (READER_KERNEL, a kernelspec kept
# inside the venv, off JupyterLab's kernel list), so the chapters are proven to run in the
# reader's set without running them twice.
# (READER_VENV and its names are set at the top: `test` needs them as prerequisites.)

$(READER_INSTALLED): requirements-reader.txt lib/pyproject.toml
	@if [ -f $(READER_VENV)/pyvenv.cfg ]; then echo "make: the reader's set changed: making $(READER_VENV) again"; rm -rf $(READER_VENV); fi
	python3 -m venv $(READER_VENV)
	$(READER_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(READER_VENV)/bin/python -m pip install --quiet -r requirements-reader.txt
	mkdir -p $(READER_KERNELS)/kernels/$(READER_KERNEL)
	printf '{"argv": ["%s", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "Python 3 (the reader'"'"'s set)", "language": "python"}\n' \
	  "$(abspath $(READER_VENV))/bin/python" > $(READER_KERNELS)/kernels/$(READER_KERNEL)/kernel.json
	echo $(READER_HASH) > $@

reader: $(READER_INSTALLED)

lab: $(READER_INSTALLED)
	@if command -v npm >/dev/null; then bash scripts/fetch_assets.sh _assets; else \
	  echo "make lab: no npm here, so no offline plotly.js: the 3D scenes show a still picture" \
	       "(install npm and run make lab again for scenes that turn)"; fi
	$(READER_VENV)/bin/python scripts/lab.py

clean:
	rm -rf _build _assets _test_assets .jupyter_cache

# Problem sets (book/assignments): refresh the answer keys in the instructor notebooks
# (book/assignments/source) and regenerate the student notebooks from them. Grading a folder of
# submissions: see book/assignments/index.md (`python -m robodyn.grading grade ...`).
.PHONY: assignments
assignments: $(INSTALLED)
	$(PY) -m robodyn.grading generate book/assignments/source/*.ipynb --out book/assignments
