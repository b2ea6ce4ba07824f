// Precompile the page's Python packages for Pyodide (book/_ext/live_cells.py, issue 40).
//
//   node scripts/pyodide_precompile.mjs <pyodide dir> <out.zip> <wheel>...
//
// Runs Pyodide (the same files the pages load) in Node, unpacks the wheels (pure Python:
// sympy, mpmath), compiles every module to bytecode of Pyodide's own CPython and writes one zip
// of the packages as bytecode only (each foo.py as foo.pyc beside it, which Python imports
// without a source) and without their test suites (as Pyodide's own packages leave them out):
// in the page, `import sympy` then reads bytecode instead of compiling about a thousand source
// files in WebAssembly. Deterministic: sorted names, one fixed date.
import {readFileSync, writeFileSync} from "node:fs";
import {resolve} from "node:path";
import {pathToFileURL} from "node:url";

const [dir, out, ...wheels] = process.argv.slice(2);
if (!dir || !out || !wheels.length) {
  console.error("usage: node pyodide_precompile.mjs <pyodide dir> <out.zip> <wheel>...");
  process.exit(2);
}
const {loadPyodide} = await import(pathToFileURL(resolve(dir, "pyodide.mjs")).href);
const py = await loadPyodide({indexURL: resolve(dir) + "/"});
py.FS.mkdirTree("/tmp/wheels");
const names = [];
for (const w of wheels) {
  const name = w.split("/").pop();
  py.FS.writeFile("/tmp/wheels/" + name, readFileSync(w));
  names.push(name);
}
py.globals.set("wheel_names", py.toPy(names));
py.runPython(`
import compileall, os, re, warnings, zipfile
warnings.simplefilter("ignore", SyntaxWarning)     # sympy's own code, not ours to fix
root = "/tmp/packages"
for name in wheel_names:
    with zipfile.ZipFile("/tmp/wheels/" + name) as zf:
        zf.extractall(root)
ok = compileall.compile_dir(root, quiet=1, workers=1, legacy=True,
                            rx=re.compile("/tests/"))
if not ok:
    raise SystemExit("pyodide_precompile: a module did not compile")
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
               if not f.endswith(".py") and "/tests/" not in d + "/")
with zipfile.ZipFile("/tmp/out.zip", "w", zipfile.ZIP_DEFLATED) as zf:
    for path in files:
        info = zipfile.ZipInfo(os.path.relpath(path, root), (1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with open(path, "rb") as f:
            zf.writestr(info, f.read())
`);
writeFileSync(out, py.FS.readFile("/tmp/out.zip"));
console.log(`pyodide_precompile: ${names.join(", ")} -> ${out}`);
