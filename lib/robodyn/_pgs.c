/* Projected Gauss-Seidel on a contact problem's Delassus matrix (robodyn.impacts._lcp.contact_pgs),
 * compiled by robodyn.codegen on first use; the numpy loop of lcp.py is the same algorithm.
 *
 * pgs(W, b, mu, fric, lam, max_sweeps, tol, omega) -> sweeps used (>= 1), or -1 when not converged.
 * W (2p x 2p, row-major) the Delassus matrix of the rows (Jn; Jt), b (2p) the free contact
 * velocities, mu (p), fric (p, 1 where a contact has a tangent row and mu > 0), lam (2p)
 * the impulses (Ln; Lt), updated in place from the start given. The caller (lcp.py) passes
 * float64 C-contiguous arrays of these sizes only; anything else is refused with TypeError.
 * One sweep: for each contact, Ln_i <- max(0, Ln_i - omega (b + W lam)_i / W_ii), then
 * Lt_i <- clip(Lt_i - omega (b + W lam)_{p+i} / W_{p+i,p+i}, -mu_i Ln_i, mu_i Ln_i)
 * (omega in (0, 2): over-relaxation when > 1). Converged
 * when no impulse moved by more than tol * max(1, max |lam|) in a sweep.
 */
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <numpy/arrayobject.h>
#include <math.h>

static double *data_of(PyObject *o, npy_intp size, int type)
{
    if (!PyArray_Check(o)) return NULL;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != type || !PyArray_IS_C_CONTIGUOUS(a) || PyArray_SIZE(a) != size)
        return NULL;
    return (double *)PyArray_DATA(a);
}

static double row_dot(const double *w, const double *x, int m)
{
    double s = 0.0;
    for (int k = 0; k < m; k++) s += w[k] * x[k];
    return s;
}

static PyObject *py_pgs(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) { PyErr_SetString(PyExc_TypeError, "pgs: expected 8 arguments"); return NULL; }
    if (!PyArray_Check(args[1])) { PyErr_SetString(PyExc_TypeError, "pgs: b"); return NULL; }
    npy_intp m = PyArray_SIZE((PyArrayObject *)args[1]);
    int p = (int)(m / 2);
    const double *W = data_of(args[0], m * m, NPY_DOUBLE), *b = data_of(args[1], m, NPY_DOUBLE);
    const double *mu = data_of(args[2], p, NPY_DOUBLE);
    const int *fric = (const int *)data_of(args[3], p, NPY_INT32);
    double *lam = data_of(args[4], m, NPY_DOUBLE);
    long sweeps = PyLong_AsLong(args[5]);
    double tol = PyFloat_AsDouble(args[6]), omega = PyFloat_AsDouble(args[7]);
    if (!W || !b || !mu || !fric || !lam || m != 2 * p || PyErr_Occurred()) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "pgs: bad arrays");
        return NULL;
    }
    long used = -1;
    Py_BEGIN_ALLOW_THREADS
    for (long s = 1; s <= sweeps; s++) {
        double change = 0.0, big = 1.0;
        for (int i = 0; i < p; i++) {
            const double *wn = W + m * i;
            double r = b[i] + row_dot(wn, lam, (int)m);
            double x = lam[i] - omega * r / wn[i];
            if (x < 0.0) x = 0.0;
            change = fmax(change, fabs(x - lam[i]));
            lam[i] = x;
            big = fmax(big, x);
            if (fric[i]) {
                const double *wt = W + m * (p + i);
                double rt = b[p + i] + row_dot(wt, lam, (int)m);
                double y = lam[p + i] - omega * rt / wt[p + i], c = mu[i] * x;
                y = y > c ? c : (y < -c ? -c : y);
                change = fmax(change, fabs(y - lam[p + i]));
                lam[p + i] = y;
                big = fmax(big, fabs(y));
            }
        }
        if (!(change == change)) break;               /* NaN: not converged */
        if (change <= tol * big) { used = s; break; }
    }
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(used);
}

static PyMethodDef methods[] = {
    {"pgs", (PyCFunction)(void (*)(void))py_pgs, METH_FASTCALL, "projected Gauss-Seidel"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "MODNAME", NULL, -1, methods};

PyMODINIT_FUNC PyInit_MODNAME(void)
{
    import_array();
    return PyModule_Create(&module);
}
