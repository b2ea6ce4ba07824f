/* The O(n) algorithms of robodyn.dynamics in C: RNEA, CRBA, ABA and the Christoffel Coriolis
 * matrix, line by line the space-frame formulation of _recursions.py (see its module docstring),
 * for one state or a batch; the analytic derivatives of RNEA and ABA (robodyn.derivatives);
 * and those of robodyn.vehicle for a floating or planar base (vms_*: articulated bodies with
 * the base as root, Newton-Euler, composite bodies, the co-energy gradient, the derivatives),
 * one state. Built and cached by robodyn.codegen on first use.
 *
 * The chain's constant data (basis (n,4,16), K (n,4,6), mass (n), home (4,4), as made by
 * dynamics._ChainData) enter once: chain(basis, K, mass, home) checks them and keeps a private
 * copy behind a capsule, the handle that the fixed-base entry points (rnea, crba, coriolis,
 * aba, rnea_derivatives, aba_derivatives) take first, so a call checks only its own arrays.
 * The vms_* entry points take the four arrays themselves (robodyn.vehicle binds them once).
 * Joint arrays have shape (n,) or (B, n).
 * An entry point returns None -- and computes nothing -- unless every array is a plain ndarray
 * (no subclass such as a masked array) of float64 in native byte order, aligned, C-contiguous,
 * of the expected shape and finite (safe_double below): the Python side then takes the checked
 * path of robodyn._value_checks, which raises the right error or converts the input. Twists are
 * (omega, v), wrenches (m, f).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")      /* small fixed loops (6 x 6) unrolled and vectorized */
#endif
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <numpy/arrayobject.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define D(a) ((const double *)PyArray_DATA(a))

typedef struct {
    double s[6];        /* joint screw at q, space frame */
    double Is[36];       /* link spatial inertia, space frame, row-major */
    double R[9], p[3];  /* P_i = exp([S_1] q_1) ... exp([S_i] q_i) */
} Link;

/* ---------------------------------------------------------------- spatial algebra */

static void cross3(const double *a, const double *b, double *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

static void mv6(const double *A, const double *x, double *o)      /* o = A x */
{
    for (int r = 0; r < 6; r++) {
        const double *a = A + 6 * r;
        o[r] = a[0] * x[0] + a[1] * x[1] + a[2] * x[2] + a[3] * x[3] + a[4] * x[4] + a[5] * x[5];
    }
}

static void ad(const double *V, const double *X, double *o)        /* o = ad_V X */
{
    double t[3];
    cross3(V, X, o);
    cross3(V, X + 3, o + 3);
    cross3(V + 3, X, t);
    o[3] += t[0]; o[4] += t[1]; o[5] += t[2];
}

static void cross_force(const double *V, const double *H, double *o)  /* o = -ad_V^T H */
{
    double t[3];
    cross3(V, H, o);
    cross3(V + 3, H + 3, t);
    o[0] += t[0]; o[1] += t[1]; o[2] += t[2];
    cross3(V, H + 3, o + 3);
}

static void admat(const double *V, double *A)                      /* A = ad_V (6x6) */
{
    const double *w = V, *v = V + 3;
    memset(A, 0, 36 * sizeof(double));
    for (int b = 0; b < 2; b++) {
        double *D = A + (3 * b) * 6 + 3 * b;         /* diagonal blocks [w] */
        D[1] = -w[2]; D[2] = w[1]; D[6] = w[2]; D[8] = -w[0]; D[12] = -w[1]; D[13] = w[0];
    }
    double *L = A + 18;                              /* lower-left block [v] */
    L[1] = -v[2]; L[2] = v[1]; L[6] = v[2]; L[8] = -v[0]; L[12] = -v[1]; L[13] = v[0];
}

/* ---------------------------------------------------------------- kinematics */

static void kinematics(int n, const double *basis, const double *K, const double *mass,
                       const double *q, Link *L)
{
    /* P = [R p; 0 1] kept as its top 3 x 4 rows (a rigid motion's last row is 0 0 0 1) */
    double P[12], E[12], T[12];
    for (int i = 0; i < n; i++) {
        const double *b = basis + 64 * i;
        double sn = sin(q[i]), cs = cos(q[i]), qi = q[i];
        for (int k = 0; k < 12; k++)
            E[k] = b[k] + sn * b[16 + k] + cs * b[32 + k] + qi * b[48 + k];
        if (i == 0) {
            memcpy(P, E, sizeof P);
        } else {
            for (int r = 0; r < 3; r++) {
                const double *Pr = P + 4 * r;
                for (int col = 0; col < 4; col++)
                    T[4 * r + col] = Pr[0] * E[col] + Pr[1] * E[4 + col] + Pr[2] * E[8 + col];
                T[4 * r + 3] += Pr[3];
            }
            memcpy(P, T, sizeof P);
        }
        /* X = P K_i (3 x 6): columns (w, 0), (R v, 0), (com, 1), principal axes (R A, 0);
         * the last row of K_i is (0, 0, 1, 0, 0, 0) */
        const double *Ki = K + 24 * i;
        double X[18];
        for (int r = 0; r < 3; r++) {
            const double *Pr = P + 4 * r;
            for (int col = 0; col < 6; col++)
                X[6 * r + col] = Pr[0] * Ki[col] + Pr[1] * Ki[6 + col] + Pr[2] * Ki[12 + col];
            X[6 * r + 2] += Pr[3];
        }
        Link *l = L + i;
        for (int r = 0; r < 3; r++) {
            for (int col = 0; col < 3; col++) l->R[3 * r + col] = P[4 * r + col];
            l->p[r] = P[4 * r + 3];
        }
        double w[3] = {X[0], X[6], X[12]}, pw[3], com[3] = {X[2], X[8], X[14]};
        cross3(l->p, w, pw);
        for (int r = 0; r < 3; r++) {
            l->s[r] = w[r];
            l->s[3 + r] = X[6 * r + 1] + pw[r];
        }
        /* I_o = [Ibar + m(|c|^2 1 - c c^T), m[c]; -m[c], m 1] about the space origin */
        double m = mass[i], mc[3] = {m * com[0], m * com[1], m * com[2]};
        double cc = mc[0] * com[0] + mc[1] * com[1] + mc[2] * com[2];
        double *Io = l->Is;
        for (int r = 0; r < 3; r++)
            for (int col = r; col < 3; col++) {
                const double *ar = X + 6 * r + 3, *ac = X + 6 * col + 3;
                double Ibar = ar[0] * ac[0] + ar[1] * ac[1] + ar[2] * ac[2];
                Io[6 * r + col] = Io[6 * col + r] = Ibar - mc[r] * com[col] + (r == col ? cc : 0.0);
                Io[6 * (3 + r) + 3 + col] = Io[6 * (3 + col) + 3 + r] = r == col ? m : 0.0;
            }
        double H[9] = {0, -mc[2], mc[1], mc[2], 0, -mc[0], -mc[1], mc[0], 0};
        for (int r = 0; r < 3; r++)
            for (int col = 0; col < 3; col++) {
                Io[6 * r + 3 + col] = H[3 * r + col];
                Io[6 * (3 + r) + col] = -H[3 * r + col];
            }
    }
}

/* The end-effector wrench (end-effector frame) in the space frame: Ad_{T_ee^-1}^T W. */
static void ee_wrench(const Link *last, const double *home, const double *W, double *o)
{
    double R[9], pe[3], f[3], m[3], t[3];
    for (int r = 0; r < 3; r++) {
        for (int col = 0; col < 3; col++)
            R[3 * r + col] = last->R[3 * r] * home[col] + last->R[3 * r + 1] * home[4 + col]
                             + last->R[3 * r + 2] * home[8 + col];
        pe[r] = last->R[3 * r] * home[3] + last->R[3 * r + 1] * home[7]
                + last->R[3 * r + 2] * home[11] + last->p[r];
    }
    for (int r = 0; r < 3; r++) {
        f[r] = R[3 * r] * W[3] + R[3 * r + 1] * W[4] + R[3 * r + 2] * W[5];
        m[r] = R[3 * r] * W[0] + R[3 * r + 1] * W[1] + R[3 * r + 2] * W[2];
    }
    cross3(pe, f, t);
    for (int r = 0; r < 3; r++) { o[r] = m[r] + t[r]; o[3 + r] = f[r]; }
}

/* ---------------------------------------------------------------- algorithms, one state */

/* Wee: the end-effector wrench in the space frame (ee_wrench), or NULL */
static void rnea(int n, const Link *L, const double *qd, const double *qdd, const double *g,
                 const double *Wee, double *V, double *A, double *F, double *tau)
{
    double sd[6], IV[6], cf[6];
    for (int i = 0; i < n; i++) {
        const double *s = L[i].s;
        double *Vi = V + 6 * i, *Ai = A + 6 * i;
        for (int k = 0; k < 6; k++) Vi[k] = (i ? V[6 * (i - 1) + k] : 0.0) + s[k] * qd[i];
        ad(Vi, s, sd);
        for (int k = 0; k < 6; k++)
            Ai[k] = (i ? A[6 * (i - 1) + k] : (k < 3 ? 0.0 : -g[k - 3]))
                    + s[k] * qdd[i] + sd[k] * qd[i];
        mv6(L[i].Is, Ai, F + 6 * i);
        mv6(L[i].Is, Vi, IV);
        cross_force(Vi, IV, cf);
        for (int k = 0; k < 6; k++) F[6 * i + k] += cf[k];
    }
    double acc[6] = {0, 0, 0, 0, 0, 0};
    if (Wee) memcpy(acc, Wee, sizeof acc);
    for (int i = n - 1; i >= 0; i--) {
        for (int k = 0; k < 6; k++) acc[k] += F[6 * i + k];
        tau[i] = dot6(L[i].s, acc);
    }
}

static void crba(int n, const Link *L, double *Ic, double *M)
{
    double Fj[6];
    for (int j = n - 1; j >= 0; j--) {
        for (int k = 0; k < 36; k++)
            Ic[36 * j + k] = L[j].Is[k] + (j < n - 1 ? Ic[36 * (j + 1) + k] : 0.0);
        mv6(Ic + 36 * j, L[j].s, Fj);
        for (int i = 0; i <= j; i++) M[n * i + j] = M[n * j + i] = dot6(L[i].s, Fj);
    }
}

static void coriolis(int n, const Link *L, const double *qd, double *work, double *C)
{
    /* work: V, sd (6n each), Ic, Icd (36n each), P, w, Ics, Icsd, Icds (6n each) */
    double *V = work, *sd = V + 6 * n, *Ic = sd + 6 * n, *Icd = Ic + 36 * n;
    double *P = Icd + 36 * n, *w = P + 6 * n, *Ics = w + 6 * n, *Icsd = Ics + 6 * n;
    double *Icds = Icsd + 6 * n;
    double adV[36], X[36], IV[6];
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 6; k++) V[6 * i + k] = (i ? V[6 * (i - 1) + k] : 0.0) + L[i].s[k] * qd[i];
        ad(V + 6 * i, L[i].s, sd + 6 * i);
    }
    for (int i = n - 1; i >= 0; i--) {
        admat(V + 6 * i, adV);
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 6; c++) {
                double x = 0.0;
                for (int k = 0; k < 6; k++) x += L[i].Is[6 * r + k] * adV[6 * k + c];
                X[6 * r + c] = x;
            }
        const int last = i == n - 1;
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 6; c++) {
                int k = 6 * r + c;
                Ic[36 * i + k] = L[i].Is[k] + (last ? 0.0 : Ic[36 * (i + 1) + k]);
                Icd[36 * i + k] = -(X[k] + X[6 * c + r]) + (last ? 0.0 : Icd[36 * (i + 1) + k]);
            }
        mv6(L[i].Is, V + 6 * i, IV);
        for (int k = 0; k < 6; k++) P[6 * i + k] = IV[k] + (last ? 0.0 : P[6 * (i + 1) + k]);
        double cf[6];
        cross_force(L[i].s, P + 6 * i, cf);
        for (int k = 0; k < 6; k++) w[6 * i + k] = -cf[k];           /* ad_{s_i}^T p_i */
        mv6(Ic + 36 * i, L[i].s, Ics + 6 * i);
        mv6(Ic + 36 * i, sd + 6 * i, Icsd + 6 * i);
        mv6(Icd + 36 * i, L[i].s, Icds + 6 * i);
    }
    /* C = Q + (K - Z + Z^T) / 2 */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double Q, K, Z = 0.0;
            if (i <= j) {
                Q = dot6(L[i].s, Icsd + 6 * j);
                K = dot6(L[i].s, Icds + 6 * j);
            } else {
                Q = dot6(Ics + 6 * i, sd + 6 * j);
                K = dot6(L[j].s, Icds + 6 * i);
            }
            if (i < j) Z -= dot6(L[i].s, w + 6 * j);
            else if (j < i) Z += dot6(L[j].s, w + 6 * i);
            C[n * i + j] = Q + 0.5 * (K + Z);
        }
}

