/* Featherstone's O(n) algorithms on a kinematic tree (a parent array) in C: RNEA, CRBA, ABA
 * of robodyn.trees, line by line its body-frame formulation (see that module's docstring),
 * fixed or floating base, one state. Built and cached by robodyn.codegen on first use.
 *
 * tree(parents, kinds, axes, placements, inertias, floating) checks the model's constant data
 * once and keeps a private copy behind a capsule, the handle every entry point takes first:
 *   parents (n,) float64 holding integers, parents[i] < i (-1: the base);
 *   kinds (n,) 0 revolute, 1 prismatic; axes (n,3) unit, body frame;
 *   placements (n,4,4) the joint origins; inertias (n+1,6,6), entry 0 the base's;
 *   floating 0 or 1.
 * An entry point returns None -- and computes nothing -- unless every array is a plain ndarray
 * of native float64, aligned, C-contiguous, finite and of the expected size (then the numpy
 * path of robodyn.trees runs, which checks, converts and raises the errors), or when the result
 * is not finite. Twists (omega, v), wrenches (m, f).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <numpy/arrayobject.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int n, nv, floating;
    int *parent;
    int *kind;
    double *axis;      /* n x 3 */
    double *R0, *R1, *R2, *p0;   /* R(q) = R0 + sin q R1 + (1 - cos q) R2; p0 the origin */
    double *inertia;   /* (n+1) x 36, entry 0 the base */
} Tree;

/* ---------------------------------------------------------------- spatial algebra */

static inline void cross3(const double *a, const double *b, double *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

static inline void mv6(const double *A, const double *x, double *o)
{
    for (int r = 0; r < 6; r++) {
        const double *a = A + 6 * r;
        o[r] = a[0] * x[0] + a[1] * x[1] + a[2] * x[2] + a[3] * x[3] + a[4] * x[4] + a[5] * x[5];
    }
}

/* R^T x */
static inline void rtv(const double *R, const double *x, double *o)
{
    o[0] = R[0] * x[0] + R[3] * x[1] + R[6] * x[2];
    o[1] = R[1] * x[0] + R[4] * x[1] + R[7] * x[2];
    o[2] = R[2] * x[0] + R[5] * x[1] + R[8] * x[2];
}

static inline void rv(const double *R, const double *x, double *o)
{
    o[0] = R[0] * x[0] + R[1] * x[1] + R[2] * x[2];
    o[1] = R[3] * x[0] + R[4] * x[1] + R[5] * x[2];
    o[2] = R[6] * x[0] + R[7] * x[1] + R[8] * x[2];
}

/* a twist of the parent's frame in the child's frame: X = (R, p) the child's pose in the parent,
 * omega_c = R^T omega, v_c = R^T (v + omega x p) */
static inline void motion_in(const double *R, const double *p, const double *V, double *o)
{
    double t[3];
    cross3(V, p, t);
    t[0] += V[3]; t[1] += V[4]; t[2] += V[5];
    rtv(R, V, o);
    rtv(R, t, o + 3);
}

/* a wrench of the child's frame in the parent's: f_p = R f, m_p = R m + p x f_p */
static inline void force_out(const double *R, const double *p, const double *F, double *o)
{
    double t[3];
    rv(R, F + 3, o + 3);
    rv(R, F, o);
    cross3(p, o + 3, t);
    o[0] += t[0]; o[1] += t[1]; o[2] += t[2];
}

/* o = ad_V X (motion cross product) */
static inline void mcross(const double *V, const double *X, double *o)
{
    double t[3];
    cross3(V, X, o);
    cross3(V, X + 3, o + 3);
    cross3(V + 3, X, t);
    o[3] += t[0]; o[4] += t[1]; o[5] += t[2];
}

/* o = -ad_V^T H (force cross product) */
static inline void fcross(const double *V, const double *H, double *o)
{
    double t[3];
    cross3(V, H, o);
    cross3(V + 3, H + 3, t);
    o[0] += t[0]; o[1] += t[1]; o[2] += t[2];
    cross3(V, H + 3, o + 3);
}

/* Ip += Ad_{X^{-1}}^T Ic Ad_{X^{-1}}: a symmetric 6x6 of the child's frame added in the
 * parent's. Blocks [[A, B], [B^T, C]] are rotated (R . R^T), then moved by p:
 * A' = A + P B^T - B P - P C P, B' = B + P C, C' = C with P = [p]. */
static void inertia_out(const double *R, const double *p, const double *Ic, double *Ip)
{
    double blk[3][9], rot[3][9], T[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            blk[0][3 * r + c] = Ic[6 * r + c];
            blk[1][3 * r + c] = Ic[6 * r + c + 3];
            blk[2][3 * r + c] = Ic[6 * (r + 3) + c + 3];
        }
    for (int b = 0; b < 3; b++) {        /* rot = R blk R^T */
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                T[3 * r + c] = R[3 * r] * blk[b][c] + R[3 * r + 1] * blk[b][3 + c]
                               + R[3 * r + 2] * blk[b][6 + c];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                rot[b][3 * r + c] = T[3 * r] * R[3 * c] + T[3 * r + 1] * R[3 * c + 1]
                                    + T[3 * r + 2] * R[3 * c + 2];
    }
    const double P[9] = {0, -p[2], p[1], p[2], 0, -p[0], -p[1], p[0], 0};
    double PC[9], PB[9];   /* PC = P C, PB = P B^T */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            PC[3 * r + c] = P[3 * r] * rot[2][c] + P[3 * r + 1] * rot[2][3 + c]
                            + P[3 * r + 2] * rot[2][6 + c];
            PB[3 * r + c] = P[3 * r] * rot[1][3 * c] + P[3 * r + 1] * rot[1][3 * c + 1]
                            + P[3 * r + 2] * rot[1][3 * c + 2];
        }
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            /* - P C P = P C P^T ... P^T = -P, so -P C P = PC P^T */
            double pcp = PC[3 * r] * P[3 * c] + PC[3 * r + 1] * P[3 * c + 1]
                         + PC[3 * r + 2] * P[3 * c + 2];
            double A = rot[0][3 * r + c] + PB[3 * r + c] + PB[3 * c + r] + pcp;
            double B = rot[1][3 * r + c] + PC[3 * r + c];
            Ip[6 * r + c] += A;
            Ip[6 * r + c + 3] += B;
            Ip[6 * (c + 3) + r] += B;
            Ip[6 * (r + 3) + c + 3] += rot[2][3 * r + c];
        }
}

