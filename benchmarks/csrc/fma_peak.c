/* Peak float64 FMA rate: every OpenMP thread runs NCHAINS independent SIMD FMA chains
   acc = acc * m + a (enough chains to cover FMA latency x FMA pipes on current x86 cores);
   prints the best GFLOP/s over NTIMES (an FMA counts 2 flops per lane) and the thread count.
   Build: gcc -O3 -march=native -fopenmp (FMA contraction is gcc's default in GNU C mode). */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#if defined(__AVX512F__)
#define VBYTES 64
#elif defined(__AVX__)
#define VBYTES 32
#else
#define VBYTES 16
#endif
#define LANES (VBYTES / 8)
#define NCHAINS 12
typedef double vec __attribute__((vector_size(VBYTES)));

static double run(long iters) {
    double sum = 0.0;
#pragma omp parallel reduction(+ : sum)
    {
        vec acc[NCHAINS];
        const vec m = (vec){0} + 0.999999, a = (vec){0} + 1e-6;
        for (int c = 0; c < NCHAINS; ++c) acc[c] = (vec){0} + (double)(c + omp_get_thread_num());
        for (long it = 0; it < iters; ++it)
            for (int c = 0; c < NCHAINS; ++c) acc[c] = acc[c] * m + a;
        for (int c = 0; c < NCHAINS; ++c)
            for (int l = 0; l < LANES; ++l) sum += acc[c][l];
    }
    return sum;
}

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 20000000L;
    int ntimes = argc > 2 ? atoi(argv[2]) : 5;
    double best = 1e30, check = 0.0;
    run(iters / 10); /* wake the threads and the clocks */
    for (int t = 0; t < ntimes; ++t) {
        double t0 = omp_get_wtime();
        check += run(iters);
        double dt = omp_get_wtime() - t0;
        if (dt < best) best = dt;
    }
    double flops = 2.0 * LANES * NCHAINS * (double)iters * omp_get_max_threads();
    printf("%.6f %d %.1f\n", flops / best / 1e9, omp_get_max_threads(), check);
    return 0;
}
