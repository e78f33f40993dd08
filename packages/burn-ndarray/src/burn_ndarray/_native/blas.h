/* numpy's cblas GEMMs as conv.c and gemm.c call them (pointers handed over by conv_set_gemm).
 * 64-bit integer arguments: an ILP64 build (numpy's scipy_openblas64_) reads them whole, and on
 * x86-64 / aarch64 Linux an LP64 build reads the low 32 bits of the same register or stack slot. */
#ifndef BURN_BLAS_H
#define BURN_BLAS_H

#define HIDDEN __attribute__((visibility("hidden")))

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

typedef void (*sgemm_fn)(long, long, long, long, long, long, float, const float *, long,
                         const float *, long, float, float *, long);
typedef void (*dgemm_fn)(long, long, long, long, long, long, double, const double *, long,
                         const double *, long, double, double *, long);
typedef int (*set_local_fn)(int);

extern HIDDEN sgemm_fn g_sgemm;
extern HIDDEN dgemm_fn g_dgemm;
extern HIDDEN set_local_fn g_set_local;

/* Set this OpenMP thread's OpenBLAS count to 1 (returns the previous one), and restore it. */
HIDDEN int blas_local_begin(void);
HIDDEN void blas_local_end(int prev);

#endif