/* ---------------------------------------------------------------- the algorithms */

/* X_i = (R_i, p_i) for every joint, 12 doubles each */
static void transforms(const Tree *t, const double *q, double *X)
{
    for (int i = 0; i < t->n; i++) {
        double *R = X + 12 * i, *p = R + 9;
        const double *R0 = t->R0 + 9 * i;
        if (t->kind[i] == 0) {
            double s = sin(q[i]), c = 1.0 - cos(q[i]);
            const double *R1 = t->R1 + 9 * i, *R2 = t->R2 + 9 * i;
            for (int k = 0; k < 9; k++) R[k] = R0[k] + s * R1[k] + c * R2[k];
            memcpy(p, t->p0 + 3 * i, 3 * sizeof(double));
        } else {
            double d[3];
            const double *a = t->axis + 3 * i;
            memcpy(R, R0, 9 * sizeof(double));
            d[0] = a[0] * q[i]; d[1] = a[1] * q[i]; d[2] = a[2] * q[i];
            rv(R0, d, p);
            p[0] += t->p0[3 * i]; p[1] += t->p0[3 * i + 1]; p[2] += t->p0[3 * i + 2];
        }
    }
}

/* the joint's screw S_i times x, added to o */
static inline void add_screw(const Tree *t, int i, double x, double *o)
{
    const double *a = t->axis + 3 * i;
    double *d = o + 3 * t->kind[i];
    d[0] += a[0] * x; d[1] += a[1] * x; d[2] += a[2] * x;
}

static inline double screw_dot(const Tree *t, int i, const double *f)
{
    const double *a = t->axis + 3 * i, *d = f + 3 * t->kind[i];
    return a[0] * d[0] + a[1] * d[1] + a[2] * d[2];
}

/* the fictitious base acceleration (0, -R_b^T g) */
static void base_gravity(const double *Hb, const double *g, double *a)
{
    a[0] = a[1] = a[2] = 0.0;
    if (Hb) {
        double R[9] = {Hb[0], Hb[1], Hb[2], Hb[4], Hb[5], Hb[6], Hb[8], Hb[9], Hb[10]};
        rtv(R, g, a + 3);
        a[3] = -a[3]; a[4] = -a[4]; a[5] = -a[5];
    } else {
        a[3] = -g[0]; a[4] = -g[1]; a[5] = -g[2];
    }
}

/* work: X 12n, V 6(n+1), A 6(n+1), F 6(n+1) */
static void rnea(const Tree *t, const double *q, const double *qd, const double *qdd,
                 const double *Hb, const double *g, double *work, double *out)
{
    const int n = t->n, off = t->floating ? 6 : 0;
    double *X = work, *V = X + 12 * n, *A = V + 6 * (n + 1), *F = A + 6 * (n + 1), h[6];
    transforms(t, q, X);
    base_gravity(t->floating ? Hb : NULL, g, A);
    if (t->floating) {
        memcpy(V, qd, 6 * sizeof(double));
        for (int k = 0; k < 6; k++) A[k] += qdd[k];
        mv6(t->inertia, V, h);
        fcross(V, h, F);
        mv6(t->inertia, A, h);
        for (int k = 0; k < 6; k++) F[k] += h[k];
    } else {
        memset(V, 0, 6 * sizeof(double));
        memset(F, 0, 6 * sizeof(double));
    }
    for (int i = 0; i < n; i++) {
        const double *R = X + 12 * i, *p = R + 9;
        double *v = V + 6 * (i + 1), *a = A + 6 * (i + 1), *f = F + 6 * (i + 1), s[6] = {0};
        const int pa = t->parent[i] + 1;
        const double *In = t->inertia + 36 * (i + 1);
        motion_in(R, p, V + 6 * pa, v);
        motion_in(R, p, A + 6 * pa, a);
        add_screw(t, i, qd[off + i], s);
        for (int k = 0; k < 6; k++) v[k] += s[k];
        double c[6];
        mcross(v, s, c);
        for (int k = 0; k < 6; k++) a[k] += c[k];
        add_screw(t, i, qdd[off + i], a);
        mv6(In, v, h);
        fcross(v, h, f);
        mv6(In, a, h);
        for (int k = 0; k < 6; k++) f[k] += h[k];
    }
    for (int i = n - 1; i >= 0; i--) {
        const double *R = X + 12 * i, *p = R + 9, *f = F + 6 * (i + 1);
        double fp[6], *dst = F + 6 * (t->parent[i] + 1);
        out[off + i] = screw_dot(t, i, f);
        force_out(R, p, f, fp);
        for (int k = 0; k < 6; k++) dst[k] += fp[k];
    }
    if (t->floating) memcpy(out, F, 6 * sizeof(double));
}

/* A rigid body's spatial inertia in 10 numbers (13 stored): mass m, first moment h = m c,
 * rotational inertia J about the frame's origin (3x3); the 6x6 form is [[J, [h]], [[h]^T, m]]. */
static void rigid_of(const double *G, double *b)
{
    b[0] = G[21];
    b[1] = G[16]; b[2] = G[5]; b[3] = G[9];   /* [h] = G[:3, 3:]: h = ([h]_21, [h]_02, [h]_10) */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) b[4 + 3 * r + c] = G[6 * r + c];
}

/* bp += the body b (child frame) expressed in its parent's frame, X = (R, p):
 * h_p = m p + R h, J_p = R J R^T + m (p.p 1 - p p^T) + 2 (p.h') 1 - p h'^T - h' p^T, h' = R h */