/* Returns the pivots D (n) and qdd (n); the caller checks the pivots. */
static void aba(int n, const Link *L, const double *qd, const double *tau, const double *g,
                const double *Wee, double *work, double *qdd, double *D)
{
    double *V = work, *c = V + 6 * n, *pA = c + 6 * n, *U = pA + 6 * n, *u = U + 6 * n;
    double *IA = u + n;
    double sd[6], IV[6];
    for (int i = 0; i < n; i++) {
        const double *s = L[i].s;
        for (int k = 0; k < 6; k++) V[6 * i + k] = (i ? V[6 * (i - 1) + k] : 0.0) + s[k] * qd[i];
        ad(V + 6 * i, s, sd);
        for (int k = 0; k < 6; k++) c[6 * i + k] = sd[k] * qd[i];
        memcpy(IA + 36 * i, L[i].Is, 36 * sizeof(double));
        mv6(L[i].Is, V + 6 * i, IV);
        cross_force(V + 6 * i, IV, pA + 6 * i);
    }
    if (Wee)
        for (int k = 0; k < 6; k++) pA[6 * (n - 1) + k] += Wee[k];
    for (int i = n - 1; i >= 0; i--) {
        const double *s = L[i].s;
        double *Ui = U + 6 * i, *IAi = IA + 36 * i;
        mv6(IAi, s, Ui);
        double Di = dot6(s, Ui), ui = tau[i] - dot6(s, pA + 6 * i);
        D[i] = Di;
        u[i] = ui;
        if (i > 0 && Di > 0.0) {
            double Ia[36], t[6];
            for (int r = 0; r < 6; r++)
                for (int col = 0; col < 6; col++)
                    Ia[6 * r + col] = IAi[6 * r + col] - Ui[r] * Ui[col] / Di;
            for (int k = 0; k < 36; k++) IA[36 * (i - 1) + k] += Ia[k];
            mv6(Ia, c + 6 * i, t);
            for (int k = 0; k < 6; k++)
                pA[6 * (i - 1) + k] += pA[6 * i + k] + t[k] + Ui[k] * (ui / Di);
        }
    }
    double a[6] = {0, 0, 0, -g[0], -g[1], -g[2]};
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 6; k++) a[k] += c[6 * i + k];
        qdd[i] = D[i] > 0.0 ? (u[i] - dot6(U + 6 * i, a)) / D[i] : NAN;
        for (int k = 0; k < 6; k++) a[k] += L[i].s[k] * qdd[i];
    }
}

/* ---------------------------------------------------------------- Python entry points */

/* A plain ndarray of native-order, aligned, C-contiguous float64 (what robodyn._value_checks makes):
 * the only memory the engine reads. A big-endian '>f8' array is also NPY_DOUBLE, so the
 * byte-order test is what keeps 7e-319 out of the results. */
static int safe_double(PyObject *obj)
{
    if (!PyArray_CheckExact(obj)) return 0;
    PyArrayObject *a = (PyArrayObject *)obj;
    return PyArray_TYPE(a) == NPY_DOUBLE && PyArray_ISNOTSWAPPED(a) && PyArray_ISALIGNED(a)
           && PyArray_IS_C_CONTIGUOUS(a);
}

/* obj as a float64 C-contiguous finite array of ndim 1 or 2 whose last axis has `n`
 * entries (B = 1 for ndim 1); NULL (no exception) otherwise. Borrowed. */
static PyArrayObject *joint_array(PyObject *obj, int n, npy_intp *B, int *ndim)
{
    if (!safe_double(obj)) return NULL;
    PyArrayObject *a = (PyArrayObject *)obj;
    int nd = PyArray_NDIM(a);
    if (nd < 1 || nd > 2
        || PyArray_DIM(a, nd - 1) != n)
        return NULL;
    npy_intp b = nd == 2 ? PyArray_DIM(a, 0) : 1;
    if (b < 1) return NULL;
    if (*ndim) {
        if (nd != *ndim || b != *B) return NULL;
    } else {
        *ndim = nd;
        *B = b;
    }
    const double *x = (const double *)PyArray_DATA(a);
    for (npy_intp k = 0; k < b * n; k++)
        if (!isfinite(x[k])) return NULL;
    return a;
}

static const double *fixed(PyObject *obj, npy_intp size)
{
    if (!safe_double(obj)) return NULL;
    PyArrayObject *a = (PyArrayObject *)obj;
    if (PyArray_SIZE(a) != size)
        return NULL;
    const double *x = (const double *)PyArray_DATA(a);
    for (npy_intp k = 0; k < size; k++)
        if (!isfinite(x[k])) return NULL;
    return x;
}

/* a clean vector (ndim 1) of `size` numbers, or NULL */
static const double *vec(PyObject *obj, npy_intp size)
{
    if (!safe_double(obj) || PyArray_NDIM((PyArrayObject *)obj) != 1) return NULL;
    return fixed(obj, size);
}

typedef struct {
    int n;
    const double *basis, *K, *mass, *home;
} Chain;

/* robodyn's own error classes (robodyn.errors), looked up once by the module init: a refusal
 * of the engine is a RobodynError like every other refusal of the library, with the house
 * message "function: argument: expected ..., got ...". */
static PyObject *ArgumentError, *ArgumentTypeError;

static int load_errors(void)
{
    PyObject *m = PyImport_ImportModule("robodyn.errors");
    if (!m) return -1;
    ArgumentError = PyObject_GetAttrString(m, "ArgumentError");
    ArgumentTypeError = PyObject_GetAttrString(m, "ArgumentTypeError");
    Py_DECREF(m);
    return ArgumentError && ArgumentTypeError ? 0 : -1;
}

/* a real number argument (float or int, not bool) into *x; -1 with the library's error */
static int real_arg(PyObject *obj, const char *name, const char *arg, double *x)
{
    if (PyBool_Check(obj) || !(PyFloat_Check(obj) || PyLong_Check(obj))) {
        PyErr_Format(ArgumentTypeError, "engine.%s: %s: expected a real number, got %.100s",
                     name, arg, Py_TYPE(obj)->tp_name);
        return -1;
    }
    *x = PyFloat_AsDouble(obj);
    if (*x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(ArgumentError, "engine.%s: %s: expected a real number, got an integer "
                     "too large for a float", name, arg);
        return -1;
    }
    return 0;
}

