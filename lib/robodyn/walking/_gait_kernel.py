r"""The compass gait's step-to-step map in C (private to :mod:`robodyn.walking`).

The equations are those of :class:`robodyn.walking.CompassGait` (its symbolic
:math:`M(q)\ddot q = f(q, \dot q)`, its four-coordinate impact model), printed to C by sympy
with common subexpressions eliminated, the parameters (m, m_h, a, b, g, slope) left as run-time
arguments so that one build serves every walker. Around them, a hand-written loop:

* Dormand--Prince 5(4) with the usual error control (``rtol`` = ``atol`` = tol);
* the guard of ``CompassGait.hybrid_system``, :math:`\phi = \max(\sin(\gamma - \sigma),
  \sin\tfrac{\theta_w-\theta_s}2)` with :math:`\sigma = (\theta_s+\theta_w)/2`, checked at the
  ends of every step; a crossing is located by the Illinois method on single steps of the same
  Runge--Kutta formula from the start of the step (no interpolant: the located state is as
  accurate as the integration);
* the plastic impact :math:`\dot q^+ = (I - M_e^{-1}J^T(JM_e^{-1}J^T)^{-1}J)\dot q^-` on the
  four-coordinate model by Gaussian elimination, then the legs exchange roles;
* the same failures as the Python simulator: the hip below 0.2 l (``cos(theta_s - slope) <
  0.2``: a fall), no heel strike within ``t_max``, the trailing foot pushed into the slope.

Status codes: 0 walking, 1 fell, 2 no heel strike within t_max, 3 trailing foot into the
slope, 4 the integrator's step became too small (or 10**6 steps in one stride).
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import os

import sympy as sp

FELL, TIMEOUT, INTO_SLOPE, STIFF = 1, 2, 3, 4
STATUS = {0: "walking", FELL: "fell", TIMEOUT: "no heel strike within t_max",
          INTO_SLOPE: "trailing foot into the slope", STIFF: "integrator stalled"}


def _c(exprs, outputs):
    """C statements assigning ``outputs[i] = exprs[i]`` with common subexpressions shared."""
    printer = sp.printing.c.C99CodePrinter()
    subs, red = sp.cse(exprs, symbols=sp.numbered_symbols("c_"))
    lines = [f"    const double {s} = {printer.doprint(e)};" for s, e in subs]
    lines += [f"    {o} = {printer.doprint(e)};" for o, e in zip(outputs, red)]
    return "\n".join(lines)


_HEADER = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

typedef struct { double m, m_h, a, b, g, gam, tol, t_max; } P;

static void accel(const P *p, const double *y, double *dy)
{
    const double m = p->m, m_h = p->m_h, a = p->a, b = p->b, g = p->g;
    const double theta_s = y[0], theta_w = y[1], u_s = y[2], u_w = y[3];
    double M00, M01, M11, f0, f1;
%(dyn)s
    const double det = M00 * M11 - M01 * M01;
    dy[0] = u_s;
    dy[1] = u_w;
    dy[2] = (M11 * f0 - M01 * f1) / det;
    dy[3] = (M00 * f1 - M01 * f0) / det;
}

/* Me (4 x 4) and J (2 x 4) of the model with a free stance foot, at q. */
static void impact_model(const P *p, double theta_s, double theta_w, double Me[4][4],
                         double J[2][4])
{
    const double m = p->m, m_h = p->m_h, a = p->a, b = p->b;
%(imp)s
}
"""