static void rigid_out(const double *R, const double *p, const double *b, double *bp)
{
    const double m = b[0];
    double hr[3], T[9];
    rv(R, b + 1, hr);
    const double *J = b + 4;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            T[3 * r + c] = R[3 * r] * J[c] + R[3 * r + 1] * J[3 + c] + R[3 * r + 2] * J[6 + c];
    const double pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
    const double ph = p[0] * hr[0] + p[1] * hr[1] + p[2] * hr[2];
    for (int r = 0; r < 3; r++)
        for (int c = r; c < 3; c++) {
            double v = T[3 * r] * R[3 * c] + T[3 * r + 1] * R[3 * c + 1]
                       + T[3 * r + 2] * R[3 * c + 2]
                       - m * p[r] * p[c] - p[r] * hr[c] - hr[r] * p[c];
            if (r == c) v += m * pp + 2.0 * ph;
            bp[4 + 3 * r + c] += v;
            if (r != c) bp[4 + 3 * c + r] += v;
        }
    bp[0] += m;
    for (int k = 0; k < 3; k++) bp[1 + k] += m * p[k] + hr[k];
}

/* F = G S_i for a rigid body b and joint i's screw */
static void rigid_screw(const Tree *t, int i, const double *b, double *F)
{
    const double *a = t->axis + 3 * i, *h = b + 1, *J = b + 4;
    if (t->kind[i] == 0) {          /* S = (a, 0): F = (J a, a x h) */
        for (int r = 0; r < 3; r++)
            F[r] = J[3 * r] * a[0] + J[3 * r + 1] * a[1] + J[3 * r + 2] * a[2];
        cross3(a, h, F + 3);
    } else {                        /* S = (0, a): F = (h x a, m a) */
        cross3(h, a, F);
        F[3] = b[0] * a[0]; F[4] = b[0] * a[1]; F[5] = b[0] * a[2];
    }
}

/* work: X 12n, Ic 13(n+1) */
static void crba(const Tree *t, const double *q, double *work, double *M)
{
    const int n = t->n, nv = t->nv, off = t->floating ? 6 : 0;
    double *X = work, *Ic = X + 12 * n;
    transforms(t, q, X);
    for (int k = 0; k <= n; k++) rigid_of(t->inertia + 36 * k, Ic + 13 * k);
    for (int i = n - 1; i >= 0; i--)
        rigid_out(X + 12 * i, X + 12 * i + 9, Ic + 13 * (i + 1), Ic + 13 * (t->parent[i] + 1));
    memset(M, 0, (size_t)nv * nv * sizeof(double));
    for (int i = 0; i < n; i++) {
        double F[6], G[6];
        rigid_screw(t, i, Ic + 13 * (i + 1), F);
        M[(off + i) * nv + off + i] = screw_dot(t, i, F);
        int j = i;
        while (t->parent[j] >= 0) {
            force_out(X + 12 * j, X + 12 * j + 9, F, G);
            memcpy(F, G, sizeof F);
            j = t->parent[j];
            double m = screw_dot(t, j, F);
            M[(off + i) * nv + off + j] = m;
            M[(off + j) * nv + off + i] = m;
        }
        if (t->floating) {
            force_out(X + 12 * j, X + 12 * j + 9, F, G);
            for (int r = 0; r < 6; r++) {
                M[r * nv + off + i] = G[r];
                M[(off + i) * nv + r] = G[r];
            }
        }
    }
    if (t->floating) {          /* the base's composite inertia, as a 6x6 */
        const double m = Ic[0], *h = Ic + 1, *J = Ic + 4;
        const double H[9] = {0, -h[2], h[1], h[2], 0, -h[0], -h[1], h[0], 0};
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                M[r * nv + c] = J[3 * r + c];
                M[r * nv + c + 3] = H[3 * r + c];
                M[(r + 3) * nv + c] = H[3 * c + r];
                M[(r + 3) * nv + c + 3] = r == c ? m : 0.0;
            }
    }
}

/* solve the 6x6 SPD system A x = b by Cholesky (A overwritten); 0 ok */
static int solve6(double *A, double *b)
{
    double tiny = 0.0;                   /* a pivot at most 6 eps max A_jj: A is singular */
    for (int j = 0; j < 6; j++) tiny = A[6 * j + j] > tiny ? A[6 * j + j] : tiny;
    tiny *= 6 * 2.220446049250313e-16;
    for (int j = 0; j < 6; j++) {
        double d = A[6 * j + j];
        for (int k = 0; k < j; k++) d -= A[6 * j + k] * A[6 * j + k];
        if (!(d > tiny)) return -1;
        d = sqrt(d);
        A[6 * j + j] = d;
        for (int i = j + 1; i < 6; i++) {
            double s = A[6 * i + j];
            for (int k = 0; k < j; k++) s -= A[6 * i + k] * A[6 * j + k];
            A[6 * i + j] = s / d;
        }
    }
    for (int i = 0; i < 6; i++) {
        for (int k = 0; k < i; k++) b[i] -= A[6 * i + k] * b[k];
        b[i] /= A[6 * i + i];
    }
    for (int i = 5; i >= 0; i--) {
        for (int k = i + 1; k < 6; k++) b[i] -= A[6 * k + i] * b[k];
        b[i] /= A[6 * i + i];
    }
    return 0;
}

