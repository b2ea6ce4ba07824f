r"""Compiled numeric twins of symbolic equations of motion.

:func:`compile_equations` turns the symbolic :math:`M(q)`, :math:`C(q,\dot q)`, :math:`G(q)` of
eq. (5.14) into one small CPython extension module: sympy's common-subexpression elimination,
C99 code from sympy's C printer, and the machine's C compiler (``cc``/``gcc``). The module is
built once per distinct source and cached on disk, so a notebook, a test and a benchmark that
ask for the same equations share one build.

Each generated function takes 1-D float arrays (or sequences) of length n and returns new
numpy arrays; or, in one call, a batch: every argument of shape (B, n) (the same B), giving
(B, n, n) and (B, n) results (a loop over the states in C, no Python per state). It checks the
shapes and that every entry is finite, and raises ``ValueError`` naming the function, the
argument, what was expected and what came. ``forward_dynamics``
solves :math:`M\ddot q = \tau - C\dot q - G` by a Cholesky factorization written out for this n
and raises :class:`~robodyn.equations.SingularMassMatrix` (also a ``numpy.linalg.LinAlgError``)
if M(q) is singular or not positive definite at the state (a pivot of the factorization at most
:math:`n\,\epsilon\max_iM_{ii}`: the rest is rounding, and the answer would be a huge wrong
number).

The cache heals itself: each module file is checked against the size and SHA-256 recorded when
it was built *before* it is loaded (a truncated shared object would otherwise kill the process
with SIGBUS), and a file that is missing, empty, truncated or garbage is rebuilt once, under a
file lock shared by all processes, and replaced atomically. A cache folder that cannot be
written is replaced by a private temporary folder, with a warning.

Where no compiler works (or ``$CC`` names none), :class:`CompileError` says why; :meth:`EquationsOfMotion.numeric
<robodyn.lagrange.EquationsOfMotion.numeric>` then falls back to ``lambdify`` with a warning.

The cache folder is ``$ROBODYN_CACHE`` if set, else ``~/.cache/robodyn``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import re
import tempfile
import warnings
from pathlib import Path

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.printing.c import C99CodePrinter

from . import _meaning_checks, _value_checks
from .kinds import Metric
from .equations import SingularMassMatrix  # noqa: F401 -- raised by the compiled code
from .errors import RobodynError

__all__ = ["compile_equations", "compiled_module", "CompileError", "cache_dir"]

_CODEGEN_VERSION = "9"          # bump when the C template changes


class CompileError(RobodynError, RuntimeError):
    """The C code could not be compiled or loaded (no compiler, no headers, a compiler error)."""



_FALLBACK_DIR = []              # [a private temporary folder, once the cache proved unusable]


def cache_dir():
    """Folder of compiled modules: ``$ROBODYN_CACHE/codegen`` or ``~/.cache/robodyn/codegen``
    (created). If it cannot be created or written (a read-only folder, a file in its place), a
    private temporary folder of this process is used instead, with one RuntimeWarning naming
    the reason: the numbers stay right, only the build is not shared."""
    root = os.environ.get("ROBODYN_CACHE") or os.path.join(Path.home(), ".cache", "robodyn")
    path = Path(root) / "codegen"
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
            pass                            # writable (os.access lies to root and on NFS)
        return path
    except OSError as err:
        if not _FALLBACK_DIR:
            tmp = Path(tempfile.mkdtemp(prefix="robodyn-cache-"))
            warnings.warn(f"codegen: the cache folder {path} is not usable ({err}); compiled "
                          f"modules are built in {tmp} for this process", RuntimeWarning,
                          stacklevel=3)
            _FALLBACK_DIR.append(tmp)
        return _FALLBACK_DIR[0]


# --------------------------------------------------------------------------
# C source
# --------------------------------------------------------------------------

class _Printer(C99CodePrinter):
    """C99 printer that writes constants as shortest round-trip double literals and small
    integer powers as products (no ``pow`` calls), and refuses what a C double cannot hold:
    complex and non-finite constants (C would silently read ``I`` as 0 and keep ``inf``)."""

    def _refuse(self, expr):
        raise _value_checks.refusal(
            ValueError, f"codegen: expected real finite constants, got {expr} (C code cannot "
                        f"represent it; the equations are wrong or need simplification)")

    _print_ImaginaryUnit = _print_Infinity = _print_NegativeInfinity = _refuse
    _print_ComplexInfinity = _print_NaN = _refuse

    def _print_Float(self, expr):
        v = float(expr)
        if not np.isfinite(v):
            self._refuse(expr)
        return f"{v!r}"

    def _print_Pow(self, expr):
        base, e = expr.as_base_exp()
        if e.is_Integer and 1 < abs(int(e)) <= 4:
            b = self.parenthesize(base, 100)
            prod = "*".join([b] * abs(int(e)))
            return f"({prod})" if e > 0 else f"(1.0/({prod}))"
        if e == -1:
            return f"(1.0/{self.parenthesize(base, 100)})"
        if e == sp.Rational(1, 2):
            return f"sqrt({self._print(base)})"
        return super()._print_Pow(expr)


def _floats(e):
    """``e`` with every rational constant (but exponents) as a 17-digit Float: exact results carry
    integers beyond any C type (and beyond a double's range, as numerator and denominator)."""
    if e.is_Rational:
        return sp.Float(e, 17)
    if e.is_Pow:
        return sp.Pow(_floats(e.base), e.exp)
    if e.args:
        return e.func(*(_floats(a) for a in e.args))
    return e


def _angle_sums(exprs, variables):
    """Cosines and sines of integer combinations of ``variables`` (e.g. cos(q1 + 2 q3)) built
    from one cosine and sine per variable by the angle-sum formulas: ``(definitions, exprs)``
    with ``definitions`` the (Symbol, expression) pairs to compute first, in order. A libm
    call costs as much as twenty multiplications; the expanded equations of a 6-joint arm
    have some seventy of them and six distinct angles."""
    variables = set(variables)
    defs, memo, sub = [], {}, {}

    def new(expr):
        sym = sp.Symbol(f"_a{len(defs)}")
        defs.append((sym, expr))
        return sym

    def cs(key):
        """(cos, sin) Symbols of sum k x over key = ((x, k), ...), every k a nonzero int."""
        if key in memo:
            return memo[key]
        x, k = key[-1]
        if len(key) == 1 and k == 1:
            out = (new(sp.cos(x)), new(sp.sin(x)))
        else:
            step = 1 if k > 0 else -1
            rest = key[:-1] + (((x, k - step),) if k != step else ())
            c1, s1 = cs(((x, 1),))
            if not rest:                          # k = -1: cos(-x), sin(-x)
                out = (c1, new(-s1))
            else:
                cr, sr = cs(rest)
                out = (new(cr * c1 - step * sr * s1), new(sr * c1 + step * cr * s1))
        memo[key] = out
        return out

    atoms = set().union(*(e.atoms(sp.cos, sp.sin) for e in exprs)) if exprs else set()
    for f in sorted(atoms, key=sp.default_sort_key):
        terms = f.args[0].as_coefficients_dict()
        if not terms or any(x not in variables or not c.is_Integer for x, c in terms.items()):
            continue
        key = tuple(sorted(((x, int(c)) for x, c in terms.items()), key=lambda t: t[0].name))
        c, s_ = cs(key)
        sub[f] = c if isinstance(f, sp.cos) else s_
    return defs, [e.xreplace(sub) for e in exprs]


def _kernel(name, inputs, outputs, exprs):
    """One C function ``static void name(const double *in0, ..., double *out0, ...)``.

    ``inputs`` maps an argument name to its list of Symbols; ``outputs`` maps an argument name
    to the number of expressions it takes, in order, from ``exprs``."""
    printer = _Printer()
    subs = {}
    for arg, syms in inputs.items():
        for k, s in enumerate(syms):
            subs[s] = sp.Symbol(f"{arg}[{k}]")
    trig, exprs = _angle_sums([sp.sympify(e, strict=True).xreplace(subs) for e in exprs], subs.values())
    exprs = [_floats(e) for e in exprs]
    temps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("t"), optimizations="basic")
    args = [f"const double *{a}" for a in inputs] + [f"double *{a}" for a in outputs]
    lines = [f"static void {name}({', '.join(args)})", "{"]
    lines += [f"    const double {t} = {printer.doprint(e)};" for t, e in trig + temps]
    k = 0
    for arg, count in outputs.items():
        for j in range(count):
            lines.append(f"    {arg}[{j}] = {printer.doprint(reduced[k])};")
            k += 1
    lines.append("}")
    return "\n".join(lines)