_BODY = r"""
/* Solve A x = r in place (n <= 4), partial pivoting; returns 0 if singular. */
static int solve(int n, double A[4][4], double *r)
{
    for (int k = 0; k < n; k++) {
        int piv = k;
        for (int i = k + 1; i < n; i++) if (fabs(A[i][k]) > fabs(A[piv][k])) piv = i;
        if (A[piv][k] == 0.0) return 0;
        if (piv != k) {
            for (int j = 0; j < n; j++) { double t = A[k][j]; A[k][j] = A[piv][j]; A[piv][j] = t; }
            double t = r[k]; r[k] = r[piv]; r[piv] = t;
        }
        for (int i = k + 1; i < n; i++) {
            double f = A[i][k] / A[k][k];
            for (int j = k; j < n; j++) A[i][j] -= f * A[k][j];
            r[i] -= f * r[k];
        }
    }
    for (int k = n - 1; k >= 0; k--) {
        for (int j = k + 1; j < n; j++) r[k] -= A[k][j] * r[j];
        r[k] /= A[k][k];
    }
    return 1;
}

/* The heel strike and leg exchange on y = (ts, tw, us, uw); 0 if the trailing foot would
   move into the slope. */
static int heel_strike(const P *p, double *y)
{
    double Me[4][4], J[2][4], A[4][4], X[4][2], W[4][4], v[4] = {0.0, 0.0, y[2], y[3]};
    impact_model(p, y[0], y[1], Me, J);
    for (int c = 0; c < 2; c++) {                 /* X = Me^-1 J^T, column by column */
        double r[4];
        memcpy(A, Me, sizeof A);
        for (int i = 0; i < 4; i++) r[i] = J[c][i];
        if (!solve(4, A, r)) return 0;
        for (int i = 0; i < 4; i++) X[i][c] = r[i];
    }
    double vn[4] = {0.0, 0.0, 0.0, 0.0};
    memset(W, 0, sizeof W);
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 4; j++) vn[i] += J[i][j] * v[j];
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 4; k++) W[i][j] += J[i][k] * X[k][j];
    }
    if (!solve(2, W, vn)) return 0;               /* vn = (J Me^-1 J^T)^-1 J v */
    for (int i = 0; i < 4; i++) v[i] -= X[i][0] * vn[0] + X[i][1] * vn[1];
    if (v[0] * sin(p->gam) + v[1] * cos(p->gam) < -1e-9) return 0;
    const double ts = y[0];
    y[0] = y[1];
    y[1] = ts;
    y[2] = v[3];
    y[3] = v[2];
    return 1;
}

static double guard(const P *p, const double *y)
{
    const double a = sin(p->gam - 0.5 * (y[0] + y[1])), b = sin(0.5 * (y[1] - y[0]));
    return a > b ? a : b;
}

static const double C2 = 0.2, C3 = 0.3, C4 = 0.8, C5 = 8.0 / 9.0;
static const double A21 = 0.2, A31 = 3.0 / 40, A32 = 9.0 / 40, A41 = 44.0 / 45,
    A42 = -56.0 / 15, A43 = 32.0 / 9, A51 = 19372.0 / 6561, A52 = -25360.0 / 2187,
    A53 = 64448.0 / 6561, A54 = -212.0 / 729, A61 = 9017.0 / 3168, A62 = -355.0 / 33,
    A63 = 46732.0 / 5247, A64 = 49.0 / 176, A65 = -5103.0 / 18656, B1 = 35.0 / 384,
    B3 = 500.0 / 1113, B4 = 125.0 / 192, B5 = -2187.0 / 6784, B6 = 11.0 / 84,
    E1 = 71.0 / 57600, E3 = -71.0 / 16695, E4 = 71.0 / 1920, E5 = -17253.0 / 339200,
    E6 = 22.0 / 525, E7 = -1.0 / 40;

/* One Dormand-Prince step of size h from y (derivative k1 there): y1, its derivative k7,
   and the error estimate scaled by tol (<= 1: accept). */
static double dp_step(const P *p, const double *y, const double *k1, double h, double *y1,
                      double *k7)
{
    double k2[4], k3[4], k4[4], k5[4], k6[4], z[4];
    int i;
    for (i = 0; i < 4; i++) z[i] = y[i] + h * A21 * k1[i];
    accel(p, z, k2);
    for (i = 0; i < 4; i++) z[i] = y[i] + h * (A31 * k1[i] + A32 * k2[i]);
    accel(p, z, k3);
    for (i = 0; i < 4; i++) z[i] = y[i] + h * (A41 * k1[i] + A42 * k2[i] + A43 * k3[i]);
    accel(p, z, k4);
    for (i = 0; i < 4; i++)
        z[i] = y[i] + h * (A51 * k1[i] + A52 * k2[i] + A53 * k3[i] + A54 * k4[i]);
    accel(p, z, k5);
    for (i = 0; i < 4; i++)
        z[i] = y[i] + h * (A61 * k1[i] + A62 * k2[i] + A63 * k3[i] + A64 * k4[i]
                           + A65 * k5[i]);
    accel(p, z, k6);
    for (i = 0; i < 4; i++)
        y1[i] = y[i] + h * (B1 * k1[i] + B3 * k3[i] + B4 * k4[i] + B5 * k5[i] + B6 * k6[i]);
    accel(p, y1, k7);
    double err = 0.0;
    for (i = 0; i < 4; i++) {
        double e = h * (E1 * k1[i] + E3 * k3[i] + E4 * k4[i] + E5 * k5[i] + E6 * k6[i]
                        + E7 * k7[i]);
        double sc = p->tol * (1.0 + fmax(fabs(y[i]), fabs(y1[i])));
        err += (e / sc) * (e / sc);
    }
    (void)C2; (void)C3; (void)C4; (void)C5;
    return sqrt(err / 4.0);
}

/* Integrate from the post-impact state y to the next heel strike; y becomes the state just
   after it, *T the stride's duration. Returns the status (0 walking). */
static int stride(const P *p, double *y, double *T)
{
    double k1[4], k7[4], y1[4], t = 0.0, h = 1e-3;
    accel(p, y, k1);
    double g0 = guard(p, y);
    for (long n = 0; n < 1000000; n++) {
        if (t >= p->t_max) return 2;
        if (h > p->t_max - t) h = p->t_max - t;
        double err = dp_step(p, y, k1, h, y1, k7);
        if (!(err <= 1.0)) {
            h *= (err == err) ? fmax(0.2, 0.9 * pow(err, -0.2)) : 0.2;
            if (h < 1e-14) return 4;
            continue;
        }
        double g1 = guard(p, y1);
        if (g0 > 0.0 && g1 <= 0.0) {               /* heel strike inside [t, t + h] */
            double lo = 0.0, hi = h, glo = g0, ghi = g1, tau = h, z[4], kz[4];
            int side = 0;
            memcpy(z, y1, sizeof z);
            for (int it = 0; it < 100 && hi - lo > 1e-15 * (1.0 + t); it++) {
                tau = (lo * ghi - hi * glo) / (ghi - glo);
                if (!(tau > lo && tau < hi)) tau = 0.5 * (lo + hi);
                dp_step(p, y, k1, tau, z, kz);
                double gz = guard(p, z);
                if (gz > 0.0) { lo = tau; glo = gz; if (side == -1) ghi *= 0.5; side = -1; }
                else { hi = tau; ghi = gz; if (side == 1) glo *= 0.5; side = 1; }
                if (gz == 0.0) break;
            }
            if (tau != hi) { tau = hi; dp_step(p, y, k1, tau, z, kz); }
            memcpy(y, z, sizeof z);
            *T = t + tau;
            if (cos(y[0] - p->gam) < 0.2) return 1;
            return heel_strike(p, y) ? 0 : 3;
        }
        memcpy(y, y1, sizeof y1);
        memcpy(k1, k7, sizeof k7);
        t += h;
        g0 = g1;
        if (cos(y[0] - p->gam) < 0.2) return 1;
        h *= fmin(5.0, 0.9 * pow(fmax(err, 1e-10), -0.2));
    }
    return 4;
}

/* walk(params, z0, steps, out, status, durations): params = (m, m_h, a, b, g, slope, tol,
   t_max); z0 (B, 3) section points (theta_s, thetad_s, thetad_w); out (B, steps + 1, 3);
   status (B,) as floats, the status of the last stride tried; durations (B, steps).
   After a failure the points repeat the last one reached and the durations are 0. */
static PyObject *walk(PyObject *self, PyObject *args)
{
    Py_buffer pb, zb, ob, sb, db;
    Py_ssize_t steps;
    if (!PyArg_ParseTuple(args, "y*y*nw*w*w*", &pb, &zb, &steps, &ob, &sb, &db)) return NULL;
    const double *pp = pb.buf, *z0 = zb.buf;
    double *out = ob.buf, *st = sb.buf, *dur = db.buf;
    Py_ssize_t B = zb.len / (3 * (Py_ssize_t)sizeof(double));
    int ok = pb.len == 8 * (Py_ssize_t)sizeof(double) && steps >= 0
        && ob.len == B * (steps + 1) * 3 * (Py_ssize_t)sizeof(double)
        && sb.len == B * (Py_ssize_t)sizeof(double)
        && db.len == B * steps * (Py_ssize_t)sizeof(double);
    if (ok) {
        P p = {pp[0], pp[1], pp[2], pp[3], pp[4], pp[5], pp[6], pp[7]};
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < B; i++) {
            double y[4] = {z0[3 * i], 2.0 * p.gam - z0[3 * i], z0[3 * i + 1], z0[3 * i + 2]};
            double *o = out + i * (steps + 1) * 3;
            int s = 0;
            o[0] = y[0]; o[1] = y[2]; o[2] = y[3];
            for (Py_ssize_t k = 0; k < steps; k++) {
                double T = 0.0;
                if (s == 0) s = stride(&p, y, &T);
                dur[i * steps + k] = s == 0 ? T : 0.0;
                for (int j = 0; j < 3; j++)          /* after a failure: the last point */
                    o[3 * (k + 1) + j] = s == 0 ? (j == 0 ? y[0] : y[j + 1]) : o[3 * k + j];
            }
            st[i] = s;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&pb); PyBuffer_Release(&zb); PyBuffer_Release(&ob);
    PyBuffer_Release(&sb); PyBuffer_Release(&db);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "walk: buffers of inconsistent sizes");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS, "strides of the compass gait"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "MODNAME", NULL, -1, methods};
PyMODINIT_FUNC PyInit_MODNAME(void) { return PyModule_Create(&module); }
"""