/* args[0..3] = basis, K, mass, home; sets c; 0 on success, -1 with ArgumentTypeError if
 * malformed */
static int chain_of(PyObject *const *args, Chain *c)
{
    PyArrayObject *m = (PyArrayObject *)args[2];
    if (!PyArray_CheckExact(args[2]) || PyArray_NDIM(m) != 1) goto bad;
    c->n = (int)PyArray_DIM(m, 0);
    c->basis = fixed(args[0], 64 * (npy_intp)c->n);
    c->K = fixed(args[1], 24 * (npy_intp)c->n);
    c->mass = fixed(args[2], c->n);
    c->home = fixed(args[3], 16);
    if (c->n >= 1 && c->basis && c->K && c->mass && c->home) return 0;
bad:
    PyErr_SetString(ArgumentTypeError, "engine.chain: basis, K, mass, home: expected float64 "
                    "arrays of 64 n, 24 n, n (n >= 1) and 16 numbers, got malformed chain data");
    return -1;
}

/* The chain's constant data copied once into memory that Python cannot reach, behind a capsule
 * (the `chain` entry point): the per-call entry points then read it without checking it again. */
#define CHAIN_CAPSULE "robodyn.engine.chain"

typedef struct {
    Chain c;
    double data[];
} ChainCopy;

static void chain_free(PyObject *capsule)
{
    free(PyCapsule_GetPointer(capsule, CHAIN_CAPSULE));
}

/* chain(basis, K, mass, home) -> capsule; TypeError if the data are malformed */
static PyObject *py_chain(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Chain c;
    if (nargs != 4) {
        PyErr_Format(ArgumentTypeError, "engine.chain: arguments: expected 4 (basis, K, mass, "
                     "home), got %zd", nargs);
        return NULL;
    }
    if (chain_of(args, &c)) return NULL;
    size_t count = 64 * (size_t)c.n + 24 * (size_t)c.n + (size_t)c.n + 16;
    ChainCopy *h = malloc(sizeof(ChainCopy) + count * sizeof(double));
    if (!h) return PyErr_NoMemory();
    double *d = h->data;
    h->c.n = c.n;
    memcpy(d, c.basis, 64 * c.n * sizeof(double)); h->c.basis = d; d += 64 * c.n;
    memcpy(d, c.K, 24 * c.n * sizeof(double)); h->c.K = d; d += 24 * c.n;
    memcpy(d, c.mass, c.n * sizeof(double)); h->c.mass = d; d += c.n;
    memcpy(d, c.home, 16 * sizeof(double)); h->c.home = d;
    PyObject *cap = PyCapsule_New(h, CHAIN_CAPSULE, chain_free);
    if (!cap) free(h);
    return cap;
}

/* the chain behind a capsule made by py_chain; -1 with TypeError otherwise */
static int chain_handle(PyObject *obj, Chain *c, const char *name)
{
    if (PyCapsule_CheckExact(obj)) {
        ChainCopy *h = PyCapsule_GetPointer(obj, CHAIN_CAPSULE);
        if (h) { *c = h->c; return 0; }
        PyErr_Clear();
    }
    PyErr_Format(ArgumentTypeError, "engine.%s: chain: expected the chain handle of "
                 "engine.chain, got %.100s", name, Py_TYPE(obj)->tp_name);
    return -1;
}

static PyObject *new_array(int ndim, npy_intp B, int n, int square)
{
    npy_intp dims[3];
    int k = 0;
    if (ndim == 2) dims[k++] = B;
    dims[k++] = n;
    if (square) dims[k++] = n;
    return PyArray_SimpleNew(k, dims, NPY_DOUBLE);
}

/* wrench_ee: None, or (6,) / (B, 6) matching the joints' layout; 1 ok, 0 not fast */
static int wrench_of(PyObject *obj, int ndim, npy_intp B, const double **W)
{
    *W = NULL;
    if (obj == Py_None) return 1;
    if (!PyArray_CheckExact(obj)) return 0;
    PyArrayObject *a = (PyArrayObject *)obj;
    if (PyArray_NDIM(a) != ndim || (ndim == 2 && PyArray_DIM(a, 0) != B)) return 0;
    *W = fixed(obj, 6 * B);
    return *W != NULL;
}

/* What every entry point shares: the chain (args[0..3]), its joint arrays (args[4..]), the
 * batch layout, the output array and a scratch block of n links plus `work` doubles per joint. */
#define SMALL_N 12

typedef struct {
    Chain c;
    const double *J[3];
    npy_intp B;
    int n, nd;
    Link *L;
    double *work;
    PyObject *out;
    double small[SMALL_N * (sizeof(Link) / sizeof(double) + 128)];   /* n <= SMALL_N: no malloc */
} Call;

/* Checks the argument count and the chain, then takes `joints` joint arrays: 1 if they are
 * all clean, 0 if the engine declines them (the caller returns None), -1 with an exception. */
static int arity(Py_ssize_t nargs, int expected, const char *name)
{
    if (nargs == expected) return 0;
    PyErr_Format(ArgumentTypeError, "engine.%s: arguments: expected %d, got %zd", name,
                 expected, nargs);
    return -1;
}

static int begin(PyObject *const *args, Py_ssize_t nargs, int expected, const char *name,
                 int joints, Call *k)
{
    if (arity(nargs, expected, name) || chain_handle(args[0], &k->c, name)) return -1;
    k->n = k->c.n;
    k->nd = 0;
    k->B = 0;
    for (int i = 0; i < joints; i++) {
        PyArrayObject *a = joint_array(args[1 + i], k->n, &k->B, &k->nd);
        if (!a) return 0;
        k->J[i] = D(a);
    }
    return 1;
}

/* The output array ((B,) n or (B,) n x n) and the scratch block (work <= 128 doubles per
 * joint; on the stack for n <= SMALL_N); -1 with MemoryError. */
static int allocate(Call *k, int square, int work)
{
    k->out = new_array(k->nd, k->B, k->n, square);
    if (!k->out) return -1;
    k->L = k->n <= SMALL_N ? (Link *)k->small : malloc(k->n * (sizeof(Link) + work * sizeof(double)));
    if (!k->L) {
        Py_DECREF(k->out);
        PyErr_NoMemory();
        return -1;
    }
    k->work = (double *)(k->L + k->n);
    return 0;
}

static void release(Call *k)
{
    if (k->L != (Link *)k->small) free(k->L);
}

static double *out_data(Call *k) { return (double *)PyArray_DATA((PyArrayObject *)k->out); }

static int all_finite(const double *x, npy_intp size)
{
    for (npy_intp k = 0; k < size; k++)
        if (!isfinite(x[k])) return 0;
    return 1;
}

/* The output, or None when it overflowed (finite input, non-finite result): the numpy path
 * then computes it again and raises the error. */
static PyObject *finish(Call *k, int square)
{
    release(k);
    npy_intp size = k->B * k->n * (square ? k->n : 1);
    if (all_finite(out_data(k), size)) return k->out;
    Py_DECREF(k->out);
    Py_RETURN_NONE;
}

#define BEGIN(count, name, joints)                                   \
    Call k;                                                          \
    int ready = begin(args, nargs, count, name, joints, &k);         \
    if (ready < 0) return NULL;                                      \
    if (ready == 0) Py_RETURN_NONE;                                  \
    const int n = k.n

/* rnea(chain, q, qd, qdd, gravity, wrench_ee) -> tau or None */
static PyObject *py_rnea(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    BEGIN(6, "rnea", 3);
    const double *g = vec(args[4], 3), *W;
    if (!g || !wrench_of(args[5], k.nd, k.B, &W)) Py_RETURN_NONE;
    if (allocate(&k, 0, 18)) return NULL;
    double *V = k.work, *A = V + 6 * n, *F = A + 6 * n, We[6], *tau = out_data(&k);
    for (npy_intp b = 0; b < k.B; b++) {
        kinematics(n, k.c.basis, k.c.K, k.c.mass, k.J[0] + b * n, k.L);
        if (W) ee_wrench(k.L + n - 1, k.c.home, W + 6 * b, We);
        rnea(n, k.L, k.J[1] + b * n, k.J[2] + b * n, g, W ? We : NULL, V, A, F, tau + b * n);
    }
    return finish(&k, 0);
}

/* crba(chain, q) -> M or None */
static PyObject *py_crba(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    BEGIN(2, "crba", 1);
    if (allocate(&k, 1, 36)) return NULL;
    double *M = out_data(&k);
    for (npy_intp b = 0; b < k.B; b++) {
        kinematics(n, k.c.basis, k.c.K, k.c.mass, k.J[0] + b * n, k.L);
        crba(n, k.L, k.work, M + b * n * n);
    }
    return finish(&k, 1);
}

/* coriolis(chain, q, qd) -> C or None */
static PyObject *py_coriolis(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    BEGIN(3, "coriolis", 2);
    if (allocate(&k, 1, 114)) return NULL;
    double *C = out_data(&k);
    for (npy_intp b = 0; b < k.B; b++) {
        kinematics(n, k.c.basis, k.c.K, k.c.mass, k.J[0] + b * n, k.L);
        coriolis(n, k.L, k.J[1] + b * n, k.work, C + b * n * n);
    }
    return finish(&k, 1);
}