/* work: X 12n, V 6(n+1), C 6n, IA 36(n+1), PA 6(n+1), U 6n, D n, u n, A 6(n+1) */
static int aba(const Tree *t, const double *q, const double *qd, const double *tau,
               const double *Hb, const double *g, double *work, double *out)
{
    const int n = t->n, off = t->floating ? 6 : 0;
    double *X = work, *V = X + 12 * n, *C = V + 6 * (n + 1), *IA = C + 6 * n;
    double *PA = IA + 36 * (n + 1), *U = PA + 6 * (n + 1), *D = U + 6 * n, *u = D + n;
    double *A = u + n, h[6], dmin = INFINITY, dmax = 0.0;
    transforms(t, q, X);
    memcpy(IA, t->inertia, 36 * (n + 1) * sizeof(double));
    if (t->floating) {
        memcpy(V, qd, 6 * sizeof(double));
        mv6(t->inertia, V, h);
        fcross(V, h, PA);
        for (int k = 0; k < 6; k++) PA[k] -= tau[k];
    } else {
        memset(V, 0, 6 * sizeof(double));
        memset(PA, 0, 6 * sizeof(double));
    }
    for (int i = 0; i < n; i++) {
        const double *R = X + 12 * i, *p = R + 9;
        double *v = V + 6 * (i + 1), s[6] = {0};
        motion_in(R, p, V + 6 * (t->parent[i] + 1), v);
        add_screw(t, i, qd[off + i], s);
        for (int k = 0; k < 6; k++) v[k] += s[k];
        mcross(v, s, C + 6 * i);
        mv6(t->inertia + 36 * (i + 1), v, h);
        fcross(v, h, PA + 6 * (i + 1));
    }
    for (int i = n - 1; i >= 0; i--) {
        double *Ii = IA + 36 * (i + 1), *pi = PA + 6 * (i + 1), *Ui = U + 6 * i;
        const double *a = t->axis + 3 * i;
        const int k0 = 3 * t->kind[i];
        for (int r = 0; r < 6; r++)
            Ui[r] = Ii[6 * r + k0] * a[0] + Ii[6 * r + k0 + 1] * a[1] + Ii[6 * r + k0 + 2] * a[2];
        D[i] = screw_dot(t, i, Ui);
        if (!(D[i] > 0.0)) return -1;
        dmin = D[i] < dmin ? D[i] : dmin;
        dmax = D[i] > dmax ? D[i] : dmax;
        u[i] = tau[off + i] - screw_dot(t, i, pi);
        double Ia[36], pa[6], fp[6], w = u[i] / D[i];
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 6; c++) Ia[6 * r + c] = Ii[6 * r + c] - Ui[r] * Ui[c] / D[i];
        mv6(Ia, C + 6 * i, pa);
        for (int k = 0; k < 6; k++) pa[k] += pi[k] + Ui[k] * w;
        const int par = t->parent[i] + 1;
        const double *R = X + 12 * i, *p = R + 9;
        inertia_out(R, p, Ia, IA + 36 * par);
        force_out(R, p, pa, fp);
        for (int k = 0; k < 6; k++) PA[6 * par + k] += fp[k];
    }
    if (!(dmin > 1e-14 * dmax)) return -1;   /* M singular: robodyn.trees._singular says so */
    double ag[6];
    base_gravity(t->floating ? Hb : NULL, g, ag);
    if (t->floating) {
        for (int k = 0; k < 6; k++) A[k] = -PA[k];
        if (solve6(IA, A)) return -1;
    } else {
        memcpy(A, ag, sizeof ag);
    }
    for (int i = 0; i < n; i++) {
        const double *R = X + 12 * i, *p = R + 9;
        double *a = A + 6 * (i + 1);
        motion_in(R, p, A + 6 * (t->parent[i] + 1), a);
        for (int k = 0; k < 6; k++) a[k] += C[6 * i + k];
        double qdd = (u[i] - dot6(U + 6 * i, a)) / D[i];
        out[off + i] = qdd;
        add_screw(t, i, qdd, a);
    }
    if (t->floating)
        for (int k = 0; k < 6; k++) out[k] = A[k] - ag[k];
    return 0;
}

/* ---------------------------------------------------------------- analytic derivatives */

/* B = -(Isp ad_V) - (Isp ad_V)^T + H(h), H(h) = [[-[m], -[f]], [-[f], 0]] for h = (m, f): the
 * rate term of a spatial inertia moving with twist V (robodyn.derivatives' Bc) */
static void inertia_rate(const double *In, const double *V, const double *h, double *B)
{
    double X[36], col[6], e[6];
    for (int c = 0; c < 6; c++) {          /* column c of Isp ad_V = Isp (V x e_c) */
        memset(e, 0, sizeof e);
        e[c] = 1.0;
        mcross(V, e, col);
        for (int r = 0; r < 6; r++) X[6 * r + c] = dot6(In + 6 * r, col);
    }
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++) B[6 * r + c] = -(X[6 * r + c] + X[6 * c + r]);
    const double *mo = h, *f = h + 3;
    const double Hm[9] = {0, mo[2], -mo[1], -mo[2], 0, mo[0], mo[1], -mo[0], 0};
    const double Hf[9] = {0, f[2], -f[1], -f[2], 0, f[0], f[1], -f[0], 0};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            B[6 * r + c] += Hm[3 * r + c];
            B[6 * r + 3 + c] += Hf[3 * r + c];
            B[6 * (3 + r) + c] += Hf[3 * r + c];
        }
}

/* base-frame screws s (6n) and inertias Isp (36n) at q; W: poses (12 per body) */
static void base_frame(const Tree *t, const double *q, double *X, double *W, double *s,
                       double *Isp)
{
    transforms(t, q, X);
    for (int i = 0; i < t->n; i++) {
        const double *R = X + 12 * i, *p = R + 9;
        double *Wi = W + 12 * i, *si = s + 6 * i;
        const int par = t->parent[i];
        if (par < 0) {
            memcpy(Wi, R, 12 * sizeof(double));
        } else {
            const double *Wp = W + 12 * par;
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    Wi[3 * r + c] = Wp[3 * r] * R[c] + Wp[3 * r + 1] * R[3 + c]
                                    + Wp[3 * r + 2] * R[6 + c];
            rv(Wp, p, Wi + 9);
            for (int k = 0; k < 3; k++) Wi[9 + k] += Wp[9 + k];
        }
        double ax[3];
        rv(Wi, t->axis + 3 * i, ax);
        if (t->kind[i] == 0) {
            memcpy(si, ax, sizeof ax);
            cross3(Wi + 9, ax, si + 3);
        } else {
            si[0] = si[1] = si[2] = 0.0;
            memcpy(si + 3, ax, sizeof ax);
        }
        memset(Isp + 36 * i, 0, 36 * sizeof(double));
        inertia_out(Wi, Wi + 9, t->inertia + 36 * (i + 1), Isp + 36 * i);
    }
}

