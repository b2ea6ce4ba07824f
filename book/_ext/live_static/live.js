/* "Run here": the book's sympy cells run in the page (book/_ext/live_cells.py, issue 40).
 *
 * Nothing is loaded until a reader presses a cell's "Run here" button. Then Python (Pyodide),
 * sympy and mpmath (as Pyodide's bytecode) and robodyn's pure-sympy module robodyn.symbolic
 * come from the book's own
 * _static/live/ folder as <script> files, each handing its bytes (base64) to
 * window.robodynLive.put: a file:// page may neither fetch() nor start a module worker, but it
 * may load scripts and start a worker from a Blob URL whose code is written here. The worker
 * gets the bytes by postMessage and answers every fetch of Pyodide from them (nothing leaves
 * the machine). Cells run in that worker, so the page never freezes; Stop ends the worker and
 * the next run starts a new one (the cells above run again first).
 */
(function () {
  "use strict";
  const script = document.currentScript;
  const BASE = script.src.replace(/live\.js(\?.*)?$/, "live/");
  const FILES = JSON.parse(script.dataset.files);  // [[name, script file], ...]
  const NEEDS_FULL = script.dataset.fullpython;    // where to run what the page cannot
  const SETUPS = JSON.parse(script.dataset.setups || "[]");  // per live cell: code or null
  const PRELUDE = script.dataset.prelude || "";

  // ---------------------------------------------------------------- the worker's code
  function workerMain() {
    let pyodide = null;
    const bytes = {};
    const decode = (b64) => {
      const bin = atob(b64);
      const out = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
      return out;
    };
    const ROOT = "https://robodyn-live.invalid/";   // never fetched: answered below
    self.fetch = async (url) => {
      const name = String(url).startsWith(ROOT) ? String(url).slice(ROOT.length) : null;
      if (name === null || !(name in bytes)) {
        throw new Error("the page's Python has no file " + url + " (it loads nothing else)");
      }
      const type = name.endsWith(".wasm") ? "application/wasm" : "application/octet-stream";
      return new Response(bytes[name], {headers: {"Content-Type": type}});
    };
    const moduleUrl = (name) =>
      URL.createObjectURL(new Blob([bytes[name]], {type: "text/javascript"}));
    const post = (type, data) => self.postMessage(Object.assign({type}, data));

    const t0 = performance.now();
    const times = {};                 // ms since the worker began, per step of the start
    const mark = (what) => { times[what] = Math.round(performance.now() - t0); };
    async function start(files, runner) {
      mark("received");
      for (const [name, b64] of Object.entries(files)) bytes[name] = decode(b64);
      mark("decoded");
      const {loadPyodide} = await import(moduleUrl("pyodide.mjs"));
      const asm = await import(moduleUrl("pyodide.asm.mjs"));
      pyodide = await loadPyodide({
        indexURL: ROOT, stdLibURL: ROOT + "python_stdlib.zip",
        lockFileContents: new TextDecoder().decode(bytes["pyodide-lock.json"]),
        createPyodideModule: asm.default,
        stdout: (s) => post("stream", {name: "stdout", text: s + "\n"}),
        stderr: (s) => post("stream", {name: "stderr", text: s + "\n"}),
      });
      mark("pyodide");
      const site = pyodide.runPython("import site; site.getsitepackages()[0]");
      for (const name of Object.keys(bytes)) {
        if (!name.endsWith(".zip") || name === "python_stdlib.zip") continue;
        pyodide.FS.writeFile("/tmp/" + name, bytes[name]);
        pyodide.runPython(
          `import zipfile\nzipfile.ZipFile('/tmp/${name}').extractall('${site}')`);
        delete bytes[name];
      }
      mark("unpacked");
      pyodide.runPython(runner);
      pyodide.runPython("import sympy, robodyn.symbolic");
      mark("imported");   // warm: the first run is quicker
    }

    self.onmessage = async (e) => {
      const msg = e.data;
      try {
        if (msg.type === "start") {
          await start(msg.files, msg.runner);
          post("ready", {times});
        } else if (msg.type === "run") {
          const run = pyodide.globals.get("_robodyn_live_run");
          const out = run(msg.code, msg.quiet ? 1 : 0);
          run.destroy();
          post("done", {id: msg.id, result: out.toJs ? out.toJs() : out});
        }
      } catch (err) {
        post("failed", {id: msg.id, text: String(err && err.stack || err)});
      }
    };
  }

  // ------------------------------------------------ Python side: run a cell, show its result
  const RUNNER = `
import ast, sys, traceback
import sympy as _sp

_NUMERIC = {"numpy", "scipy", "matplotlib", "ipywidgets", "IPython", "pandas"}
_ns = {"__name__": "__main__"}
_shown = []

def display(*objs):
    for o in objs:
        _shown.append(_show(o))

def _show(o):
    if isinstance(o, (_sp.Basic, _sp.MatrixBase)) or (
            isinstance(o, (tuple, list)) and o and
            all(isinstance(x, (_sp.Basic, _sp.MatrixBase)) for x in o)):
        return ["math", _sp.latex(o)]
    return ["text", repr(o)]

_ns["display"] = display

def _needs_full(err):
    obj = getattr(err, "obj", None)
    if (isinstance(err, AttributeError) and type(obj).__name__ == "module"
            and obj.__name__.split(".")[0] == "robodyn"):
        return f"{obj.__name__}.{err.name}"
    name = getattr(err, "name", None) or ""
    if not isinstance(err, ImportError):
        return None
    if name == "robodyn" and getattr(err, "name_from", None):      # from robodyn import x
        return f"robodyn.{err.name_from}"
    top = name.split(".")[0]
    if top in _NUMERIC or (top == "robodyn" and name != "robodyn.symbolic"):
        return name
    if isinstance(err, ImportError) and "robodyn" in str(err):
        return "robodyn (" + str(err) + ")"
    return None

def _robodyn_live_run(code, quiet):
    sys.stdout.flush()
    _shown.clear()
    try:
        tree = ast.parse(code, "<cell>", "exec")
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:
            tree.body.pop()
        exec(compile(tree, "<cell>", "exec"), _ns)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), _ns)
            if value is not None and not quiet:
                _shown.append(_show(value))
    except BaseException as err:
        needs = _needs_full(err)
        if needs:
            return [["needs", needs]]
        tb = traceback.TracebackException.from_exception(err)
        tb.stack = traceback.StackSummary.from_list(
            [f for f in tb.stack if f.filename == "<cell>"] or list(tb.stack)[-1:])
        return [["error", "".join(tb.format())]]
    finally:
        sys.stdout.flush()
    return [] if quiet else list(_shown)
`;

  // ------------------------------------------------------------------ page side
  const state = {worker: null, ready: null, pending: new Map(), seq: 0, payload: null};
  const cells = [];         // {box, ran, ...} in page order
  window.robodynLive = window.robodynLive || {files: {}};
  window.robodynLive.put = (name, b64) => { window.robodynLive.files[name] = b64; };

  function loadScript(url) {
    return new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = url;
      s.onload = resolve;
      s.onerror = () => reject(new Error("could not load " + url));
      document.head.appendChild(s);
    });
  }

  async function payload() {
    if (!state.payload) {
      state.payload = Promise.all(FILES.map(([, file]) => loadScript(BASE + file)))
        .then(() => {
          const files = {};
          for (const [name] of FILES) files[name] = window.robodynLive.files[name];
          return files;
        });
      state.payload.catch(() => { state.payload = null; });
    }
    return state.payload;
  }

  function startWorker() {
    if (state.ready) return state.ready;
    // A module worker (Pyodide refuses classic ones) from a data: URL: from a file:// page
    // chromium refuses a module worker from a file or a Blob URL, not from a data: URL.
    const src = "(" + workerMain.toString() + ")();";
    const worker = new Worker("data:text/javascript," + encodeURIComponent(src),
                              {type: "module", name: "robodyn-live"});
    state.worker = worker;
    let abort;                        // Stop while Python is still starting
    const stopped = new Promise((_, reject) => { abort = () => reject(new Error("stopped")); });
    state.abortStart = abort;
    const started = payload().then((files) => new Promise((resolve, reject) => {
      worker.onmessage = (e) => {
        const m = e.data;
        if (m.type === "ready") { window.robodynLive.times = m.times; resolve(); }
        else if (m.type === "failed" && m.id === undefined) reject(new Error(m.text));
        else if (m.type === "stream") currentOutput(m.name, m.text);
        else if (state.pending.has(m.id)) {
          const p = state.pending.get(m.id);
          state.pending.delete(m.id);
          m.type === "done" ? p.resolve(m.result) : p.reject(new Error(m.text));
        }
      };
      worker.onerror = (e) => reject(new Error(e.message || "the worker failed"));
      worker.postMessage({type: "start", files, runner: RUNNER});
    }));
    state.ready = Promise.race([started, stopped]);
    state.ready.catch(() => stopWorker());
    return state.ready;
  }

  function stopWorker() {
    if (state.abortStart) state.abortStart();
    state.abortStart = null;
    if (state.worker) state.worker.terminate();
    state.worker = null;
    state.ready = null;
    for (const p of state.pending.values()) p.reject(new Error("stopped"));
    state.pending.clear();
    state.preluded = false;
    for (const c of cells) c.ran = c.setupRan = false;
  }

  function call(code, quiet) {
    const id = ++state.seq;
    return new Promise((resolve, reject) => {
      state.pending.set(id, {resolve, reject});
      state.worker.postMessage({type: "run", id, code, quiet});
    });
  }

  let streamTarget = null;
  function currentOutput(name, text) {
    if (!streamTarget) return;
    let pre = streamTarget.lastElementChild;
    if (!pre || !pre.classList.contains("live-" + name)) {
      pre = document.createElement("pre");
      pre.className = "live-" + name;
      streamTarget.appendChild(pre);
    }
    pre.textContent += text;
  }

  function show(out, items) {
    for (const [kind, text] of items) {
      if (kind === "math") {
        const div = document.createElement("div");
        div.className = "live-math";
        div.textContent = "\\[" + text + "\\]";
        out.appendChild(div);
        if (window.MathJax && MathJax.typesetPromise) MathJax.typesetPromise([div]);
      } else if (kind === "needs") {
        const p = document.createElement("p");
        p.className = "live-needs";
        p.setAttribute("role", "alert");
        p.textContent = `This cell needs ${text}, which the page's Python (sympy only) cannot ` +
          `run: numpy, scipy, matplotlib and robodyn's numeric and compiled engine need a full ` +
          `Python. ${NEEDS_FULL}`;
        out.appendChild(p);
      } else {
        const pre = document.createElement("pre");
        pre.className = kind === "error" ? "live-error" : "live-text";
        pre.textContent = text;
        out.appendChild(pre);
      }
    }
  }

  function setBusy(cell, busy, status) {
    // not `disabled`: a disabled button loses the keyboard focus (it would fall to the page)
    cell.run.setAttribute("aria-disabled", busy ? "true" : "false");
    cell.busy = busy;
    cell.stop.hidden = !busy;
    cell.stop.disabled = !busy;
    cell.status.textContent = status;
    cell.box.setAttribute("aria-busy", busy ? "true" : "false");
  }

  async function runCell(cell) {
    const started = performance.now();
    const cold = !state.ready;
    cell.out.replaceChildren();
    setBusy(cell, true, cold ? "Starting Python in the page (sympy; a few seconds, once)…"
                             : "Running…");
    try {
      await startWorker();
      streamTarget = null;
      if (!state.preluded) {
        await call(PRELUDE, true);
        state.preluded = true;
      }
      for (const c of cells) {          // the live cells above, once, as in a notebook
        if (c.setup && !c.setupRan) {
          setBusy(cell, true, "Setting up the chapter's state…");
          await call(c.setup, true);
          c.setupRan = true;
        }
        if (c === cell) break;
        if (!c.ran) {
          setBusy(cell, true, "Running the cells above first…");
          await call(c.code(), true);
          c.ran = true;
        }
      }
      setBusy(cell, true, "Running…");
      streamTarget = cell.out;
      const items = await call(cell.code(), false);
      cell.ran = true;
      show(cell.out, items);
      const secs = ((performance.now() - started) / 1000).toFixed(1);
      const failed = items.some(([k]) => k === "error" || k === "needs");
      setBusy(cell, false, (failed ? "Stopped with an error" : "Done") + ` in ${secs} s.`);
      cell.box.dataset.liveSeconds = secs;
    } catch (err) {
      if (String(err.message) === "stopped") {
        setBusy(cell, false, "Stopped. Python restarts at the next run.");
      } else {
        show(cell.out, [["error", "The page's Python failed: " + err.message]]);
        setBusy(cell, false, "Failed.");
      }
    } finally {
      streamTarget = null;
    }
  }

  function makeLive(cell) {
    const {box, pre} = cell;
    if (cell.editor) return;
    const ta = document.createElement("textarea");
    ta.className = "live-editor";
    ta.value = pre.textContent.replace(/\n$/, "");
    ta.rows = Math.min(30, ta.value.split("\n").length + 1);
    ta.spellcheck = false;
    ta.setAttribute("aria-label", `Code of cell ${cell.n}, editable: Ctrl+Enter or ` +
                    `Shift+Enter runs it, Escape stops it`);
    ta.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.shiftKey || e.ctrlKey)) {
        e.preventDefault();
        if (!cell.busy) runCell(cell);
      } else if (e.key === "Escape" && !cell.stop.hidden) {
        e.preventDefault();
        stopWorker();
      }
    });
    ta.addEventListener("input", () => {
      ta.rows = Math.min(30, ta.value.split("\n").length + 1);
    });
    box.querySelector(".cell_input").replaceWith(ta);
    cell.editor = ta;
    cell.code = () => ta.value;
    cell.run.textContent = "Run";
    cell.run.setAttribute("aria-label", `Run cell ${cell.n} here`);
  }

  function setup() {
    const boxes = document.querySelectorAll("div.cell.tag_live");
    // the stylesheet comes with the buttons: no render-blocking <link> in the page's head
    const css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = script.src.replace(/live\.js(\?.*)?$/, "live.css");
    document.head.appendChild(css);
    boxes.forEach((box, i) => {
      const pre = box.querySelector(".cell_input pre");
      if (!pre) return;
      const cell = {box, pre, n: i + 1, ran: false, code: () => pre.textContent,
                    setup: SETUPS[i] || null, setupRan: false};
      const bar = document.createElement("div");
      bar.className = "live-bar";
      const run = document.createElement("button");
      run.type = "button";
      run.className = "live-run";
      run.textContent = "Run here";
      run.setAttribute("aria-label", `Run here: cell ${cell.n} becomes editable and runs in ` +
                       `the page`);
      const stop = document.createElement("button");
      stop.type = "button";
      stop.className = "live-stop";
      stop.textContent = "Stop";
      stop.hidden = true;
      stop.setAttribute("aria-label", `Stop cell ${cell.n}; the page's Python restarts`);
      const status = document.createElement("span");
      status.className = "live-status";
      status.setAttribute("role", "status");
      const out = document.createElement("div");
      out.className = "live-output";
      out.setAttribute("role", "group");
      out.setAttribute("aria-live", "polite");
      out.setAttribute("aria-label", `Output of cell ${cell.n} run here`);
      run.addEventListener("click", () => {
        if (cell.busy) return;
        makeLive(cell);
        runCell(cell);
      });
      stop.addEventListener("click", () => { stopWorker(); cell.editor && cell.editor.focus(); });
      bar.append(run, stop, status);
      box.insertBefore(bar, box.querySelector(".cell_output"));
      box.insertBefore(out, bar.nextSibling);
      if (cell.setup) {                 // say what the page runs before this cell
        const details = document.createElement("details");
        details.className = "live-setup";
        const summary = document.createElement("summary");
        summary.textContent = "In the page, this cell starts from the chapter's state, " +
                              "made in pure sympy by this code";
        const code = document.createElement("pre");
        code.textContent = cell.setup;
        details.append(summary, code);
        bar.after(details);
      }
      Object.assign(cell, {run, stop, status, out});
      cells.push(cell);
    });
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && cells.some((c) => c.busy)) stopWorker();
    });
  }

  // after the page's load: nothing of this runs before the page has painted
  if (document.readyState === "complete") setup();
  else window.addEventListener("load", setup);
})();