/* aba(chain, q, qd, tau, gravity, wrench_ee, cond_warn) -> qdd, or (qdd, D) if some state
 * has a vanishing pivot or a pivot ratio above cond_warn (the caller then raises or warns with
 * dynamics._check_pivots; D (B, n) are the pivots), or None */
static PyObject *py_aba(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    BEGIN(7, "aba", 3);
    const double *g = vec(args[4], 3), *W;
    double cond_warn;
    if (real_arg(args[6], "aba", "cond_warn", &cond_warn)) return NULL;
    if (!g || !wrench_of(args[5], k.nd, k.B, &W)) Py_RETURN_NONE;
    if (allocate(&k, 0, 61)) return NULL;
    double We[6], *qdd = out_data(&k), Dsmall[SMALL_N];
    double *Dp = k.B * n <= SMALL_N ? Dsmall : malloc(k.B * n * sizeof(double));
    if (!Dp) { release(&k); Py_DECREF(k.out); return PyErr_NoMemory(); }
    int flag = 0;
    for (npy_intp b = 0; b < k.B; b++) {
        double *Db = Dp + b * n;
        kinematics(n, k.c.basis, k.c.K, k.c.mass, k.J[0] + b * n, k.L);
        if (W) ee_wrench(k.L + n - 1, k.c.home, W + 6 * b, We);
        aba(n, k.L, k.J[1] + b * n, k.J[2] + b * n, g, W ? We : NULL, k.work, qdd + b * n, Db);
        double lo = Db[0], hi = Db[0];
        for (int i = 1; i < n; i++) {
            lo = Db[i] < lo ? Db[i] : lo;
            hi = Db[i] > hi ? Db[i] : hi;
        }
        if (!(lo > 1e-14 * hi) || hi / lo > cond_warn) flag = 1;
    }
    release(&k);
    PyObject *result = k.out;
    if (!all_finite(qdd, k.B * n)) {            /* overflow: the numpy path raises */
        if (Dp != Dsmall) free(Dp);
        Py_DECREF(k.out);
        Py_RETURN_NONE;
    }
    if (flag) {
        PyObject *piv = new_array(2, k.B, n, 0);
        result = piv ? Py_BuildValue("(NN)", k.out, piv) : NULL;
        if (piv) memcpy(PyArray_DATA((PyArrayObject *)piv), Dp, k.B * n * sizeof(double));
        else Py_DECREF(k.out);
    }
    if (Dp != Dsmall) free(Dp);
    return result;
}


/* ---------------------------------------------------------------- analytic derivatives
 *
 * The partial derivatives of inverse dynamics, d tau / d q and d tau / d qd, in the space frame
 * of _recursions.py (the world-frame recursions of Carpentier & Mansard 2018, RSS, "Analytical
 * derivatives of rigid body dynamics algorithms"), for a fixed base (nb = 0) or a floating or
 * planar base (nb = 6, 3; the base as the root body, robodyn.vehicle's formulation). Turning
 * joint j by dq_j carries every body outboard of j rigidly about s_j; what is not carried is
 * the inboard motion: the twist gains nu_j = ad_{V_{j-1}} s_j dq_j, the acceleration
 * psi_j = ad_{A_{j-1}} s_j + ad_{V_{j-1}} nu_j (per unit dq_j) plus ad_{nu_j}(V_l - V_{j-1}).
 * With the composite inertia Ic_i = sum_{l >= i} I_l and Bc_i = sum_{l >= i} B_l,
 * B_l = Idot_l + H(I_l V_l) (Idot = -ad_V^T I - I ad_V, H(h) x = -ad_x^T h), the columns are
 *   i <= j:  dtau_i/dq_j  = s_i . (-ad_{s_j}^T F_j + Ic_j psi_j + Bc_j nu_j)
 *   i >  j:  dtau_i/dq_j  = (Ic_i s_i) . psi_j + (Bc_i^T s_i) . nu_j
 *   i <= j:  dtau_i/dqd_j = s_i . (2 Ic_j nu_j + Bc_j s_j)
 *   i >  j:  dtau_i/dqd_j = 2 (Ic_i s_i) . nu_j + (Bc_i^T s_i) . s_j
 * (F_j = sum_{l >= j} f_l, the wrench the joint carries). The base, as a root: a change of its
 * pose carries every body, so only gravity, the fictitious acceleration a_g = (0, -g_b), is
 * not carried: alpha_k = ad_{a_g} sigma_k (sigma_k = S_b e_k); a change of its velocity adds
 * sigma_k to every twist and nu'_k = ad_{t_0} sigma_k to every acceleration. */

static void base_twist(int nb, const double *Sb, const double *v, double *t);
static void base_rows(int nb, const double *Sb, const double *f, double *o);

static void inertia_rate(const double *In, const double *V, const double *h, double *B)
{
    /* B = -(I ad_V) - (I ad_V)^T + H(h), H(h) = [[-[m], -[f]], [-[f], 0]] for h = (m, f) */
    double adV[36], X[36];
    admat(V, adV);
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++) {
            double x = 0.0;
            for (int k = 0; k < 6; k++) x += In[6 * r + k] * adV[6 * k + c];
            X[6 * r + c] = x;
        }
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++) B[6 * r + c] = -(X[6 * r + c] + X[6 * c + r]);
    const double *mo = h, *f = h + 3;
    double Hm[9] = {0, mo[2], -mo[1], -mo[2], 0, mo[0], mo[1], -mo[0], 0};   /* -[m] */
    double Hf[9] = {0, f[2], -f[1], -f[2], 0, f[0], f[1], -f[0], 0};         /* -[f] */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            B[6 * r + c] += Hm[3 * r + c];
            B[6 * r + 3 + c] += Hf[3 * r + c];
            B[6 * (3 + r) + c] += Hf[3 * r + c];
        }
}

static void mtv6(const double *A, const double *x, double *o)     /* o = A^T x */
{
    for (int c = 0; c < 6; c++) {
        double y = 0.0;
        for (int r = 0; r < 6; r++) y += A[6 * r + c] * x[r];
        o[c] = y;
    }
}

#define DERIV_WORK 156       /* doubles per joint of scratch for rnea_derivatives */

/* dq, dqd: (nb + n) x (nb + n), row-major. v, vd: base twist and its rate (nb), ignored when
 * nb = 0; g: gravity in the frame of the chain (space frame, or {b} for a base). */
static void rnea_derivatives(int n, int nb, const Link *L, const double *Sb, const double *Ib,
                             const double *v, const double *vd, const double *qd,
                             const double *qdd, const double *g, double *work, double *dq,
                             double *dqd)
{
    const int m = nb + n;
    double *nu = work, *psi = nu + 6 * n, *F = psi + 6 * n, *Ps = F + 6 * n, *Qs = Ps + 6 * n;
    double *w = Qs + 6 * n, *z = w + 6 * n, *Ic = z + 6 * n, *Bc = Ic + 36 * n;
    double ag[6] = {0, 0, 0, -g[0], -g[1], -g[2]}, t0[6] = {0, 0, 0, 0, 0, 0}, a[6];
    if (nb) {
        base_twist(nb, Sb, v, t0);
        base_twist(nb, Sb, vd, a);
        for (int k = 0; k < 6; k++) a[k] += ag[k];
    } else {
        memcpy(a, ag, sizeof a);
    }
    double Vp[6], Ap[6], alpha[6], t[6], h[6], cf[6];
    memcpy(Vp, t0, sizeof Vp);
    memcpy(Ap, a, sizeof Ap);
    for (int i = 0; i < n; i++) {
        const double *s = L[i].s, *Ii = L[i].Is;
        double *nui = nu + 6 * i, *psii = psi + 6 * i, *Fi = F + 6 * i;
        ad(Vp, s, nui);
        ad(Ap, s, alpha);
        ad(Vp, nui, t);
        for (int k = 0; k < 6; k++) {
            psii[k] = alpha[k] + t[k];
            Vp[k] += s[k] * qd[i];
            Ap[k] += s[k] * qdd[i] + nui[k] * qd[i];
        }
        mv6(Ii, Vp, h);
        mv6(Ii, Ap, Fi);
        cross_force(Vp, h, cf);
        for (int k = 0; k < 6; k++) Fi[k] += cf[k];
        inertia_rate(Ii, Vp, h, Bc + 36 * i);
        memcpy(Ic + 36 * i, Ii, 36 * sizeof(double));
    }
    for (int i = n - 2; i >= 0; i--) {
        for (int k = 0; k < 36; k++) {
            Ic[36 * i + k] += Ic[36 * (i + 1) + k];
            Bc[36 * i + k] += Bc[36 * (i + 1) + k];
        }
        for (int k = 0; k < 6; k++) F[6 * i + k] += F[6 * (i + 1) + k];
    }
    for (int i = 0; i < n; i++) {
        const double *s = L[i].s, *Ici = Ic + 36 * i, *Bci = Bc + 36 * i;
        double *wi = w + 6 * i, *zi = z + 6 * i, x1[6], x2[6];
        mv6(Ici, s, Ps + 6 * i);
        mtv6(Bci, s, Qs + 6 * i);
        cross_force(s, F + 6 * i, wi);
        mv6(Ici, psi + 6 * i, x1);
        mv6(Bci, nu + 6 * i, x2);
        for (int k = 0; k < 6; k++) wi[k] += x1[k] + x2[k];
        mv6(Ici, nu + 6 * i, x1);
        mv6(Bci, s, x2);
        for (int k = 0; k < 6; k++) zi[k] = 2.0 * x1[k] + x2[k];
    }
    for (int i = 0; i < n; i++) {
        double *rq = dq + m * (nb + i) + nb, *rqd = dqd + m * (nb + i) + nb;
        const double *s = L[i].s, *P = Ps + 6 * i, *Q = Qs + 6 * i;
        for (int j = 0; j < n; j++) {
            if (i <= j) {
                rq[j] = dot6(s, w + 6 * j);
                rqd[j] = dot6(s, z + 6 * j);
            } else {
                rq[j] = dot6(P, psi + 6 * j) + dot6(Q, nu + 6 * j);
                rqd[j] = 2.0 * dot6(P, nu + 6 * j) + dot6(Q, L[j].s);
            }
        }
    }
    if (!nb) return;
    double Icb[36], Bcb[36], sig[6], al[6], nup[6], x1[6], x2[6], y[6];
    mv6(Ib, t0, h);
    inertia_rate(Ib, t0, h, Bcb);
    for (int k = 0; k < 36; k++) {
        Icb[k] = Ib[k] + (n ? Ic[k] : 0.0);
        Bcb[k] += n ? Bc[k] : 0.0;
    }
    for (int j = 0; j < n; j++) {                    /* base rows, joint columns */
        base_rows(nb, Sb, w + 6 * j, y);
        for (int r = 0; r < nb; r++) dq[m * r + nb + j] = y[r];
        base_rows(nb, Sb, z + 6 * j, y);
        for (int r = 0; r < nb; r++) dqd[m * r + nb + j] = y[r];
    }
    for (int c = 0; c < nb; c++) {                   /* base columns */
        for (int k = 0; k < 6; k++) sig[k] = Sb[nb * k + c];
        ad(ag, sig, al);
        ad(t0, sig, nup);
        for (int i = 0; i < n; i++) {
            dq[m * (nb + i) + c] = dot6(Ps + 6 * i, al);
            dqd[m * (nb + i) + c] = dot6(Ps + 6 * i, nup) + dot6(Qs + 6 * i, sig);
        }
        mv6(Icb, al, x1);
        base_rows(nb, Sb, x1, y);
        for (int r = 0; r < nb; r++) dq[m * r + c] = y[r];
        mv6(Icb, nup, x1);
        mv6(Bcb, sig, x2);
        for (int k = 0; k < 6; k++) x1[k] += x2[k];
        base_rows(nb, Sb, x1, y);
        for (int r = 0; r < nb; r++) dqd[m * r + c] = y[r];
    }
}