static inline void madd6(const double *A, const double *x, double *o)    /* o += A x */
{
    double y[6];
    mv6(A, x, y);
    for (int k = 0; k < 6; k++) o[k] += y[k];
}

static inline void mtv6(const double *A, const double *x, double *o)     /* o = A^T x */
{
    for (int c = 0; c < 6; c++) {
        double y = 0.0;
        for (int r = 0; r < 6; r++) y += A[6 * r + c] * x[r];
        o[c] = y;
    }
}

#define DWORK 180     /* doubles per body of scratch for rnea_derivatives */

/* (dq, dqd) = the derivatives of rnea at (q, nu, dnu): robodyn.trees._rnea_derivatives */
static void rnea_derivatives(const Tree *t, const double *q, const double *nu,
                             const double *dnu, const double *Hb, const double *g, double *work,
                             double *dq, double *dqd)
{
    const int n = t->n, nb = t->floating ? 6 : 0, m = t->nv;
    double *X = work, *W = X + 12 * n, *s = W + 12 * n, *Isp = s + 6 * n, *V = Isp + 36 * n;
    double *A = V + 6 * (n + 1), *vn = A + 6 * (n + 1), *psi = vn + 6 * n, *F = psi + 6 * n;
    double *Bc = F + 6 * n, *Ps = Bc + 36 * n, *Qs = Ps + 6 * n, *w = Qs + 6 * n;
    double *z = w + 6 * n, *Ic = Isp;   /* Isp becomes the subtree sums in place */
    base_frame(t, q, X, W, s, Isp);
    double ag[6];
    base_gravity(nb ? Hb : NULL, g, ag);
    const double *qd = nu + nb, *qdd = dnu + nb;
    memset(V, 0, 6 * sizeof(double));
    memcpy(A, ag, sizeof ag);
    if (nb)
        for (int k = 0; k < 6; k++) { V[k] = nu[k]; A[k] += dnu[k]; }
    for (int i = 0; i < n; i++) {
        const double *Vp = V + 6 * (t->parent[i] + 1), *Ap = A + 6 * (t->parent[i] + 1);
        const double *si = s + 6 * i, *Ii = Isp + 36 * i;
        double *vi = V + 6 * (i + 1), *ai = A + 6 * (i + 1), tmp[6], h[6];
        mcross(Vp, si, vn + 6 * i);
        mcross(Ap, si, psi + 6 * i);
        mcross(Vp, vn + 6 * i, tmp);
        for (int k = 0; k < 6; k++) {
            psi[6 * i + k] += tmp[k];
            vi[k] = Vp[k] + si[k] * qd[i];
            ai[k] = Ap[k] + si[k] * qdd[i] + vn[6 * i + k] * qd[i];
        }
        mv6(Ii, vi, h);
        mv6(Ii, ai, F + 6 * i);
        fcross(vi, h, tmp);
        for (int k = 0; k < 6; k++) F[6 * i + k] += tmp[k];
        inertia_rate(Ii, vi, h, Bc + 36 * i);
    }
    for (int i = n - 1; i >= 0; i--) {
        const int p = t->parent[i];
        if (p < 0) continue;
        for (int k = 0; k < 36; k++) {
            Ic[36 * p + k] += Ic[36 * i + k];
            Bc[36 * p + k] += Bc[36 * i + k];
        }
        for (int k = 0; k < 6; k++) F[6 * p + k] += F[6 * i + k];
    }
    for (int i = 0; i < n; i++) {
        const double *si = s + 6 * i, *Ici = Ic + 36 * i, *Bci = Bc + 36 * i;
        double *wi = w + 6 * i, *zi = z + 6 * i, x[6];
        mv6(Ici, si, Ps + 6 * i);
        mtv6(Bci, si, Qs + 6 * i);
        fcross(si, F + 6 * i, wi);          /* -ad_s^T F */
        madd6(Ici, psi + 6 * i, wi);
        madd6(Bci, vn + 6 * i, wi);
        mv6(Ici, vn + 6 * i, x);
        mv6(Bci, si, zi);
        for (int k = 0; k < 6; k++) zi[k] += 2.0 * x[k];
    }
    memset(dq, 0, (size_t)m * m * sizeof(double));
    memset(dqd, 0, (size_t)m * m * sizeof(double));
    for (int j = 0; j < n; j++) {
        for (int i = j; i >= 0; i = t->parent[i]) {       /* i = j and its ancestors */
            dq[m * (nb + i) + nb + j] = dot6(s + 6 * i, w + 6 * j);
            dqd[m * (nb + i) + nb + j] = dot6(s + 6 * i, z + 6 * j);
        }
        for (int k = t->parent[j]; k >= 0; k = t->parent[k]) {   /* k a strict ancestor of j */
            dq[m * (nb + j) + nb + k] = dot6(Ps + 6 * j, psi + 6 * k)
                                        + dot6(Qs + 6 * j, vn + 6 * k);
            dqd[m * (nb + j) + nb + k] = 2.0 * dot6(Ps + 6 * j, vn + 6 * k)
                                         + dot6(Qs + 6 * j, s + 6 * k);
        }
    }
    if (!nb) return;
    double Icb[36], Bcb[36], h[6], al[6], np_[6], e[6], x1[6];
    const double *t0 = V;
    mv6(t->inertia, t0, h);
    inertia_rate(t->inertia, t0, h, Bcb);
    memcpy(Icb, t->inertia, sizeof Icb);
    for (int i = 0; i < n; i++)
        if (t->parent[i] < 0)
            for (int k = 0; k < 36; k++) {
                Icb[k] += Ic[36 * i + k];
                Bcb[k] += Bc[36 * i + k];
            }
    for (int j = 0; j < n; j++)
        for (int r = 0; r < 6; r++) {
            dq[m * r + 6 + j] = w[6 * j + r];
            dqd[m * r + 6 + j] = z[6 * j + r];
        }
    for (int c = 0; c < 6; c++) {
        memset(e, 0, sizeof e);
        e[c] = 1.0;
        mcross(ag, e, al);
        mcross(t0, e, np_);
        for (int i = 0; i < n; i++) {
            dq[m * (6 + i) + c] = dot6(Ps + 6 * i, al);
            dqd[m * (6 + i) + c] = dot6(Ps + 6 * i, np_) + Qs[6 * i + c];
        }
        mv6(Icb, al, x1);
        for (int r = 0; r < 6; r++) dq[m * r + c] = x1[r];
        mv6(Icb, np_, x1);
        for (int r = 0; r < 6; r++) dqd[m * r + c] = x1[r] + Bcb[6 * r + c];
    }
}