_PRELUDE = r"""
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <numpy/arrayobject.h>
#include <math.h>

#define N {n}

/* robodyn.errors: ArgumentError, ArgumentTypeError, ResultError (set at import) */
static PyObject *arg_error, *arg_type_error, *result_error;

{kernels}

/* A float64 C-contiguous native-order copy (or view) of obj with shape (N,) or (B, N) and finite
 * entries, or NULL with TypeError (masked arrays and other subclasses, complex, boolean, string,
 * object input: no silent cast) or ValueError (shape, NaN, infinity). *batch is -1 for (N,),
 * else B. */
static PyArrayObject *vec(PyObject *obj, const char *fn, const char *arg, npy_intp *batch)
{{
    if (PyArray_Check(obj) && !PyArray_CheckExact(obj)) {{
        PyErr_Format(arg_type_error, "%s: %s: expected a plain array of real numbers, got a "
                     "%s (fill or drop masked values first)", fn, arg, Py_TYPE(obj)->tp_name);
        return NULL;
    }}
    PyArrayObject *raw = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
    if (raw == NULL) {{
        PyErr_Clear();
        PyErr_Format(arg_error, "%s: %s: expected %d numbers, got %R", fn, arg, N, obj);
        return NULL;
    }}
    if (!(PyArray_ISINTEGER(raw) || PyArray_ISFLOAT(raw))) {{
        PyErr_Format(arg_type_error, "%s: %s: expected real numbers (float or integer), got "
                     "dtype %R (no silent cast: take .real or convert explicitly)", fn, arg,
                     (PyObject *)PyArray_DESCR(raw));
        Py_DECREF(raw);
        return NULL;
    }}
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY((PyObject *)raw, NPY_DOUBLE, 0, 0,
                                                        NPY_ARRAY_IN_ARRAY);
    Py_DECREF(raw);
    if (a == NULL) return NULL;
    int nd = PyArray_NDIM(a);
    if (!((nd == 1 || nd == 2) && PyArray_DIM(a, nd - 1) == N)) {{
        PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
        PyErr_Format(arg_error, "%s: %s: expected shape (%d,) for one state or (B, %d) "
                     "for a batch of B states, got shape %R", fn, arg, N, N, shape);
        Py_XDECREF(shape);
        Py_DECREF(a);
        return NULL;
    }}
    *batch = nd == 1 ? -1 : PyArray_DIM(a, 0);
    const double *x = (const double *)PyArray_DATA(a);
    npy_intp size = PyArray_SIZE(a);
    for (npy_intp i = 0; i < size; i++) {{
        if (!isfinite(x[i])) {{
            if (nd == 1)
                PyErr_Format(arg_error, "%s: %s: expected finite numbers, got %R", fn,
                             arg, (PyObject *)a);
            else {{
                PyObject *v = PyFloat_FromDouble(x[i]);
                PyErr_Format(arg_error, "%s: %s: expected finite numbers, got %R in "
                             "row %zd", fn, arg, v, (Py_ssize_t)(i / N));
                Py_XDECREF(v);
            }}
            Py_DECREF(a);
            return NULL;
        }}
    }}
    return a;
}}

/* Parse exactly `count` vector arguments named in `names`, all of shape (N,) or all (B, N) with
 * the same B; returns B (-1 for single states) or -2 with an exception set. */
static npy_intp parse(PyObject *const *args, Py_ssize_t nargs, int count, const char *fn,
                      const char *const *names, PyArrayObject **out)
{{
    if (nargs != count) {{
        PyErr_Format(arg_type_error, "%s: expected %d argument(s) (%s%s%s%s%s), got %zd", fn,
                     count, names[0], count > 1 ? ", " : "", count > 1 ? names[1] : "",
                     count > 2 ? ", " : "", count > 2 ? names[2] : "", nargs);
        return -2;
    }}
    npy_intp batch = -1;
    for (int i = 0; i < count; i++) {{
        npy_intp b;
        out[i] = vec(args[i], fn, names[i], &b);
        if (out[i] != NULL && i > 0 && b != batch) {{
            PyObject *shape = PyObject_GetAttrString((PyObject *)out[i], "shape");
            PyErr_Format(arg_error, "%s: %s: expected the shape of %s (all (%d,), or all "
                         "(B, %d) with the same B), got shape %R", fn, names[i], names[0], N, N,
                         shape);
            Py_XDECREF(shape);
            Py_DECREF(out[i]);
            out[i] = NULL;
        }}
        if (out[i] == NULL) {{
            for (int j = 0; j < i; j++) Py_DECREF(out[j]);
            return -2;
        }}
        batch = b;
    }}
    return batch;
}}

#define D(a) ((const double *)PyArray_DATA(a))

/* out, or NULL with ResultError when finite input gave a non-finite entry (an overflow). */
static PyObject *finite_out(PyObject *out, const char *fn)
{{
    if (out == NULL) return NULL;
    const double *y = (const double *)PyArray_DATA((PyArrayObject *)out);
    npy_intp size = PyArray_SIZE((PyArrayObject *)out);
    for (npy_intp i = 0; i < size; i++) {{
        if (!isfinite(y[i])) {{
            PyErr_Format(result_error, "%s: result: expected finite numbers for finite input, "
                         "got inf or NaN (an overflow: the input is too large for float64)", fn);
            Py_DECREF(out);
            return NULL;
        }}
    }}
    return out;
}}
#define ROWS(b) ((b) < 0 ? 1 : (b))

/* A new array of shape (B, d0[, d1]), or (d0[, d1]) for a single state (b = -1). */
static PyObject *result(npy_intp b, int nd, npy_intp d0, npy_intp d1)
{{
    npy_intp dims[3];
    int k = 0;
    if (b >= 0) dims[k++] = b;
    dims[k++] = d0;
    if (nd == 2) dims[k++] = d1;
    return PyArray_SimpleNew(k, dims, NPY_DOUBLE);
}}

static const char *const N_Q[] = {{"q"}};
static const char *const N_QQD[] = {{"q", "qd"}};
static const char *const N_QQDQDD[] = {{"q", "qd", "qdd"}};
static const char *const N_QQDTAU[] = {{"q", "qd", "tau"}};

"""
"""The head of every generated module: the kernels, then the argument checks (``vec``,
``parse``), ``finite_out`` and ``result`` (a ``str.format`` template: ``n``, ``kernels``).
:mod:`robodyn.recursive_codegen` shares it."""