/* The Cholesky factor L (A = L L^T) of a symmetric positive definite m x m matrix A, in the
 * lower triangle of A (row-major); -1 if A is not positive definite. */
static int chol_factor(int m, double *A)
{
    for (int j = 0; j < m; j++) {
        double d = A[m * j + j];
        for (int k = 0; k < j; k++) d -= A[m * j + k] * A[m * j + k];
        if (!(d > 0.0)) return -1;
        d = sqrt(d);
        A[m * j + j] = d;
        for (int i = j + 1; i < m; i++) {
            double x = A[m * i + j];
            for (int k = 0; k < j; k++) x -= A[m * i + k] * A[m * j + k];
            A[m * i + j] = x / d;
        }
    }
    return 0;
}

/* The inverse of a symmetric positive definite m x m matrix A (row-major; A is overwritten by
 * its Cholesky factor) into Ainv; -1 if A is not positive definite. */
static int spd_inverse(int m, double *A, double *Ainv)
{
    if (chol_factor(m, A)) return -1;
    /* Linv (lower) into the upper-left of Ainv row by row, then Ainv = Linv^T Linv */
    double *Li = Ainv;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) Li[m * i + j] = 0.0;
    for (int c = 0; c < m; c++) {                    /* column c of Linv: L x = e_c */
        for (int i = c; i < m; i++) {
            double x = i == c ? 1.0 : 0.0;
            for (int k = c; k < i; k++) x -= A[m * i + k] * Li[m * k + c];
            Li[m * i + c] = x / A[m * i + i];
        }
    }
    /* in place: (Linv^T Linv)_{ij} = sum_{k >= max(i,j)} Li_{ki} Li_{kj}; fill the upper
     * triangle into A (free now), then copy */
    for (int i = 0; i < m; i++)
        for (int j = i; j < m; j++) {
            double x = 0.0;
            for (int k = j; k < m; k++) x += Li[m * k + i] * Li[m * k + j];
            A[m * i + j] = x;
        }
    for (int i = 0; i < m; i++)
        for (int j = i; j < m; j++) Ainv[m * i + j] = Ainv[m * j + i] = A[m * i + j];
    return 0;
}

/* o = -Minv D (m x m), all row-major */
static void neg_product(int m, const double *Minv, const double *D, double *o)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double x = 0.0;
            for (int k = 0; k < m; k++) x += Minv[m * i + k] * D[m * k + j];
            o[m * i + j] = -x;
        }
}

static PyObject *square_out(int m, double **data)
{
    npy_intp dims[2] = {m, m};
    PyObject *o = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (o) *data = (double *)PyArray_DATA((PyArrayObject *)o);
    return o;
}

/* The tuple of derivative matrices, or None if one overflowed (then the numpy path raises) */
static PyObject *finite_or_none(PyObject *t)
{
    if (!t) return NULL;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(t); k++) {
        PyArrayObject *a = (PyArrayObject *)PyTuple_GET_ITEM(t, k);
        if (!all_finite((const double *)PyArray_DATA(a), PyArray_SIZE(a))) {
            Py_DECREF(t);
            Py_RETURN_NONE;
        }
    }
    return t;
}

/* The derivative results: two or three new m x m arrays; NULL with MemoryError */
static PyObject *matrices(int count, int m, double **p)
{
    PyObject *t = PyTuple_New(count);
    if (!t) return NULL;
    for (int k = 0; k < count; k++) {
        PyObject *o = square_out(m, p + k);
        if (!o) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, k, o);
    }
    return t;
}

/* scratch of the derivative entry points: links, DERIV_WORK n, the ABA's 62 n, and 3 m^2 */
static double *deriv_scratch(int n, int m, double *small, size_t small_size, Link **L)
{
    size_t bytes = n * (sizeof(Link) + (DERIV_WORK + 62) * sizeof(double))
                   + 3 * (size_t)m * m * sizeof(double);
    double *buf = bytes <= small_size ? small : malloc(bytes);
    if (!buf) { PyErr_NoMemory(); return NULL; }
    *L = (Link *)buf;
    return (double *)(*L + n);
}

#define DERIV_SMALL (8 * (sizeof(Link) / sizeof(double) + DERIV_WORK + 62) + 3 * 14 * 14)

/* rnea_derivatives(chain, q, qd, qdd, gravity) -> (dtau_dq, dtau_dqd) or None; one state */
static PyObject *py_rnea_derivatives(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Chain c;
    if (arity(nargs, 5, "rnea_derivatives") || chain_handle(args[0], &c, "rnea_derivatives"))
        return NULL;
    const int n = c.n;
    const double *q = vec(args[1], n), *qd = vec(args[2], n), *qdd = vec(args[3], n);
    const double *g = vec(args[4], 3);
    if (!q || !qd || !qdd || !g) Py_RETURN_NONE;
    double small[DERIV_SMALL], *p[2];
    Link *L;
    double *work = deriv_scratch(n, n, small, sizeof small, &L);
    if (!work) return NULL;
    PyObject *out = matrices(2, n, p);
    if (out) {
        kinematics(n, c.basis, c.K, c.mass, q, L);
        rnea_derivatives(n, 0, L, NULL, NULL, NULL, NULL, qd, qdd, g, work, p[0], p[1]);
    }
    if ((double *)L != small) free(L);
    return finite_or_none(out);
}

/* aba_derivatives(chain, q, qd, tau, gravity) -> (dqdd_dq, dqdd_dqd, Minv) or None (also when
 * a pivot of M vanishes: the numpy path then raises); one state. qdd by the ABA, the RNEA
 * derivatives at (q, qd, qdd), Minv by Cholesky: dqdd/dq = -Minv dtau/dq, dqdd/dqd =
 * -Minv dtau/dqd, dqdd/dtau = Minv. */
static PyObject *py_aba_derivatives(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Chain c;
    if (arity(nargs, 5, "aba_derivatives") || chain_handle(args[0], &c, "aba_derivatives"))
        return NULL;
    const int n = c.n;
    const double *q = vec(args[1], n), *qd = vec(args[2], n), *tau = vec(args[3], n);
    const double *g = vec(args[4], 3);
    if (!q || !qd || !tau || !g) Py_RETURN_NONE;
    double small[DERIV_SMALL], *p[3];
    Link *L;
    double *work = deriv_scratch(n, n, small, sizeof small, &L);
    if (!work) return NULL;
    double *abaw = work + DERIV_WORK * n, *M = abaw + 62 * n, *dq = M + n * n, *dqd = dq + n * n;
    double *qdd = abaw + 61 * n, *D = M;                    /* D: pivots, before M is made */
    PyObject *out = NULL;
    kinematics(n, c.basis, c.K, c.mass, q, L);
    aba(n, L, qd, tau, g, NULL, abaw, qdd, D);
    int ok = 1;
    double lo = D[0], hi = D[0];
    for (int i = 1; i < n; i++) { lo = D[i] < lo ? D[i] : lo; hi = D[i] > hi ? D[i] : hi; }
    if (!(lo > 1e-14 * hi)) ok = 0;
    if (ok) {
        rnea_derivatives(n, 0, L, NULL, NULL, NULL, NULL, qd, qdd, g, work, dq, dqd);
        out = matrices(3, n, p);
        if (out) {
            crba(n, L, abaw, M);                            /* Ic scratch: 36 n <= 62 n */
            if (spd_inverse(n, M, p[2])) { Py_DECREF(out); out = NULL; ok = 0; }
            else {
                neg_product(n, p[2], dq, p[0]);
                neg_product(n, p[2], dqd, p[1]);
            }
        }
    }
    if ((double *)L != small) free(L);
    if (!ok) Py_RETURN_NONE;
    return finite_or_none(out);
}