/* The inverse of a symmetric positive definite m x m matrix A (overwritten) into Ainv by
 * Cholesky; -1 if A is not positive definite */
static int spd_inverse(int m, double *A, double *Ainv)
{
    double tiny = 0.0;                   /* a pivot at most m eps max A_jj: A is singular */
    for (int j = 0; j < m; j++) tiny = A[m * j + j] > tiny ? A[m * j + j] : tiny;
    tiny *= m * 2.220446049250313e-16;
    for (int j = 0; j < m; j++) {
        double d = A[m * j + j];
        for (int k = 0; k < j; k++) d -= A[m * j + k] * A[m * j + k];
        if (!(d > tiny)) return -1;
        d = sqrt(d);
        A[m * j + j] = d;
        for (int i = j + 1; i < m; i++) {
            double x = A[m * i + j];
            for (int k = 0; k < j; k++) x -= A[m * i + k] * A[m * j + k];
            A[m * i + j] = x / d;
        }
    }
    for (int c = 0; c < m; c++)                      /* L^{-1}, lower, into Ainv */
        for (int i = 0; i < m; i++) {
            if (i < c) { Ainv[m * i + c] = 0.0; continue; }
            double x = i == c ? 1.0 : 0.0;
            for (int k = c; k < i; k++) x -= A[m * i + k] * Ainv[m * k + c];
            Ainv[m * i + c] = x / A[m * i + i];
        }
    for (int i = 0; i < m; i++)                      /* L^{-T} L^{-1}, upper, into A */
        for (int j = i; j < m; j++) {
            double x = 0.0;
            for (int k = j; k < m; k++) x += Ainv[m * k + i] * Ainv[m * k + j];
            A[m * i + j] = x;
        }
    for (int i = 0; i < m; i++)
        for (int j = i; j < m; j++) Ainv[m * i + j] = Ainv[m * j + i] = A[m * i + j];
    return 0;
}

/* ---------------------------------------------------------------- Python entry points */

static int safe_double(PyObject *obj)
{
    if (!PyArray_CheckExact(obj)) return 0;
    PyArrayObject *a = (PyArrayObject *)obj;
    return PyArray_TYPE(a) == NPY_DOUBLE && PyArray_ISNOTSWAPPED(a) && PyArray_ISALIGNED(a)
           && PyArray_IS_C_CONTIGUOUS(a);
}

/* a clean float64 array of `size` finite numbers and `ndim` dimensions (0: any), or NULL */
static const double *clean(PyObject *obj, npy_intp size, int ndim)
{
    if (!safe_double(obj)) return NULL;
    PyArrayObject *a = (PyArrayObject *)obj;
    if (PyArray_SIZE(a) != size || (ndim && PyArray_NDIM(a) != ndim)) return NULL;
    const double *x = (const double *)PyArray_DATA(a);
    for (npy_intp k = 0; k < size; k++)
        if (!isfinite(x[k])) return NULL;
    return x;
}

#define TREE_CAPSULE "robodyn.tree_engine.tree"

static void tree_free(PyObject *capsule)
{
    free(PyCapsule_GetPointer(capsule, TREE_CAPSULE));
}

/* robodyn's own error class (robodyn.errors.ArgumentTypeError), looked up once by the module
 * init: the engine's refusals have the house message "function: argument: expected ..., got" */
static PyObject *ArgumentTypeError;

static int load_errors(void)
{
    PyObject *m = PyImport_ImportModule("robodyn.errors");
    if (!m) return -1;
    ArgumentTypeError = PyObject_GetAttrString(m, "ArgumentTypeError");
    Py_DECREF(m);
    return ArgumentTypeError ? 0 : -1;
}

static PyObject *bad_tree(const char *why)
{
    PyErr_Format(ArgumentTypeError, "tree_engine.tree: data: expected a well-formed tree "
                 "(parents, kinds, axes, placements, inertias, floating), got malformed data "
                 "(%s)", why);
    return NULL;
}