_TEMPLATE = _PRELUDE + r"""static PyObject *py_M(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{{
    PyArrayObject *a[1];
    npy_intp b = parse(args, nargs, 1, "M", N_Q, a);
    if (b < -1) return NULL;
    PyObject *out = result(b, 2, N, N);
    if (out) {{
        double *y = (double *)PyArray_DATA((PyArrayObject *)out);
        for (npy_intp r = 0; r < ROWS(b); r++) k_M(D(a[0]) + r * N, y + r * N * N);
    }}
    Py_DECREF(a[0]);
    return finite_out(out, "M");
}}

static PyObject *py_C(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{{
    PyArrayObject *a[2];
    npy_intp b = parse(args, nargs, 2, "C", N_QQD, a);
    if (b < -1) return NULL;
    PyObject *out = result(b, 2, N, N);
    if (out) {{
        double *y = (double *)PyArray_DATA((PyArrayObject *)out);
        for (npy_intp r = 0; r < ROWS(b); r++)
            k_C(D(a[0]) + r * N, D(a[1]) + r * N, y + r * N * N);
    }}
    Py_DECREF(a[0]); Py_DECREF(a[1]);
    return finite_out(out, "C");
}}

static PyObject *py_G(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{{
    PyArrayObject *a[1];
    npy_intp b = parse(args, nargs, 1, "G", N_Q, a);
    if (b < -1) return NULL;
    PyObject *out = result(b, 1, N, 0);
    if (out) {{
        double *y = (double *)PyArray_DATA((PyArrayObject *)out);
        for (npy_intp r = 0; r < ROWS(b); r++) k_G(D(a[0]) + r * N, y + r * N);
    }}
    Py_DECREF(a[0]);
    return finite_out(out, "G");
}}

/* M (N*N) and the bias h = C qd + G (N) of one state. */
static void mass_and_bias(const double *q, const double *qd, double *M, double *h)
{{
    k_MH(q, qd, M, h);
}}

static PyObject *py_tau(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{{
    PyArrayObject *a[3];
    npy_intp b = parse(args, nargs, 3, "tau", N_QQDQDD, a);
    if (b < -1) return NULL;
    PyObject *out = result(b, 1, N, 0);
    if (out) {{
        double M[N * N], h[N];
        for (npy_intp r = 0; r < ROWS(b); r++) {{
            mass_and_bias(D(a[0]) + r * N, D(a[1]) + r * N, M, h);
            const double *qdd = D(a[2]) + r * N;
            double *t = (double *)PyArray_DATA((PyArrayObject *)out) + r * N;
            for (int i = 0; i < N; i++) {{
                double s = h[i];
                for (int j = 0; j < N; j++) s += M[i * N + j] * qdd[j];
                t[i] = s;
            }}
        }}
    }}
    Py_DECREF(a[0]); Py_DECREF(a[1]); Py_DECREF(a[2]);
    return finite_out(out, "tau");
}}

static PyObject *linalg_error;

/* x = M^-1 (tau - h) of one state by Cholesky M = L L^T (in place, lower triangle) and two
 * triangular solves; returns -1, or the failing pivot j (its value in *dj, the bound in
 * *tiny): a pivot at most N eps max M_ii is rounding, M singular at this state. */
static int solve_one(const double *q, const double *qd, const double *tau, double *x,
                     double *dj, double *tiny)
{{
    double L[N * N], h[N], y[N], big = 0.0;
    mass_and_bias(q, qd, L, h);
    for (int j = 0; j < N; j++) big = L[j * N + j] > big ? L[j * N + j] : big;
    *tiny = N * 2.220446049250313e-16 * big;
    for (int j = 0; j < N; j++) {{
        double d = L[j * N + j];
        for (int k = 0; k < j; k++) d -= L[j * N + k] * L[j * N + k];
        if (!(d > *tiny)) {{
            *dj = d;
            return j;
        }}
        d = sqrt(d);
        L[j * N + j] = d;
        for (int i = j + 1; i < N; i++) {{
            double s = L[i * N + j];
            for (int k = 0; k < j; k++) s -= L[i * N + k] * L[j * N + k];
            L[i * N + j] = s / d;
        }}
    }}
    for (int i = 0; i < N; i++) {{
        double s = tau[i] - h[i];
        for (int k = 0; k < i; k++) s -= L[i * N + k] * y[k];
        y[i] = s / L[i * N + i];
    }}
    for (int i = N - 1; i >= 0; i--) {{
        double s = y[i];
        for (int k = i + 1; k < N; k++) s -= L[k * N + i] * x[k];
        x[i] = s / L[i * N + i];
    }}
    return -1;
}}

static PyObject *py_forward_dynamics(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{{
    PyArrayObject *a[3];
    npy_intp b = parse(args, nargs, 3, "forward_dynamics", N_QQDTAU, a);
    if (b < -1) return NULL;
    PyObject *out = result(b, 1, N, 0);
    if (out) {{
        double *x = (double *)PyArray_DATA((PyArrayObject *)out);
        for (npy_intp r = 0; r < ROWS(b); r++) {{
            double d, tiny;
            int j = solve_one(D(a[0]) + r * N, D(a[1]) + r * N, D(a[2]) + r * N, x + r * N, &d,
                              &tiny);
            if (j >= 0) {{
                char msg[320], at[64] = "";
                if (b >= 0)
                    snprintf(at, sizeof at, " of state %zd of the batch", (Py_ssize_t)r);
                snprintf(msg, sizeof msg, "forward_dynamics: M(q)%s: expected a positive "
                         "definite mass matrix, got one that is singular or not positive "
                         "definite at this state (pivot %d of its Cholesky factorization is "
                         "%g, at most n eps max M_ii = %g)", at, j, d, tiny);
                PyErr_SetString(linalg_error, msg);
                Py_DECREF(out);
                out = NULL;
                break;
            }}
        }}
    }}
    Py_DECREF(a[0]); Py_DECREF(a[1]); Py_DECREF(a[2]);
    return finite_out(out, "forward_dynamics");
}}

static PyMethodDef methods[] = {{
    {{"M", (PyCFunction)(void (*)(void))py_M, METH_FASTCALL, "M(q): mass matrix (n x n)"}},
    {{"C", (PyCFunction)(void (*)(void))py_C, METH_FASTCALL, "C(q, qd): Coriolis matrix"}},
    {{"G", (PyCFunction)(void (*)(void))py_G, METH_FASTCALL, "G(q): gravity vector"}},
    {{"tau", (PyCFunction)(void (*)(void))py_tau, METH_FASTCALL,
     "tau(q, qd, qdd) = M qdd + C qd + G"}},
    {{"forward_dynamics", (PyCFunction)(void (*)(void))py_forward_dynamics, METH_FASTCALL,
     "forward_dynamics(q, qd, tau) = M^-1 (tau - C qd - G)"}},
    {{NULL, NULL, 0, NULL}}
}};

"""