/* ---------------------------------------------------------------- vehicle-manipulator systems
 *
 * A base body whose body twist is S_b v (S_b: 6 x nb, row-major; nb = 6 floating, 3 planar)
 * carrying the arm, everything in the base frame {b} taken as momentarily inertial (the
 * formulation of robodyn.vehicle): the chain data are the arm's *mounted* chain (screws and
 * homes already in {b}), so kinematics() gives the joint screws s_i and link inertias in {b}.
 * The base's acceleration is S_b v' (ad_V V = 0), gravity is the fictitious acceleration
 * (0, -g_b) of every body, g_b = R^T g. Outputs are ordered (base part nb, joints n). */

/* Solves A x = b for a symmetric positive definite m x m A (row-major, overwritten), b in
 * place; -1 if A is not positive definite. */
static int chol_solve(int m, double *A, double *b)
{
    if (chol_factor(m, A)) return -1;
    for (int i = 0; i < m; i++) {
        for (int k = 0; k < i; k++) b[i] -= A[m * i + k] * b[k];
        b[i] /= A[m * i + i];
    }
    for (int i = m - 1; i >= 0; i--) {
        for (int k = i + 1; k < m; k++) b[i] -= A[m * k + i] * b[k];
        b[i] /= A[m * i + i];
    }
    return 0;
}

static void base_twist(int nb, const double *Sb, const double *v, double *t)   /* t = S_b v */
{
    for (int k = 0; k < 6; k++) {
        double x = 0.0;
        for (int j = 0; j < nb; j++) x += Sb[nb * k + j] * v[j];
        t[k] = x;
    }
}

static void base_rows(int nb, const double *Sb, const double *f, double *o)   /* o = S_b^T f */
{
    for (int j = 0; j < nb; j++) {
        double x = 0.0;
        for (int k = 0; k < 6; k++) x += Sb[nb * k + j] * f[k];
        o[j] = x;
    }
}

/* Forward dynamics (articulated bodies with the base as root): out = (v', q'') from
 * (v, qd, w, tau), gb the gravity in {b} (or NULL). work: 62 n doubles. 0, or -1 when a pivot
 * or the base's articulated inertia is not positive (the caller then declines). */
static int vms_aba(int n, int nb, const Link *L, const double *Sb, const double *Ib,
                   const double *v, const double *qd, const double *w, const double *tau,
                   const double *gb, double *work, double *out)
{
    double *V = work, *c = V + 6 * n, *pA = c + 6 * n, *U = pA + 6 * n, *u = U + 6 * n;
    double *D = u + n, *IA = D + n;
    double t0[6], IAb[36], pAb[6], IV[6], sd[6];
    base_twist(nb, Sb, v, t0);
    for (int i = 0; i < n; i++) {
        const double *s = L[i].s, *prev = i ? V + 6 * (i - 1) : t0;
        double *Vi = V + 6 * i;
        for (int k = 0; k < 6; k++) Vi[k] = prev[k] + s[k] * qd[i];
        ad(Vi, s, sd);
        for (int k = 0; k < 6; k++) c[6 * i + k] = sd[k] * qd[i];
        memcpy(IA + 36 * i, L[i].Is, 36 * sizeof(double));
        mv6(L[i].Is, Vi, IV);
        cross_force(Vi, IV, pA + 6 * i);
    }
    memcpy(IAb, Ib, sizeof IAb);
    mv6(Ib, t0, IV);
    cross_force(t0, IV, pAb);
    for (int i = n - 1; i >= 0; i--) {
        const double *s = L[i].s;
        double *Ui = U + 6 * i, *IAi = IA + 36 * i;
        mv6(IAi, s, Ui);
        double Di = dot6(s, Ui), ui = tau[i] - dot6(s, pA + 6 * i);
        if (!(Di > 0.0)) return -1;
        D[i] = Di;
        u[i] = ui;
        double Ia[36], t[6];
        for (int r = 0; r < 6; r++)
            for (int col = 0; col < 6; col++)
                Ia[6 * r + col] = IAi[6 * r + col] - Ui[r] * Ui[col] / Di;
        double *IAp = i ? IA + 36 * (i - 1) : IAb, *pAp = i ? pA + 6 * (i - 1) : pAb;
        for (int k = 0; k < 36; k++) IAp[k] += Ia[k];
        mv6(Ia, c + 6 * i, t);
        for (int k = 0; k < 6; k++) pAp[k] += pA[6 * i + k] + t[k] + Ui[k] * (ui / Di);
    }
    /* the base: S^T IA S v' = w - S^T (pA - IA g^), a = S v' - g^, g^ = (0, g_b) */
    double gh[6] = {0, 0, 0, gb ? gb[0] : 0.0, gb ? gb[1] : 0.0, gb ? gb[2] : 0.0};
    double A[36], SI[36], r[6], f[6], a[6];
    for (int j = 0; j < nb; j++)
        for (int k = 0; k < 6; k++) {
            double x = 0.0;
            for (int l = 0; l < 6; l++) x += Sb[nb * l + j] * IAb[6 * l + k];
            SI[6 * j + k] = x;
        }
    for (int j = 0; j < nb; j++)
        for (int l = 0; l < nb; l++) {
            double x = 0.0;
            for (int k = 0; k < 6; k++) x += SI[6 * j + k] * Sb[nb * k + l];
            A[nb * j + l] = x;
        }
    mv6(IAb, gh, IV);
    for (int k = 0; k < 6; k++) f[k] = pAb[k] - IV[k];
    base_rows(nb, Sb, f, r);
    for (int j = 0; j < nb; j++) r[j] = w[j] - r[j];
    if (chol_solve(nb, A, r)) return -1;
    base_twist(nb, Sb, r, a);
    for (int k = 0; k < 6; k++) a[k] -= gh[k];
    memcpy(out, r, nb * sizeof(double));
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 6; k++) a[k] += c[6 * i + k];
        double qdd = (u[i] - dot6(U + 6 * i, a)) / D[i];
        for (int k = 0; k < 6; k++) a[k] += L[i].s[k] * qdd;
        out[nb + i] = qdd;
    }
    return 0;
}

/* Inverse dynamics: out = (w, tau) from (v, qd, v', q''); vd, qdd NULL for zero, gb NULL
 * for no gravity. work: 6 n doubles. */
static void vms_rnea(int n, int nb, const Link *L, const double *Sb, const double *Ib,
                     const double *v, const double *qd, const double *vd, const double *qdd,
                     const double *gb, double *work, double *out)
{
    double *F = work, t[6], a[6], fb[6], IV[6], cf[6], sd[6], acc[6] = {0, 0, 0, 0, 0, 0};
    base_twist(nb, Sb, v, t);
    if (vd) base_twist(nb, Sb, vd, a);
    else memset(a, 0, sizeof a);
    if (gb)
        for (int k = 0; k < 3; k++) a[3 + k] -= gb[k];
    mv6(Ib, a, fb);
    mv6(Ib, t, IV);
    cross_force(t, IV, cf);
    for (int k = 0; k < 6; k++) fb[k] += cf[k];
    for (int i = 0; i < n; i++) {
        const double *s = L[i].s;
        for (int k = 0; k < 6; k++) t[k] += s[k] * qd[i];
        ad(t, s, sd);
        for (int k = 0; k < 6; k++) a[k] += sd[k] * qd[i] + (qdd ? s[k] * qdd[i] : 0.0);
        mv6(L[i].Is, a, F + 6 * i);
        mv6(L[i].Is, t, IV);
        cross_force(t, IV, cf);
        for (int k = 0; k < 6; k++) F[6 * i + k] += cf[k];
    }
    for (int i = n - 1; i >= 0; i--) {
        for (int k = 0; k < 6; k++) acc[k] += F[6 * i + k];
        out[nb + i] = dot6(L[i].s, acc);
    }
    for (int k = 0; k < 6; k++) acc[k] += fb[k];
    base_rows(nb, Sb, acc, out);
}

/* The locked mass matrix (nb + n) x (nb + n) by composite bodies. work: 6 n doubles. */
static void vms_crba(int n, int nb, const Link *L, const double *Sb, const double *Ib,
                     double *work, double *M)
{
    const int m = nb + n;
    double *F = work, Ic[36], Mb[36], col[6];
    memset(Ic, 0, sizeof Ic);
    for (int j = n - 1; j >= 0; j--) {
        for (int k = 0; k < 36; k++) Ic[k] += L[j].Is[k];
        mv6(Ic, L[j].s, F + 6 * j);
        for (int i = 0; i <= j; i++) M[m * (nb + i) + nb + j] = M[m * (nb + j) + nb + i] =
            dot6(L[i].s, F + 6 * j);
        base_rows(nb, Sb, F + 6 * j, col);
        for (int a = 0; a < nb; a++) M[m * a + nb + j] = M[m * (nb + j) + a] = col[a];
    }
    for (int k = 0; k < 36; k++) Mb[k] = Ib[k] + (n ? Ic[k] : 0.0);
    for (int b = 0; b < nb; b++) {
        double Sc[6], MS[6];
        for (int k = 0; k < 6; k++) Sc[k] = Sb[nb * k + b];
        mv6(Mb, Sc, MS);
        base_rows(nb, Sb, MS, col);
        for (int a = 0; a < nb; a++) M[m * a + b] = col[a];
    }
}