/* tree(parents, kinds, axes, placements, inertias, floating) -> capsule */
static PyObject *py_tree(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) return bad_tree("6 arguments");
    if (!PyArray_CheckExact(args[0]) || PyArray_NDIM((PyArrayObject *)args[0]) != 1)
        return bad_tree("parents");
    npy_intp n = PyArray_DIM((PyArrayObject *)args[0], 0);
    if (n < 1 || n > 100000) return bad_tree("n");
    const double *par = clean(args[0], n, 1), *kind = clean(args[1], n, 1);
    const double *axes = clean(args[2], 3 * n, 2), *P = clean(args[3], 16 * n, 3);
    const double *In = clean(args[4], 36 * (n + 1), 3);
    int floating = PyObject_IsTrue(args[5]);
    if (!par || !kind || !axes || !P || !In || floating < 0) return bad_tree("arrays");
    size_t doubles = 3 * n + 36 * n + 3 * n + 36 * (n + 1), ints = 2 * n;
    Tree *t = malloc(sizeof(Tree) + doubles * sizeof(double) + ints * sizeof(int));
    if (!t) return PyErr_NoMemory();
    double *d = (double *)(t + 1);
    t->n = (int)n;
    t->floating = floating;
    t->nv = (int)n + (floating ? 6 : 0);
    t->axis = d; d += 3 * n;
    t->R0 = d; d += 9 * n;
    t->R1 = d; d += 9 * n;
    t->R2 = d; d += 9 * n;
    t->p0 = d; d += 3 * n;
    t->inertia = d; d += 36 * (n + 1);
    t->parent = (int *)d;
    t->kind = t->parent + n;
    memcpy(t->inertia, In, 36 * (n + 1) * sizeof(double));
    for (npy_intp i = 0; i < n; i++) {
        const double *a = axes + 3 * i, *H = P + 16 * i;
        if (par[i] != floor(par[i]) || par[i] < -1 || par[i] >= i
            || (kind[i] != 0.0 && kind[i] != 1.0)) {
            free(t);
            return bad_tree("parents or kinds");
        }
        t->parent[i] = (int)par[i];
        t->kind[i] = (int)kind[i];
        memcpy(t->axis + 3 * i, a, 3 * sizeof(double));
        const double K[9] = {0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0};
        double K2[9], R[9] = {H[0], H[1], H[2], H[4], H[5], H[6], H[8], H[9], H[10]};
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                K2[3 * r + c] = K[3 * r] * K[c] + K[3 * r + 1] * K[3 + c] + K[3 * r + 2] * K[6 + c];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                double s1 = 0, s2 = 0;
                for (int k = 0; k < 3; k++) {
                    s1 += R[3 * r + k] * K[3 * k + c];
                    s2 += R[3 * r + k] * K2[3 * k + c];
                }
                t->R0[9 * i + 3 * r + c] = R[3 * r + c];
                t->R1[9 * i + 3 * r + c] = s1;
                t->R2[9 * i + 3 * r + c] = s2;
            }
        t->p0[3 * i] = H[3]; t->p0[3 * i + 1] = H[7]; t->p0[3 * i + 2] = H[11];
    }
    PyObject *cap = PyCapsule_New(t, TREE_CAPSULE, tree_free);
    if (!cap) free(t);
    return cap;
}

static Tree *tree_of(PyObject *obj)
{
    if (PyCapsule_CheckExact(obj)) {
        Tree *t = PyCapsule_GetPointer(obj, TREE_CAPSULE);
        if (t) return t;
        PyErr_Clear();
    }
    PyErr_Format(ArgumentTypeError, "tree_engine: tree: expected the handle of tree(), got "
                 "%.100s", Py_TYPE(obj)->tp_name);
    return NULL;
}

#define SMALL 64

/* H a rigid motion to 1e-6 (R^T R = 1, det R > 0, last row (0, 0, 0, 1)), as
 * robodyn.rigid_motion checks a pose: anything else is declined (the numpy path raises) */
static int rigid(const double *H)
{
    if (H[12] != 0.0 || H[13] != 0.0 || H[14] != 0.0 || H[15] != 1.0) return 0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            double s = H[r] * H[c] + H[4 + r] * H[4 + c] + H[8 + r] * H[8 + c];
            if (fabs(s - (r == c)) > 1e-6) return 0;
        }
    double det = H[0] * (H[5] * H[10] - H[6] * H[9]) - H[1] * (H[4] * H[10] - H[6] * H[8])
                 + H[2] * (H[4] * H[9] - H[5] * H[8]);
    return det > 0.0;
}

/* (tree, q, x, y, base_pose, gravity): the common arguments of rnea and aba; 1 ready, 0 decline,
 * -1 error */
static int args_of(PyObject *const *args, Py_ssize_t nargs, Tree **t, const double **q,
                   const double **x, const double **y, const double **Hb, const double **g)
{
    if (nargs != 6) {
        PyErr_Format(ArgumentTypeError, "tree_engine: arguments: expected 6 (tree, q, x, y, "
                     "base_pose, gravity), got %zd", nargs);
        return -1;
    }
    if (!(*t = tree_of(args[0]))) return -1;
    const int n = (*t)->n, nv = (*t)->nv;
    *q = clean(args[1], n, 1);
    *x = clean(args[2], nv, 1);
    *y = clean(args[3], nv, 1);
    *Hb = clean(args[4], 16, 2);
    *g = clean(args[5], 3, 1);
    return *q && *x && *y && *Hb && *g && rigid(*Hb);
}

static PyObject *vector_result(PyObject *out, npy_intp size)
{
    const double *x = PyArray_DATA((PyArrayObject *)out);
    for (npy_intp k = 0; k < size; k++)
        if (!isfinite(x[k])) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
    return out;
}

static PyObject *run(PyObject *const *args, Py_ssize_t nargs, int which)
{
    Tree *t;
    const double *q, *x, *y, *Hb, *g;
    int ok = args_of(args, nargs, &t, &q, &x, &y, &Hb, &g);
    if (ok < 0) return NULL;
    if (ok == 0) Py_RETURN_NONE;
    npy_intp dim = t->nv;
    PyObject *out = PyArray_SimpleNew(1, &dim, NPY_DOUBLE);
    if (!out) return NULL;
    size_t need = (size_t)(t->n + 1) * 90;
    double small[SMALL * 90], *work = need <= sizeof small / sizeof(double) ? small
                                       : malloc(need * sizeof(double));
    if (!work) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    double *o = PyArray_DATA((PyArrayObject *)out);
    int status = 0;
    if (which == 0) rnea(t, q, x, y, Hb, g, work, o);
    else status = aba(t, q, x, y, Hb, g, work, o);
    if (work != small) free(work);
    if (status) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return vector_result(out, dim);
}

/* rnea(tree, q, nu, dnu, base_pose, gravity) -> generalized forces, or None */
static PyObject *py_rnea(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return run(args, nargs, 0);
}

/* aba(tree, q, nu, tau, base_pose, gravity) -> accelerations, or None */
static PyObject *py_aba(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return run(args, nargs, 1);
}