_MODULE_INIT = r"""static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{modname}", NULL, -1, methods}};

PyMODINIT_FUNC PyInit_{modname}(void)
{{
    import_array();
    PyObject *equations = PyImport_ImportModule("robodyn.equations");
    if (equations == NULL) return NULL;
    linalg_error = PyObject_GetAttrString(equations, "SingularMassMatrix");
    Py_DECREF(equations);
    if (linalg_error == NULL) return NULL;
    PyObject *errors = PyImport_ImportModule("robodyn.errors");
    if (errors == NULL) return NULL;
    arg_error = PyObject_GetAttrString(errors, "ArgumentError");
    arg_type_error = PyObject_GetAttrString(errors, "ArgumentTypeError");
    result_error = PyObject_GetAttrString(errors, "ResultError");
    Py_DECREF(errors);
    if (arg_error == NULL || arg_type_error == NULL || result_error == NULL) return NULL;
    return PyModule_Create(&module);
}}
"""
"""The end of every generated module: its definition (``methods``, the method table) and
``PyInit`` (``linalg_error``, :class:`~robodyn.equations.SingularMassMatrix`, and the errors
of :mod:`robodyn.errors` looked up once)."""

_TEMPLATE = _TEMPLATE + _MODULE_INIT


def _source(M, C, G, q, qd, modname):
    n = len(q)
    qd_col = sp.Matrix(qd)
    h = C * qd_col + G
    kernels = [
        _kernel("k_M", {"q": q}, {"M": n * n}, list(M)),
        _kernel("k_C", {"q": q, "qd": qd}, {"C": n * n}, list(C)),
        _kernel("k_G", {"q": q}, {"G": n}, list(G)),
        _kernel("k_MH", {"q": q, "qd": qd}, {"M": n * n, "h": n}, list(M) + list(h)),
    ]
    return _TEMPLATE.format(n=n, kernels="\n\n".join(kernels), modname=modname)