def source():
    """The C source of the kernel (generated from the walker's symbolic equations)."""
    from ._walkers import _compass_equations
    form, Me, Js, _, _, (ts, tw, us, uw, x, y), _ = _compass_equations()
    M, f = form.M, form.f
    dyn = _c([M[0, 0], M[0, 1], M[1, 1], f[0], f[1]], ["M00", "M01", "M11", "f0", "f1"])
    Me = Me.subs({x: 0, y: 0})
    Js = Js.subs({x: 0, y: 0})
    imp = _c(list(Me) + list(Js), [f"Me[{i}][{j}]" for i in range(4) for j in range(4)]
             + [f"J[{i}][{j}]" for i in range(2) for j in range(4)])
    return _HEADER % {"dyn": dyn, "imp": imp} + _BODY


_END = "/* end of the robodyn gait kernel */\n"


def _source_file():
    """The generated source, cached as text beside the compiled modules: its name is a digest
    of everything it is generated from (this file, the walker's derivation, sympy's version),
    so worker processes skip the symbolic derivation; a damaged file is regenerated."""
    from . import _walkers as walkers
    from ..codegen import cache_dir
    origin = "".join(inspect.getsource(f) for f in (walkers._compass_equations, walkers._trig,
                                                     source, _c)) + _HEADER + _BODY
    digest = hashlib.sha256((origin + sp.__version__).encode()).hexdigest()[:16]
    path = cache_dir() / f"gait-kernel-{digest}.c"
    try:
        text = path.read_text()
        if text.endswith(_END):
            return text
    except OSError:
        pass
    text = source() + _END
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)                   # atomic: a reader sees all of it or none
    return text


@functools.lru_cache(maxsize=None)
def kernel():
    """The compiled module (built once, cached on disk by :mod:`robodyn.codegen`)."""
    from ..codegen import compiled_module
    return compiled_module(_source_file(), "robodyn_gait")