/* The kinetic co-energy H = 1/2 m^T M^-1 m of the momenta m = (p, pi) and its gradient
 * (nu_b, -dT/dq, nu_q) with nu = M^-1 m (zero-velocity articulated bodies) and
 * dT/dq_k = h_k . ad_{t_k} s_k, h_k = sum_{i >= k} I_i t_i. work: 64 n + 6 doubles. -1 as vms_aba. */
static int vms_hamiltonian(int n, int nb, const Link *L, const double *Sb, const double *Ib,
                           const double *m, double *work, double *grad, double *E)
{
    double zero[6] = {0, 0, 0, 0, 0, 0};
    double *qz = work + 62 * n, *buf = qz + n;     /* n zeros, then nu (nb + n) */
    memset(qz, 0, n * sizeof(double));
    int bad = vms_aba(n, nb, L, Sb, Ib, zero, qz, m, m + nb, NULL, work, buf);
    if (!bad) {
        double t[6], IV[6], sd[6], h[6] = {0, 0, 0, 0, 0, 0};
        double *T = work;                   /* twists t_i, 6 n */
        base_twist(nb, Sb, buf, t);
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < 6; k++) t[k] += L[i].s[k] * buf[nb + i];
            memcpy(T + 6 * i, t, sizeof t);
        }
        for (int i = n - 1; i >= 0; i--) {
            mv6(L[i].Is, T + 6 * i, IV);
            for (int k = 0; k < 6; k++) h[k] += IV[k];
            ad(T + 6 * i, L[i].s, sd);
            grad[nb + i] = -dot6(h, sd);
        }
        double e = 0.0;
        for (int j = 0; j < nb + n; j++) e += m[j] * buf[j];
        *E = 0.5 * e;
        memcpy(grad, buf, nb * sizeof(double));
        memcpy(grad + nb + n, buf + nb, n * sizeof(double));
    }
    return bad;
}

/* Entry points: args = (basis, K, mass, home, Sb (6, nb), Ib (6, 6), ...), or the same with the
 * chain handle of `chain` in place of the four arrays; one state. The entry points read their
 * arguments through A, laid out as in the first form (A[4] = Sb, A[6] = the first array). */
typedef struct {
    Chain c;
    PyObject *const *A;          /* the arguments, laid out as with the four chain arrays */
    PyObject *argv[16];          /* that layout, when a handle came (expected <= 12) */
    int n, nb;
    const double *Sb, *Ib;
    Link *L;
    double *work;
    double small[16 * (sizeof(Link) / sizeof(double) + 64) + 64];   /* n <= 16: no malloc */
} VCall;

/* 1 ready (the chain and base are clean and the scratch allocated), 0 declined, -1 error */
static int vms_begin(PyObject *const *args, Py_ssize_t nargs, int expected, const char *name,
                     VCall *k)
{
    if (nargs >= 1 && PyCapsule_CheckExact(args[0])) {      /* the handle: one slot, not four */
        if (arity(nargs + 3, expected, name) || chain_handle(args[0], &k->c, name)) return -1;
        for (int i = 0; i < 4; i++) k->argv[i] = args[0];
        for (Py_ssize_t i = 1; i < nargs; i++) k->argv[i + 3] = args[i];
        args = k->argv;
    } else if (arity(nargs, expected, name) || chain_of(args, &k->c)) {
        return -1;
    }
    k->A = args;
    k->n = k->c.n;
    if (!safe_double(args[4]) || PyArray_NDIM((PyArrayObject *)args[4]) != 2
        || PyArray_DIM((PyArrayObject *)args[4], 0) != 6) return 0;
    k->nb = (int)PyArray_DIM((PyArrayObject *)args[4], 1);
    if (k->nb < 1 || k->nb > 6) return 0;
    k->Sb = fixed(args[4], 6 * k->nb);
    k->Ib = fixed(args[5], 36);
    if (!k->Sb || !k->Ib) return 0;
    size_t bytes = k->n * (sizeof(Link) + 64 * sizeof(double)) + 64 * sizeof(double);
    k->L = bytes <= sizeof k->small ? (Link *)k->small : malloc(bytes);
    if (!k->L) { PyErr_NoMemory(); return -1; }
    k->work = (double *)(k->L + k->n);
    return 1;
}

static void vms_end(VCall *k)
{
    if (k->L != (Link *)k->small) free(k->L);
}

static PyObject *vector_out(npy_intp size, double **data)
{
    PyObject *o = PyArray_SimpleNew(1, &size, NPY_DOUBLE);
    if (o) *data = (double *)PyArray_DATA((PyArrayObject *)o);
    return o;
}

#define VBEGIN(count, name)                                          \
    VCall k;                                                         \
    int ready = vms_begin(args, nargs, count, name, &k);             \
    if (ready < 0) return NULL;                                      \
    if (ready == 0) Py_RETURN_NONE;                                  \
    const int n = k.n, nb = k.nb;                                    \
    PyObject *const *A = k.A;                                        \
    PyObject *result = NULL

#define VDECLINE { vms_end(&k); Py_XDECREF(result); Py_RETURN_NONE; }

/* vms_crba(..., q) -> M or None */
static PyObject *py_vms_crba(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    VBEGIN(7, "vms_crba");
    const double *q = vec(A[6], n);
    if (!q) VDECLINE;
    npy_intp dims[2] = {nb + n, nb + n};
    result = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (result) {
        kinematics(n, k.c.basis, k.c.K, k.c.mass, q, k.L);
        vms_crba(n, nb, k.L, k.Sb, k.Ib, k.work, (double *)PyArray_DATA((PyArrayObject *)result));
    }
    vms_end(&k);
    return result;
}

/* vms_rnea(..., q, v, qd, vd, qdd, gb) -> (w, tau) or None; vd, qdd, gb may be None */
static PyObject *py_vms_rnea(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    VBEGIN(12, "vms_rnea");
    const double *q = vec(A[6], n), *v = vec(A[7], nb), *qd = vec(A[8], n);
    const double *vd = A[9] == Py_None ? NULL : vec(A[9], nb);
    const double *qdd = A[10] == Py_None ? NULL : vec(A[10], n);
    const double *gb = A[11] == Py_None ? NULL : vec(A[11], 3);
    if (!q || !v || !qd || (A[9] != Py_None && !vd) || (A[10] != Py_None && !qdd)
        || (A[11] != Py_None && !gb)) VDECLINE;
    double *o;
    result = vector_out(nb + n, &o);
    if (result) {
        kinematics(n, k.c.basis, k.c.K, k.c.mass, q, k.L);
        vms_rnea(n, nb, k.L, k.Sb, k.Ib, v, qd, vd, qdd, gb, k.work, o);
    }
    vms_end(&k);
    return result;
}

/* vms_aba(..., q, v, qd, w, tau, gb) -> (v', q'') or None; gb may be None */
static PyObject *py_vms_aba(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    VBEGIN(12, "vms_aba");
    const double *q = vec(A[6], n), *v = vec(A[7], nb), *qd = vec(A[8], n);
    const double *w = vec(A[9], nb), *tau = vec(A[10], n);
    const double *gb = A[11] == Py_None ? NULL : vec(A[11], 3);
    if (!q || !v || !qd || !w || !tau || (A[11] != Py_None && !gb)) VDECLINE;
    double *o;
    result = vector_out(nb + n, &o);
    if (result) {
        kinematics(n, k.c.basis, k.c.K, k.c.mass, q, k.L);
        if (vms_aba(n, nb, k.L, k.Sb, k.Ib, v, qd, w, tau, gb, k.work, o)) VDECLINE;
    }
    vms_end(&k);
    return result;
}

/* vms_rhs(..., x, w, tau, g) -> dx/dt of the StandardForm state (R 9, p 3, v, q, qd), or
 * None; g (space frame) may be None */
static PyObject *py_vms_rhs(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    VBEGIN(10, "vms_rhs");
    const double *x = vec(A[6], 12 + nb + 2 * n), *w = vec(A[7], nb);
    const double *tau = vec(A[8], n);
    const double *g = A[9] == Py_None ? NULL : vec(A[9], 3);
    if (!x || !w || !tau || (A[9] != Py_None && !g)) VDECLINE;
    const double *R = x, *v = x + 12, *q = x + 12 + nb, *qd = q + n;
    double gb[3], V[6], *o;
    if (g)
        for (int c = 0; c < 3; c++) gb[c] = R[c] * g[0] + R[3 + c] * g[1] + R[6 + c] * g[2];
    result = vector_out(12 + nb + 2 * n, &o);
    if (!result) { vms_end(&k); return NULL; }
    kinematics(n, k.c.basis, k.c.K, k.c.mass, q, k.L);
    double *acc = k.work + 62 * n;            /* (v', q'') after the scratch */
    if (vms_aba(n, nb, k.L, k.Sb, k.Ib, v, qd, w, tau, g ? gb : NULL, k.work, acc)) VDECLINE;
    memcpy(o + 12, acc, nb * sizeof(double));
    memcpy(o + 12 + nb, qd, n * sizeof(double));
    memcpy(o + 12 + nb + n, acc + nb, n * sizeof(double));
    base_twist(nb, k.Sb, v, V);
    for (int r = 0; r < 3; r++) {             /* R' = R [omega], p' = R v */
        const double *Rr = R + 3 * r;
        o[3 * r] = Rr[1] * V[2] - Rr[2] * V[1];
        o[3 * r + 1] = Rr[2] * V[0] - Rr[0] * V[2];
        o[3 * r + 2] = Rr[0] * V[1] - Rr[1] * V[0];
        o[9 + r] = Rr[0] * V[3] + Rr[1] * V[4] + Rr[2] * V[5];
    }
    vms_end(&k);
    return result;
}

