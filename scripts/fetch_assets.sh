#!/usr/bin/env bash
# Fetch the book's offline web assets with `npm pack` and unpack them into _assets/
# (gitignored; Sphinx copies it into _build/html/_static/ via html_static_path).
#   _assets/mathjax/       MathJax 3 (es5 build)            -> mathjax_path
#   _assets/requirejs/     RequireJS                         -> nb_ipywidgets_js
#   _assets/html-manager/  @jupyter-widgets/html-manager     -> nb_ipywidgets_js
#                          (embed-amd.js bundles base + controls: no CDN at run time)
#   _assets/plotly/        plotly.js, its gl3d bundle (3D scenes: robodyn.viz.Scene)
#   _assets/pyodide/       Pyodide's core (CPython in WebAssembly), the pure-Python wheels of
#                          sympy and mpmath (`pip download`) and packages.zip, the two as
#                          Pyodide's bytecode (scripts/pyodide_precompile.mjs, run by node):
#                          the book's "Run here" cells (book/_ext/live_cells.py turns them into
#                          <script>-loadable files; _config.yml keeps the folder out of _static)
# Versions are pinned; html-manager 1.0.x matches ipywidgets 8.1.x.
set -euo pipefail
cd "$(dirname "$0")/.."

MATHJAX=mathjax@3.2.2
REQUIREJS=requirejs@2.3.8
HTML_MANAGER=@jupyter-widgets/html-manager@1.0.15
PLOTLY=plotly.js-gl3d-dist-min@4.1.1
PYODIDE=pyodide@314.0.8
WHEELS="sympy==1.14.0 mpmath==1.3.0"     # the versions of requirements.txt
STAMP=_assets/.stamp
WANT="$MATHJAX $REQUIREJS $HTML_MANAGER $PLOTLY $PYODIDE $WHEELS"

if [[ -f $STAMP && "$(cat "$STAMP")" == "$WANT" ]]; then
    exit 0
fi
command -v npm >/dev/null || { echo "fetch_assets: npm is required" >&2; exit 1; }
PIP=${PIP:-pip3}            # the Makefile passes its venv's: PIP=".venv/bin/python -m pip"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$MATHJAX" "$REQUIREJS" "$HTML_MANAGER" "$PLOTLY" "$PYODIDE" \
                            >/dev/null)

unpack() {  # unpack <tarball glob> <dest> [paths inside package/ to keep]
    local tgz=("$tmp"/$1) dest=$2
    shift 2
    rm -rf "$dest"; mkdir -p "$dest"
    tar -xzf "${tgz[0]}" -C "$dest" --strip-components=1 "${@/#/package/}"
}
rm -rf _assets; mkdir -p _assets
unpack 'mathjax-*.tgz' _assets/mathjax es5 LICENSE
unpack 'requirejs-*.tgz' _assets/requirejs require.js
unpack 'jupyter-widgets-html-manager-*.tgz' _assets/html-manager dist
unpack 'plotly.js-gl3d-dist-min-*.tgz' _assets/plotly plotly-gl3d.min.js LICENSE
rm -f _assets/html-manager/dist/*.map _assets/html-manager/dist/libembed-amd.js
# Pyodide: the module loader, the runtime (its JS and wasm), the standard library, the lock file
unpack 'pyodide-*.tgz' _assets/pyodide pyodide.mjs pyodide.asm.mjs pyodide.asm.wasm \
       python_stdlib.zip pyodide-lock.json
# shellcheck disable=SC2086
$PIP download --quiet --no-deps --only-binary=:all: --python-version 3.14 \
       --implementation py --dest _assets/pyodide/wheels $WHEELS
node scripts/pyodide_precompile.mjs _assets/pyodide _assets/pyodide/packages.zip \
     _assets/pyodide/wheels/*.whl

for f in _assets/mathjax/es5/tex-chtml.js _assets/requirejs/require.js \
         _assets/html-manager/dist/embed-amd.js _assets/plotly/plotly-gl3d.min.js \
         _assets/pyodide/pyodide.asm.wasm _assets/pyodide/packages.zip; do
    [[ -s $f ]] || { echo "fetch_assets: missing $f" >&2; exit 1; }
done
echo "$WANT" > "$STAMP"
echo "fetch_assets: $WANT -> _assets/ ($(du -sh _assets | cut -f1))"