# --------------------------------------------------------------------------
# build and load
# --------------------------------------------------------------------------

def _compiler():
    cc = os.environ.get("CC", "").strip()
    if cc:                                  # asked for explicitly: never silently replaced
        if not shutil.which(cc.split()[0]):
            raise CompileError(f"codegen: $CC = {cc!r} is not an executable C compiler "
                               f"(unset CC to use the default)")
        return cc.split()
    for cc in (sysconfig.get_config_var("CC"), "cc", "gcc"):
        if cc and shutil.which(cc.split()[0]):
            return cc.split()
    raise CompileError("codegen: no C compiler found (looked for $CC, cc, gcc)")


BUILD_TIMEOUT = 600
"""Seconds after which a C compiler run is abandoned (CompileError)."""


_WHAT = (("robodyn_engine", "the dynamics engine"), ("robodyn_eom", "the equations of motion"),
         ("robodyn_nested", "the equations of motion"), ("robodyn_gait", "the walker's kernel"),
         ("robodyn_pgs", "the contact solver"),
         ("robodyn_recursive", "the robot's recursive dynamics"))
"""What each compiled module is, in the reader's words (by its name's prefix)."""


def _announce(modname, target):
    """One line on stderr before a compile, so that its pause of a few seconds has a reason the
    reader sees (once: the module is cached). Not while the book is built (``ROBODYN_STATIC``
    on): a page must not depend on what the machine's cache held."""
    if os.environ.get("ROBODYN_STATIC", "").strip().lower() not in ("", "0", "false", "no", "off"):
        return
    what = next((w for prefix, w in _WHAT if modname.startswith(prefix)), modname)
    print(f"robodyn: compiling {what} with the C compiler, once (a few seconds; kept in "
          f"{target.parent})", file=sys.stderr, flush=True)