/* vms_hamiltonian(..., q, m) -> (H, gradient (nb + 2 n)) or None */
static PyObject *py_vms_hamiltonian(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    VBEGIN(8, "vms_hamiltonian");
    const double *q = vec(A[6], n), *m = vec(A[7], nb + n);
    if (!q || !m) VDECLINE;
    double *o, E;
    result = vector_out(nb + 2 * n, &o);
    if (!result) { vms_end(&k); return NULL; }
    kinematics(n, k.c.basis, k.c.K, k.c.mass, q, k.L);
    if (vms_hamiltonian(n, nb, k.L, k.Sb, k.Ib, m, k.work, o, &E)) VDECLINE;
    vms_end(&k);
    return Py_BuildValue("(dN)", E, result);
}


/* The six arguments after the base of both VMS derivative entry points: q (n), a base vector
 * (nb), qd (n), a base vector (nb), a joint vector (n), gb (3, or None: zero gravity) into x;
 * 1 if all are clean. */
static int vms_state(PyObject *const *args, int n, int nb, const double **x)
{
    static const double zero3[3] = {0, 0, 0};
    const int sizes[5] = {n, nb, n, nb, n};
    for (int k = 0; k < 5; k++)
        if (!(x[k] = vec(args[6 + k], sizes[k]))) return 0;
    x[5] = args[11] == Py_None ? zero3 : vec(args[11], 3);
    return x[5] != NULL;
}

/* vms_rnea_derivatives(..., q, v, qd, vd, qdd, gb) -> (d(w, tau)/d(base pose, q),
 * d(w, tau)/d(v, qd)) or None; gb (gravity in {b}) may be None. The base pose's derivative is
 * along its local tangent: pose -> pose exp(S_b delta). */
static PyObject *py_vms_rnea_derivatives(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    VBEGIN(12, "vms_rnea_derivatives");
    const double *x[6];
    if (!vms_state(A, n, nb, x)) VDECLINE;
    const double *q = x[0], *v = x[1], *qd = x[2], *vd = x[3], *qdd = x[4], *gb = x[5];
    const int m = nb + n;
    double small[DERIV_SMALL], *p[2];
    Link *L;
    double *work = deriv_scratch(n, m, small, sizeof small, &L);
    if (!work) { vms_end(&k); return NULL; }
    result = matrices(2, m, p);
    if (result) {
        kinematics(n, k.c.basis, k.c.K, k.c.mass, q, L);
        rnea_derivatives(n, nb, L, k.Sb, k.Ib, v, vd, qd, qdd, gb, work, p[0], p[1]);
    }
    if ((double *)L != small) free(L);
    vms_end(&k);
    return finite_or_none(result);
}

/* vms_aba_derivatives(..., q, v, qd, w, tau, gb) -> (d(v', q'')/d(base pose, q),
 * d(v', q'')/d(v, qd), M^-1) or None (also when M is not positive definite) */
static PyObject *py_vms_aba_derivatives(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    VBEGIN(12, "vms_aba_derivatives");
    const double *x[6];
    if (!vms_state(A, n, nb, x)) VDECLINE;
    const double *q = x[0], *v = x[1], *qd = x[2], *w = x[3], *tau = x[4], *gb = x[5];
    const int m = nb + n;
    double small[DERIV_SMALL], *p[3];
    Link *L;
    double *work = deriv_scratch(n, m, small, sizeof small, &L);
    if (!work) { vms_end(&k); return NULL; }
    double *abaw = work + DERIV_WORK * n, *M = abaw + 62 * n, *dq = M + m * m, *dqd = dq + m * m;
    int ok = 0;
    kinematics(n, k.c.basis, k.c.K, k.c.mass, q, L);
    if (!vms_aba(n, nb, L, k.Sb, k.Ib, v, qd, w, tau, A[11] == Py_None ? NULL : gb, abaw, M)) {
        rnea_derivatives(n, nb, L, k.Sb, k.Ib, v, M, qd, M + nb, gb, work, dq, dqd);
        result = matrices(3, m, p);
        if (result) {
            vms_crba(n, nb, L, k.Sb, k.Ib, abaw, M);
            if (spd_inverse(m, M, p[2])) { Py_DECREF(result); result = NULL; }
            else {
                neg_product(m, p[2], dq, p[0]);
                neg_product(m, p[2], dqd, p[1]);
                ok = 1;
            }
        }
    }
    if ((double *)L != small) free(L);
    vms_end(&k);
    if (!ok && !PyErr_Occurred()) Py_RETURN_NONE;
    return finite_or_none(result);
}


/* pose_gravity(H, g, tol) -> R^T g, or None unless H is a clean 4 x 4 rigid motion
 * (max(|R^T R - 1|, |det R - 1|, |bottom row - (0, 0, 0, 1)|) <= tol, the test of
 * robodyn.vehicle.pose_error) and g a clean 3-vector: gravity in the base frame {b}. */
static PyObject *py_pose_gravity(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (arity(nargs, 3, "pose_gravity")) return NULL;
    double tol;
    if (real_arg(args[2], "pose_gravity", "tol", &tol)) return NULL;
    if (!safe_double(args[0]) || PyArray_NDIM((PyArrayObject *)args[0]) != 2
        || PyArray_DIM((PyArrayObject *)args[0], 0) != 4) Py_RETURN_NONE;
    const double *H = fixed(args[0], 16), *g = vec(args[1], 3);
    if (!H || !g) Py_RETURN_NONE;
    double err = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double x = H[i] * H[j] + H[4 + i] * H[4 + j] + H[8 + i] * H[8 + j];
            x = fabs(x - (i == j ? 1.0 : 0.0));
            err = x > err ? x : err;
        }
    double det = H[0] * (H[5] * H[10] - H[6] * H[9]) - H[1] * (H[4] * H[10] - H[6] * H[8])
                 + H[2] * (H[4] * H[9] - H[5] * H[8]);
    double e2 = fabs(det - 1.0);
    err = e2 > err ? e2 : err;
    for (int j = 0; j < 4; j++) {
        e2 = fabs(H[12 + j] - (j == 3 ? 1.0 : 0.0));
        err = e2 > err ? e2 : err;
    }
    if (!(err <= tol)) Py_RETURN_NONE;
    double *o;
    PyObject *out = vector_out(3, &o);
    if (out)
        for (int c = 0; c < 3; c++) o[c] = H[c] * g[0] + H[4 + c] * g[1] + H[8 + c] * g[2];
    return out;
}

static PyMethodDef methods[] = {
    {"chain", (PyCFunction)(void (*)(void))py_chain, METH_FASTCALL, "chain handle"},
    {"rnea", (PyCFunction)(void (*)(void))py_rnea, METH_FASTCALL, "inverse dynamics"},
    {"crba", (PyCFunction)(void (*)(void))py_crba, METH_FASTCALL, "mass matrix"},
    {"coriolis", (PyCFunction)(void (*)(void))py_coriolis, METH_FASTCALL, "Coriolis matrix"},
    {"aba", (PyCFunction)(void (*)(void))py_aba, METH_FASTCALL, "forward dynamics"},
    {"vms_crba", (PyCFunction)(void (*)(void))py_vms_crba, METH_FASTCALL, "VMS mass matrix"},
    {"vms_rnea", (PyCFunction)(void (*)(void))py_vms_rnea, METH_FASTCALL, "VMS inverse dynamics"},
    {"vms_aba", (PyCFunction)(void (*)(void))py_vms_aba, METH_FASTCALL, "VMS forward dynamics"},
    {"vms_rhs", (PyCFunction)(void (*)(void))py_vms_rhs, METH_FASTCALL, "StandardForm rhs"},
    {"vms_hamiltonian", (PyCFunction)(void (*)(void))py_vms_hamiltonian, METH_FASTCALL,
     "VMS co-energy and gradient"},
    {"pose_gravity", (PyCFunction)(void (*)(void))py_pose_gravity, METH_FASTCALL,
     "gravity in a checked base frame"},
    {"rnea_derivatives", (PyCFunction)(void (*)(void))py_rnea_derivatives, METH_FASTCALL,
     "derivatives of inverse dynamics"},
    {"aba_derivatives", (PyCFunction)(void (*)(void))py_aba_derivatives, METH_FASTCALL,
     "derivatives of forward dynamics"},
    {"vms_rnea_derivatives", (PyCFunction)(void (*)(void))py_vms_rnea_derivatives,
     METH_FASTCALL, "VMS derivatives of inverse dynamics"},
    {"vms_aba_derivatives", (PyCFunction)(void (*)(void))py_vms_aba_derivatives,
     METH_FASTCALL, "VMS derivatives of forward dynamics"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "MODNAME", NULL, -1, methods};

PyMODINIT_FUNC PyInit_MODNAME(void)
{
    import_array();
    if (load_errors()) return NULL;
    return PyModule_Create(&module);
}