/* crba(tree, q) -> M, or None */
static PyObject *py_crba(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(ArgumentTypeError, "tree_engine.crba: arguments: expected 2 (tree, q), "
                     "got %zd", nargs);
        return NULL;
    }
    Tree *t = tree_of(args[0]);
    if (!t) return NULL;
    const double *q = clean(args[1], t->n, 1);
    if (!q) Py_RETURN_NONE;
    npy_intp dims[2] = {t->nv, t->nv};
    PyObject *out = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (!out) return NULL;
    size_t need = (size_t)(t->n + 1) * 48;
    double small[SMALL * 48], *work = need <= sizeof small / sizeof(double) ? small
                                       : malloc(need * sizeof(double));
    if (!work) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    crba(t, q, work, PyArray_DATA((PyArrayObject *)out));
    if (work != small) free(work);
    return vector_result(out, (npy_intp)t->nv * t->nv);
}

static PyObject *matrices_or_none(int count, PyObject **o, npy_intp size)
{
    for (int k = 0; k < count; k++) {
        const double *x = PyArray_DATA((PyArrayObject *)o[k]);
        for (npy_intp i = 0; i < size; i++)
            if (!isfinite(x[i])) {
                for (int j = 0; j < count; j++) Py_DECREF(o[j]);
                Py_RETURN_NONE;
            }
    }
    PyObject *t = PyTuple_New(count);
    if (!t) {
        for (int j = 0; j < count; j++) Py_DECREF(o[j]);
        return NULL;
    }
    for (int k = 0; k < count; k++) PyTuple_SET_ITEM(t, k, o[k]);
    return t;
}

/* rnea_derivatives(tree, q, nu, dnu, base_pose, gravity) -> (dq, dnu) or None;
 * aba_derivatives(tree, q, nu, tau, base_pose, gravity) -> (da/dq, da/dnu, Minv) or None */
static PyObject *derivs(PyObject *const *args, Py_ssize_t nargs, int aba_too)
{
    Tree *t;
    const double *q, *x, *y, *Hb, *g;
    int ok = args_of(args, nargs, &t, &q, &x, &y, &Hb, &g);
    if (ok < 0) return NULL;
    if (ok == 0) Py_RETURN_NONE;
    const int m = t->nv, count = aba_too ? 3 : 2;
    npy_intp dims[2] = {m, m};
    PyObject *o[3] = {NULL, NULL, NULL};
    for (int k = 0; k < count; k++)
        if (!(o[k] = PyArray_SimpleNew(2, dims, NPY_DOUBLE))) {
            for (int j = 0; j < k; j++) Py_DECREF(o[j]);
            return NULL;
        }
    size_t need = (size_t)(t->n + 1) * DWORK + (aba_too ? 3 * (size_t)m * m + m : 0);
    double *work = malloc(need * sizeof(double));
    if (!work) {
        for (int j = 0; j < count; j++) Py_DECREF(o[j]);
        return PyErr_NoMemory();
    }
    double *D0 = PyArray_DATA((PyArrayObject *)o[0]), *D1 = PyArray_DATA((PyArrayObject *)o[1]);
    int status = 0;
    if (!aba_too) {
        rnea_derivatives(t, q, x, y, Hb, g, work, D0, D1);
    } else {
        double *dq = work + (size_t)(t->n + 1) * DWORK, *dv = dq + (size_t)m * m;
        double *M = dv + (size_t)m * m, *acc = M + (size_t)m * m;
        double *Minv = PyArray_DATA((PyArrayObject *)o[2]);
        /* acc = Minv (tau - rnea(q, nu, 0)): M^-1 is wanted anyway, and one RNEA is cheaper
         * than one ABA */
        crba(t, q, work, M);
        status = spd_inverse(m, M, Minv);
        if (!status) {
            memset(dv, 0, (size_t)m * sizeof(double));
            rnea(t, q, x, dv, Hb, g, work, dq);
            for (int i = 0; i < m; i++) {
                double a = 0.0;
                for (int k = 0; k < m; k++) a += Minv[m * i + k] * (y[k] - dq[k]);
                acc[i] = a;
            }
            rnea_derivatives(t, q, x, acc, Hb, g, work, dq, dv);
        }
        if (!status)                   /* D = -Minv (dq, dv), rows streamed (vectorizable) */
            for (int i = 0; i < m; i++) {
                double *r0 = D0 + (size_t)m * i, *r1 = D1 + (size_t)m * i;
                for (int j = 0; j < m; j++) r0[j] = r1[j] = 0.0;
                for (int k = 0; k < m; k++) {
                    const double a = -Minv[m * i + k], *x0 = dq + (size_t)m * k;
                    const double *x1 = dv + (size_t)m * k;
                    if (a == 0.0) continue;
                    for (int j = 0; j < m; j++) {
                        r0[j] += a * x0[j];
                        r1[j] += a * x1[j];
                    }
                }
            }
    }
    free(work);
    if (status) {
        for (int j = 0; j < count; j++) Py_DECREF(o[j]);
        Py_RETURN_NONE;
    }
    return matrices_or_none(count, o, (npy_intp)m * m);
}

static PyObject *py_rnea_derivatives(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return derivs(args, nargs, 0);
}

static PyObject *py_aba_derivatives(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return derivs(args, nargs, 1);
}

static PyMethodDef methods[] = {
    {"rnea_derivatives", (PyCFunction)(void (*)(void))py_rnea_derivatives, METH_FASTCALL,
     "RNEA derivatives"},
    {"aba_derivatives", (PyCFunction)(void (*)(void))py_aba_derivatives, METH_FASTCALL,
     "ABA derivatives"},
    {"tree", (PyCFunction)(void (*)(void))py_tree, METH_FASTCALL, "tree handle"},
    {"rnea", (PyCFunction)(void (*)(void))py_rnea, METH_FASTCALL, "inverse dynamics"},
    {"crba", (PyCFunction)(void (*)(void))py_crba, METH_FASTCALL, "mass matrix"},
    {"aba", (PyCFunction)(void (*)(void))py_aba, METH_FASTCALL, "forward dynamics"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "MODNAME", NULL, -1, methods
};

PyMODINIT_FUNC PyInit_MODNAME(void)
{
    import_array();
    if (load_errors()) return NULL;
    return PyModule_Create(&module);
}