def _build(src, modname, target):
    """Compile ``src`` to ``target`` atomically (a temporary file, then one rename) and record
    the file's size and hash beside it (:func:`_verified` checks them before every load)."""
    _announce(modname, target)
    include = sysconfig.get_paths()["include"]
    if not Path(include, "Python.h").exists():
        raise CompileError(f"codegen: Python.h not found in {include} "
                           "(install the Python development headers)")
    cmd = _compiler() + ["-O2", "-shared", "-fPIC", "-std=c99", "-w",
                         f"-I{include}", f"-I{np.get_include()}"]
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        c_file = Path(tmp, modname + ".c")
        c_file.write_text(src)
        so_file = Path(tmp, target.name)
        try:
            proc = subprocess.run(cmd + [str(c_file), "-o", str(so_file), "-lm"],
                                  capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise CompileError(f"codegen: the C compiler {cmd[0]!r} could not run: {err}") \
                from err
        if proc.returncode != 0:
            raise CompileError(f"codegen: the C compiler failed "
                               f"(exit {proc.returncode}):\n{proc.stderr[-2000:]}")
        size, digest = _file_digest(so_file)
        meta = Path(tmp, "meta")
        meta.write_text(f"{size} {digest}\n")
        os.replace(so_file, target)         # atomic: parallel builders never see half a file
        os.replace(meta, _meta_path(target))


def _meta_path(target):
    return target.with_name(target.name + ".sha256")


def _file_digest(path):
    data = Path(path).read_bytes()
    return len(data), hashlib.sha256(data).hexdigest()


def _verified(target):
    """True when ``target`` exists, is not empty and matches the size and SHA-256 recorded when
    it was built. Checked before ``dlopen``: a truncated shared object would kill the process
    (SIGBUS) instead of raising, and a garbage one may crash it."""
    try:
        size, digest = _meta_path(target).read_text().split()
        if target.stat().st_size != int(size) or int(size) == 0:
            return False
        return _file_digest(target) == (int(size), digest)
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def _locked(target):
    """An exclusive lock on ``target``'s build, shared by every process using the cache."""
    fd = os.open(target.with_name(target.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)                        # closing releases the lock


def _load(modname, path):
    loader = importlib.machinery.ExtensionFileLoader(modname, str(path))
    spec = importlib.util.spec_from_file_location(modname, str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _obtain(source, modname, target):
    """The module at ``target``, healed: a missing, empty, truncated or garbage file (one that
    does not match its recorded size and hash) is rebuilt, under a lock so that parallel
    processes build it once; a verified file that still does not load is rebuilt once more and
    loaded from a fresh copy; then :class:`CompileError`."""
    src = source.replace("MODNAME", modname)
    if not _verified(target):
        with _locked(target):
            if not _verified(target):       # another process may have healed it meanwhile
                _build(src, modname, target)
    try:
        return _load(modname, target)
    except ImportError as err:
        first = err
    with _locked(target):
        _build(src, modname, target)
    with tempfile.TemporaryDirectory(prefix="robodyn-load-") as tmp:
        fresh = Path(tmp, target.name)      # a new path: dlopen does not reuse a failed handle
        shutil.copyfile(target, fresh)
        try:
            return _load(modname, fresh)
        except ImportError as err:
            raise CompileError(f"codegen: the compiled module {target} does not load, even "
                               f"after a rebuild: {err} (first: {first})") from err


_LOADED = {}


def _check_equations(M, C, G, q, qd):
    """compile_equations' argument checks: distinct coordinate and velocity symbols (none
    shared), matrices of the right shapes holding only q and qd, real finite constants and no
    unknown functions. Returns (M, C, G, q, qd) as sympy matrices and lists."""
    fname = "compile_equations"
    syms = _value_checks.distinct_symbols({"q": q, "qd": qd}, fname)
    q, qd = syms["q"], syms["qd"]
    n = len(q)
    if n == 0:
        raise _value_checks.error(f"{fname}: q", "at least one coordinate", "an empty list")
    mats = {}
    for name, X in (("M", M), ("C", C), ("G", G)):
        _value_checks.no_text(X, f"{fname}: {name}")
        try:
            mats[name] = sp.Matrix(X)
        except (TypeError, ValueError, sp.SympifyError) as err:
            raise _value_checks.error(f"{fname}: {name}", "a sympy Matrix", X, str(err),
                                exc=TypeError) from err
    M, C, G = mats["M"], mats["C"], mats["G"]
    if M.shape != (n, n) or C.shape != (n, n) or G.shape != (n, 1) or len(qd) != n:
        raise _value_checks.refusal(
            ValueError, f"compile_equations: expected M, C n x n, G n x 1 and n velocities for "
                        f"n = {n} coordinates, got M {M.shape}, C {C.shape}, G {G.shape}, "
                        f"{len(qd)} velocities")
    bad = (sp.I, sp.zoo, sp.oo, -sp.oo, sp.nan)
    for name, X in mats.items():
        for k, e in enumerate(X):
            e = sp.sympify(e, strict=True)
            if e.has(*bad) or any(not np.isfinite(float(f)) for f in e.atoms(sp.Float)):
                raise _value_checks.error(f"{fname}: {name}", "real finite constants (what C can "
                                    "represent)", f"entry {k} = {e}",
                                    "complex or infinite values would silently become 0 or inf")
            funcs = [f for f in e.atoms(sp.Function) if isinstance(f, AppliedUndef)
                     and f not in set(q) | set(qd)] + list(e.atoms(sp.Derivative))
            if funcs:
                raise _value_checks.error(f"{fname}: {name}", "expressions in the symbols q and qd",
                                    f"unknown functions {sorted(map(str, funcs))[:3]}",
                                    "substitute symbols for q(t) and its derivatives")
    return M, C, G, q, qd
def _fingerprint(matrices):
    """A digest of sympy matrices that is the same in every process (``srepr`` of the same
    thing, hashed bottom-up with each distinct subexpression hashed once: ~20x faster)."""
    memo = {}

    def digest(e):
        d = memo.get(e)
        if d is None:
            if e.args:
                inner = ",".join(digest(a) for a in e.args)
                d = hashlib.sha1(f"{type(e).__name__}({inner})".encode()).hexdigest()
            else:
                d = f"Float:{e._mpf_}" if e.is_Float else f"{type(e).__name__}:{e}"
            memo[e] = d
        return d
    return ";".join(f"{X.shape}:" + ",".join(digest(x) for x in X) for X in matrices)


def compile_equations(M: Metric, C, G, q, qd):
    r"""A compiled module with ``M(q)``, ``C(q, qd)``, ``G(q)``, ``tau(q, qd, qdd)`` and
    ``forward_dynamics(q, qd, tau)`` for the equations of motion (5.14)
    :math:`M\ddot q + C\dot q + G = \tau`.

    Parameters
    ----------
    M, C : n x n sympy matrices in the Symbols ``q`` (and ``qd`` for C), no other symbols
    G : n x 1 sympy matrix in ``q``
    q, qd : lists of n Symbols

    Raises :class:`CompileError` if the C code cannot be built here; ValueError for free
    symbols other than q and qd, for velocities in M or G, for a symbol repeated in q or qd or
    shared between them (the code would read the wrong variable), and for complex or
    non-finite constants (C cannot hold them); TypeError for entries that are not symbols.

    Examples
    --------
    >>> import sympy as sp
    >>> q1, qd1 = sp.symbols('q1 qd1')
    >>> pendulum = compile_equations(sp.Matrix([[2]]), sp.Matrix([[0]]),
    ...                              sp.Matrix([9.81 * sp.sin(q1)]), [q1], [qd1])
    >>> pendulum.forward_dynamics([0.5], [0.0], [0.0])      # -g sin(q) / 2
    array([-2.35158227])
    >>> pendulum.tau([0.0], [1.0], [float('nan')])
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: tau: qdd: expected finite numbers, got array([nan])
    >>> pendulum.forward_dynamics([[0.5], [0.0]], [[0.0], [0.0]], [[0.0], [1.0]])  # a batch
    array([[-2.35158227],
           [ 0.5       ]])
    >>> compile_equations(sp.Matrix([[2]]), sp.Matrix([[0]]), sp.Matrix([0]), [q1], [q1])
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: compile_equations: qd: expected symbols different from those of q, got q1 in both (a velocity needs its own symbol, or the code reads the wrong variable)
    """
    M, C, G, q, qd = _check_equations(M, C, G, q, qd)
    for what, e in (("M", M), ("G", G)):            # C(q, qd) alone reads the velocities
        _meaning_checks.independent_of(e, qd, f"compile_equations: {what}",
                                       f"{what}(q) is a function of q only; a velocity term "
                                       f"belongs in C(q, qd) qd")
    for what, e in (("M", M), ("C", C), ("G", G)):
        free = e.free_symbols - set(q) - set(qd)
        if free:
            raise _value_checks.error(f"compile_equations: {what}", "expressions in q and qd only",
                                f"the symbols {sorted(map(str, free))}, which have no value",
                                "substitute numbers for them first")
    Metric.check(M, "compile_equations: M")     # symmetric positive definite (issue 37)
    # the cache is keyed on the symbolic input: a warm start skips CSE and printing (seconds)
    key = hashlib.sha256((_CODEGEN_VERSION + np.__version__ + sysconfig.get_config_var(
        "EXT_SUFFIX") + _fingerprint([M, C, G, sp.Matrix(q), sp.Matrix(qd)])).encode()
                         ).hexdigest()[:16]
    index = cache_dir() / f"eom-{key}.txt"
    if key in _LOADED:
        return _LOADED[key]
    if index.exists():
        modname = index.read_text().strip()
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", modname):
            modname = "_unreadable_index"     # a damaged index: rebuilt below
        target = cache_dir() / (modname + sysconfig.get_config_var("EXT_SUFFIX"))
        if modname in _LOADED:
            return _LOADED[modname]
        if _verified(target):              # size and hash checked before dlopen
            try:
                module = _load(modname, target)
            except ImportError:
                pass                        # rebuilt below
            else:
                _LOADED[modname] = _LOADED[key] = module
                return module
    module = compiled_module(_source(M, C, G, q, qd, "MODNAME"), "robodyn_eom")
    tmp = index.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(module.__name__)
    os.replace(tmp, index)                  # atomic, as the modules themselves
    _LOADED[key] = module
    return module


_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def compiled_module(source, prefix):
    """Build (once: cached on disk under a hash of the source) and load the CPython extension
    module whose C ``source`` writes its module name as ``MODNAME``.

    The cache heals itself (see :func:`_obtain`): every file is checked against its recorded
    size and hash before it is loaded, and rebuilt atomically when it does not match.

    Parameters
    ----------
    source : str, C source containing ``MODNAME``
    prefix : str, a C identifier (letters, digits, underscore; at most 64 characters): the
        module and file name start with it, so it can never leave the cache folder.

    Raises
    ------
    CompileError
        if it cannot be built or loaded here (no compiler, ``$CC`` not a compiler, a
        compiler error, an unusable file system).
    TypeError, ValueError
        for a ``source`` without ``MODNAME`` or a ``prefix`` that is not an identifier.

    >>> compiled_module("/* MODNAME */", "../evil")
    Traceback (most recent call last):
    ...
    robodyn.errors.ArgumentError: compiled_module: prefix: expected a C identifier of at most 64 characters (letters, digits, _), got '../evil'
    """
    fname = "compiled_module"
    if not isinstance(source, str):
        raise _value_checks.error(f"{fname}: source", "C source text (str)", source, exc=TypeError)
    if "MODNAME" not in source:
        raise _value_checks.error(f"{fname}: source", "C source that names its module MODNAME",
                            "a source without MODNAME")
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        raise _value_checks.error(f"{fname}: prefix", "a C identifier of at most 64 characters "
                            "(letters, digits, _)",
                            repr(prefix) if isinstance(prefix, str) else prefix)
    digest = hashlib.sha256((_CODEGEN_VERSION + np.__version__ + sysconfig.get_config_var(
        "EXT_SUFFIX") + source).encode()).hexdigest()[:16]
    modname = f"{prefix}_{digest}"
    if modname in _LOADED:
        return _LOADED[modname]
    target = cache_dir() / (modname + sysconfig.get_config_var("EXT_SUFFIX"))
    try:
        module = _obtain(source, modname, target)
    except OSError as err:
        raise CompileError(f"codegen: cannot build or load {target}: {err}") from err
    _LOADED[modname] = module
    return module

from ._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals())
