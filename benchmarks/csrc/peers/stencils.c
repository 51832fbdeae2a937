/* Hand-written C/OpenMP peers of the stratoflow library stencils (stencils/library).

   Arrays are C-ordered (i, j, k) float64 with k contiguous, exactly as LIBRARY[name].allocate
   and the GT4Py numpy backend lay them out: shape (ni, nj, nz) = (nx + 2h, ny + 2h, nz).
   Each kernel computes i in [h, ni - h), j in [h, nj - h) and the stencil's vertical interval;
   loops run i (OpenMP, collapsed with j), j, k innermost (contiguous, vectorised).
   Arithmetic follows the GTScript definitions term by term (no -ffast-math), so results
   agree with GT4Py to rounding. */
#include <stddef.h>
#include <stdlib.h>

#define IDX(i, j, k) (((size_t)(i) * (size_t)nj + (size_t)(j)) * (size_t)nz + (size_t)(k))

/* A kernel of one input column c and one output column o computing o[k] = EXPR on levels
   [K_LO, nz - K_TOP): the i/j loop nest (OpenMP) and the vectorised k loop written once. */
#define COLUMN_KERNEL(NAME, K_LO, K_TOP, EXPR)                                                  \
    void NAME(const double *restrict in, double *restrict out, int ni, int nj, int nz, int h) { \
        const ptrdiff_t si = (ptrdiff_t)nj * nz, sj = nz;                                        \
        _Pragma("omp parallel for collapse(2) schedule(static)")                                 \
        for (int i = h; i < ni - h; ++i)                                                         \
            for (int j = h; j < nj - h; ++j) {                                                   \
                const double *restrict c = in + IDX(i, j, 0);                                    \
                double *restrict o = out + IDX(i, j, 0);                                         \
                _Pragma("omp simd")                                                              \
                for (int k = (K_LO); k < nz - (K_TOP); ++k) o[k] = (EXPR);                       \
            }                                                                                    \
    }

/* sum of the four horizontal neighbours of c[k] */
#define NEIGHBOURS_IJ (c[k + si] + c[k - si] + c[k + sj] + c[k - sj])

/* out = f[i+1] + f[i-1] + f[j+1] + f[j-1] - 4 f on every level. */
COLUMN_KERNEL(laplacian_2d, 0, 0, NEIGHBOURS_IJ - 4.0 * c[k])

/* out = lap_ij(f) + f[k+1] + f[k-1] - 2 f on levels 1..nz-2. */
COLUMN_KERNEL(laplacian_3d, 1, 1, NEIGHBOURS_IJ - 4.0 * c[k] + c[k + 1] + c[k - 1] - 2.0 * c[k])

/* out = 0.25 (f[i+1] + f[i-1] + f[j+1] + f[j-1]) on every level. */
COLUMN_KERNEL(jacobi_2d, 0, 0, 0.25 * NEIGHBOURS_IJ)

/* out = (sum of the 6 neighbours) / 6 on levels 1..nz-2. */
COLUMN_KERNEL(jacobi_3d, 1, 1, (NEIGHBOURS_IJ + c[k + 1] + c[k - 1]) / 6.0)

/* First-order upwind: phi - inc_x - inc_y, inc = c (phi - phi_upstream) on the upwind side. */
void upwind(const double *restrict phi, const double *restrict cx, const double *restrict cy,
            double *restrict out, int ni, int nj, int nz, int h) {
    const ptrdiff_t si = (ptrdiff_t)nj * nz, sj = nz;
#pragma omp parallel for collapse(2) schedule(static)
    for (int i = h; i < ni - h; ++i)
        for (int j = h; j < nj - h; ++j) {
            const size_t o = IDX(i, j, 0);
            const double *restrict p = phi + o;
            const double *restrict ux = cx + o, *restrict uy = cy + o;
            double *restrict r = out + o;
#pragma omp simd
            for (int k = 0; k < nz; ++k) {
                /* both one-sided increments, then a select: branch-free, so it vectorises */
                const double dx_m = ux[k] * (p[k] - p[k - si]), dx_p = ux[k] * (p[k + si] - p[k]);
                const double dy_m = uy[k] * (p[k] - p[k - sj]), dy_p = uy[k] * (p[k + sj] - p[k]);
                const double dx = ux[k] > 0.0 ? dx_m : dx_p;
                const double dy = uy[k] > 0.0 ? dy_m : dy_p;
                r[k] = p[k] - dx - dy;
            }
        }
}

/* Limited flux: zero where flux and the gradient of f have the same sign. */
static inline double hdiff_limit(double flux, double f_next, double f_here) {
    return flux * (f_next - f_here) > 0.0 ? 0.0 : flux;
}

/* Laplacian at offset o of the column at f (GTScript's order of terms). */
#define HDIFF_LAP(f, k, o, si, sj) \
    (4.0 * (f)[(k) + (o)] - ((f)[(k) + (o) + (si)] + (f)[(k) + (o) - (si)] \
                             + (f)[(k) + (o) + (sj)] + (f)[(k) + (o) - (sj)]))

