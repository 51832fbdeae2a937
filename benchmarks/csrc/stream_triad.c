/* STREAM triad a[i] = b[i] + s*c[i]; prints the best bandwidth in GB/s over NTIMES.
   Bytes counted as in McCalpin's STREAM: 3 arrays x 8 bytes per element (no write-allocate). */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : (1L << 26);
    int ntimes = argc > 2 ? atoi(argv[2]) : 10;
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)),
           *c = malloc(n * sizeof(double));
    if (!a || !b || !c) { fprintf(stderr, "allocation of 3 x %ld doubles failed\n", n); return 1; }
    const double s = 3.0;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) { a[i] = 1.0; b[i] = 2.0; c[i] = 0.5; }
    double best = 1e30;
    for (int t = 0; t < ntimes; ++t) {
        double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
        double dt = omp_get_wtime() - t0;
        if (dt < best) best = dt;
    }
    double check = 0.0;
    for (long i = 0; i < n; i += 4096) check += a[i];
    printf("%.6f %d %.1f\n", 3.0 * 8.0 * n / best / 1e9, omp_get_max_threads(), check);
    free(a); free(b); free(c);
    return 0;
}