/* COSMO horizontal diffusion (halo 2). Each thread owns whole i-rows and walks j; one fused
   k-loop per column computes the Laplacians of (i+1, j), (i-1, j), (i, j+1) and carries the
   Laplacian of (i, j) and the y-flux of (i, j-1) in k-vectors to the next j: 3 Laplacians per
   point instead of 5 (GT4Py inlines 8), nothing written but out. */
void hdiff(const double *restrict in, const double *restrict coeff, double *restrict out,
           int ni, int nj, int nz, int h) {
    const ptrdiff_t si = (ptrdiff_t)nj * nz, sj = nz;
#pragma omp parallel
    {
        double *restrict lap_c = malloc(2 * (size_t)nz * sizeof(double));
        double *restrict fly_s = lap_c + nz;
#pragma omp for schedule(static)
        for (int i = h; i < ni - h; ++i) {
            {   /* start of the walk: lap(i, h) and the y-flux between (i, h-1) and (i, h) */
                const double *restrict f = in + IDX(i, h, 0);
#pragma omp simd
                for (int k = 0; k < nz; ++k) {
                    lap_c[k] = HDIFF_LAP(f, k, 0, si, sj);
                    fly_s[k] = hdiff_limit(lap_c[k] - HDIFF_LAP(f, k, -sj, si, sj), f[k], f[k - sj]);
                }
            }
            for (int j = h; j < nj - h; ++j) {
                const size_t o = IDX(i, j, 0);
                const double *restrict f = in + o;
                const double *restrict cf = coeff + o;
                double *restrict r = out + o;
#pragma omp simd
                for (int k = 0; k < nz; ++k) {
                    const double lap_n = HDIFF_LAP(f, k, sj, si, sj);
                    const double lap_e = HDIFF_LAP(f, k, si, si, sj);
                    const double lap_w = HDIFF_LAP(f, k, -si, si, sj);
                    const double flx = hdiff_limit(lap_e - lap_c[k], f[k + si], f[k]);
                    const double flx_w = hdiff_limit(lap_c[k] - lap_w, f[k], f[k - si]);
                    const double fly = hdiff_limit(lap_n - lap_c[k], f[k + sj], f[k]);
                    r[k] = f[k] - cf[k] * (flx - flx_w + fly - fly_s[k]);
                    fly_s[k] = fly;
                    lap_c[k] = lap_n;
                }
            }
        }
        free(lap_c);
    }
}

/* Implicit vertical advection: Thomas algorithm per column (FORWARD elimination, BACKWARD
   substitution), c_k = w_k dt_dz / 2.  Columns are contiguous in k, so the recurrence cannot
   vectorise along k: each thread takes JB columns of one i-row, transposes them into k-major
   tiles (L1-resident), sweeps k with the JB columns in SIMD lanes (the divisions of JB
   independent recurrences overlap) and transposes the solution back. */
#define JB 8
void vadv(const double *restrict phi, const double *restrict w, double *restrict phi_new,
          int ni, int nj, int nz, int h, double dt_dz) {
    const int nblocks = (nj - 2 * h + JB - 1) / JB;
#pragma omp parallel
    {
        double *tile = aligned_alloc(64, 4 * (size_t)nz * JB * sizeof(double));
        double *restrict tp = tile, *restrict tw = tile + nz * JB;
        double *restrict cp = tile + 2 * nz * JB, *restrict dp = tile + 3 * nz * JB;
#pragma omp for collapse(2) schedule(static)
        for (int i = h; i < ni - h; ++i)
            for (int b = 0; b < nblocks; ++b) {
                const int j0 = h + b * JB;
                const int nb = (j0 + JB <= nj - h) ? JB : nj - h - j0;
                const double *restrict p = phi + IDX(i, j0, 0);
                const double *restrict v = w + IDX(i, j0, 0);
                double *restrict r = phi_new + IDX(i, j0, 0);
                for (int jj = 0; jj < JB; ++jj) /* a short last block repeats its last column */
                    for (int k = 0; k < nz; ++k) {
                        const int src = (jj < nb ? jj : nb - 1) * nz + k;
                        tp[k * JB + jj] = p[src];
                        tw[k * JB + jj] = v[src];
                    }
#pragma omp simd
                for (int jj = 0; jj < JB; ++jj) {
                    cp[jj] = 0.5 * tw[jj] * dt_dz;
                    dp[jj] = tp[jj];
                }
                for (int k = 1; k < nz; ++k) {
#pragma omp simd
                    for (int jj = 0; jj < JB; ++jj) {
                        const int o = k * JB + jj;
                        const double a = -0.5 * tw[o] * dt_dz;
                        const double denom = 1.0 - a * cp[o - JB];
                        cp[o] = 0.5 * tw[o] * dt_dz / denom; /* unused at the top level */
                        dp[o] = (tp[o] - a * dp[o - JB]) / denom;
                    }
                }
                /* BACKWARD: the solution overwrites dp in place */
                for (int k = nz - 2; k >= 0; --k) {
#pragma omp simd
                    for (int jj = 0; jj < JB; ++jj)
                        dp[k * JB + jj] = dp[k * JB + jj] - cp[k * JB + jj] * dp[(k + 1) * JB + jj];
                }
                for (int jj = 0; jj < nb; ++jj)
                    for (int k = 0; k < nz; ++k) r[jj * nz + k] = dp[k * JB + jj];
            }
        free(tile);
    }
}
