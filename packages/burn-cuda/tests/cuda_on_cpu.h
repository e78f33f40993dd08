// CUDA C kernels compiled as plain C++ by g++ and run on the CPU over a launch's grid.
//
// `cuda_on_cpu.py` prepends this header to a kernel source (the exact text burn_cuda hands
// NVRTC) and appends one entry point per `extern "C" __global__` kernel. A launch runs every
// block of the grid in turn, and every thread of a block either as a plain call (kernels
// without barriers) or as a fiber (kernels that call __syncthreads or a warp shuffle: each
// thread runs until it reaches a barrier, and the barrier opens when every thread still
// running has reached it). `__shared__` variables are function statics: one copy, shared by
// the threads of the block that is running (blocks never overlap).
//
// What this cannot show: real warp scheduling (threads of a warp run one after another, so a
// missing __syncwarp or a data race between threads never misbehaves here), memory ordering
// between blocks, NVRTC's float contraction (a * b + c as one FMA), and the GPU's math
// library's last-bit results.
#pragma once
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
  unsigned int x, y, z;
};
static dim3 threadIdx, blockIdx, blockDim, gridDim;

// -- integer and float helpers of the CUDA math API ------------------------------------------
static inline int max(int a, int b) { return a > b ? a : b; }
static inline int min(int a, int b) { return a < b ? a : b; }
static inline unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline float min(float a, float b) { return fminf(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return (unsigned int)(((unsigned long long)a * b) >> 32);
}
template <class To, class From>
static inline To burn_bits(From v) {
  static_assert(sizeof(To) == sizeof(From), "bit cast between types of one size");
  To r;
  memcpy(&r, &v, sizeof r);
  return r;
}
static inline float __int_as_float(int v) { return burn_bits<float>(v); }
static inline float __uint_as_float(unsigned int v) { return burn_bits<float>(v); }
static inline int __float_as_int(float v) { return burn_bits<int>(v); }
static inline unsigned int __float_as_uint(float v) { return burn_bits<unsigned int>(v); }
static inline double __longlong_as_double(long long v) { return burn_bits<double>(v); }
static inline long long __double_as_longlong(double v) { return burn_bits<long long>(v); }

// -- CUDA's vector types (what burn_gpu's vector kernels load and store), with their alignment
#define BURN_VEC4(name, T, align) \
  struct alignas(align) name {           \
    T x, y, z, w;                        \
  };
#define BURN_VEC2(name, T, align) \
  struct alignas(align) name {           \
    T x, y;                              \
  };
BURN_VEC4(float4, float, 16)
BURN_VEC4(int4, int, 16)
BURN_VEC4(short4, short, 8)
BURN_VEC4(ushort4, unsigned short, 8)
BURN_VEC4(char4, signed char, 4)
BURN_VEC4(uchar4, unsigned char, 4)
BURN_VEC2(double2, double, 16)
BURN_VEC2(longlong2, long long, 16)

// -- burn_gpu's float16 conversions (on the GPU: the PTX cvt instructions of its dialect, which
// g++ cannot compile; `BURN_F16_CVT` makes the kernel text skip them): GCC's _Float16, whose
// conversions are IEEE round to nearest even, as cvt.rn.f16.f32
#define BURN_F16_CVT
static inline float burn_h2f(unsigned short h) {
  _Float16 v;
  memcpy(&v, &h, sizeof v);
  return (float)v;
}
static inline unsigned short burn_f2h(float f) {
  _Float16 v = (_Float16)f;
  unsigned short h;
  memcpy(&h, &v, sizeof h);
  return h;
}

// -- atomics: threads never run at the same time here, so a plain read-modify-write -----------
template <class T>
static inline T atomicAdd(T* p, T v) {
  T old = *p;
  *p = old + v;
  return old;
}
template <class T>
static inline T atomicMax(T* p, T v) {
  T old = *p;
  if (v > old) *p = v;
  return old;
}
template <class T>
static inline T atomicMin(T* p, T v) {
  T old = *p;
  if (v < old) *p = v;
  return old;
}
template <class T>
static inline T atomicExch(T* p, T v) {
  T old = *p;
  *p = v;
  return old;
}
template <class T>
static inline T atomicCAS(T* p, T cmp, T v) {
  T old = *p;
  if (old == cmp) *p = v;
  return old;
}

// -- the fiber runtime: one fiber per thread of a block, for kernels with barriers -------------
enum { BURN_RUN = 0, BURN_AT_BLOCK = 1, BURN_AT_WARP = 2, BURN_DONE = 3 };
enum { BURN_STACK = 64 * 1024, BURN_MAX_THREADS = 1024 };
struct burn_fiber {
  ucontext_t ctx;
  int state;
  dim3 tid;
};
static ucontext_t burn_sched;
static burn_fiber burn_fibers[BURN_MAX_THREADS];
static char* burn_stacks;
static int burn_nthreads, burn_cur, burn_fibered;
static unsigned long long burn_xchg[BURN_MAX_THREADS];  // a shuffle's values, by thread
static void (*burn_thread_fn)();
//: set when a kernel does what the GPU cannot run (a barrier outside fiber mode, a deadlock)
static const char* burn_error;

static void burn_wait(int state) {
  if (!burn_fibered) {
    burn_error = "a barrier in a kernel launched without fibers";
    return;
  }
  burn_fibers[burn_cur].state = state;
  swapcontext(&burn_fibers[burn_cur].ctx, &burn_sched);
}
static inline void __syncthreads() { burn_wait(BURN_AT_BLOCK); }
static inline void __syncwarp(unsigned int = 0xffffffffu) { burn_wait(BURN_AT_WARP); }
static inline void __threadfence() {}

// A shuffle: every thread of the warp publishes its value, waits for the warp, reads its
// source lane's value, and waits again (so no value is overwritten before it is read). A
// source lane outside the warp (or past the block's last thread) gives the thread's own value,
// as on the GPU.
template <class T>
static inline T burn_shuffle(T v, int src_lane) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "shuffle of at most 8 bytes");
  int me = burn_cur, warp0 = me & ~31;
  memcpy(&burn_xchg[me], &v, sizeof(T));
  burn_wait(BURN_AT_WARP);
  T r = v;
  if (src_lane >= 0 && src_lane < 32 && warp0 + src_lane < burn_nthreads)
    memcpy(&r, &burn_xchg[warp0 + src_lane], sizeof(T));
  burn_wait(BURN_AT_WARP);
  return r;
}
template <class T>
static inline T __shfl_down_sync(unsigned int, T v, unsigned int d, int = 32) {
  int lane = burn_cur & 31;
  return burn_shuffle(v, lane + (int)d < 32 ? lane + (int)d : lane);
}
template <class T>
static inline T __shfl_up_sync(unsigned int, T v, unsigned int d, int = 32) {
  int lane = burn_cur & 31;
  return burn_shuffle(v, lane - (int)d >= 0 ? lane - (int)d : lane);
}
template <class T>
static inline T __shfl_xor_sync(unsigned int, T v, int m, int = 32) {
  return burn_shuffle(v, (burn_cur & 31) ^ m);
}
template <class T>
static inline T __shfl_sync(unsigned int, T v, int src, int = 32) {
  return burn_shuffle(v, src & 31);
}

static void burn_fiber_entry() {
  burn_thread_fn();
  burn_fibers[burn_cur].state = BURN_DONE;  // returning resumes burn_sched (uc_link)
}

// Runs one block as fibers; 0, or 1 when the threads deadlock (some wait at a barrier the
// others never reach: divergent __syncthreads, a shuffle inside a branch of one warp).
static int burn_run_block_fibers() {
  int n = burn_nthreads;
  if (burn_stacks == nullptr) burn_stacks = (char*)malloc((size_t)BURN_STACK * BURN_MAX_THREADS);
  for (int i = 0; i < n; ++i) {
    burn_fiber& f = burn_fibers[i];
    f.tid.x = i % blockDim.x;
    f.tid.y = (i / blockDim.x) % blockDim.y;
    f.tid.z = i / (blockDim.x * blockDim.y);
    f.state = BURN_RUN;
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = burn_stacks + (size_t)i * BURN_STACK;
    f.ctx.uc_stack.ss_size = BURN_STACK;
    f.ctx.uc_link = &burn_sched;
    makecontext(&f.ctx, burn_fiber_entry, 0);
  }
  for (;;) {
    for (int i = 0; i < n; ++i) {
      if (burn_fibers[i].state != BURN_RUN) continue;
      burn_cur = i;
      threadIdx = burn_fibers[i].tid;
      swapcontext(&burn_sched, &burn_fibers[i].ctx);
    }
    // every thread now waits or is done: open the barriers whose threads have all arrived
    int live = 0, at_block = 0, released = 0;
    for (int w = 0; w < n; w += 32) {
      int wlive = 0, wait = 0;
      for (int i = w; i < n && i < w + 32; ++i) {
        int s = burn_fibers[i].state;
        wlive += s != BURN_DONE;
        wait += s == BURN_AT_WARP;
        at_block += s == BURN_AT_BLOCK;
      }
      live += wlive;
      if (wait > 0 && wait == wlive) {
        for (int i = w; i < n && i < w + 32; ++i)
          if (burn_fibers[i].state == BURN_AT_WARP) burn_fibers[i].state = BURN_RUN;
        released = 1;
      }
    }
    if (live == 0) return 0;
    if (released) continue;
    if (at_block == live) {
      for (int i = 0; i < n; ++i)
        if (burn_fibers[i].state == BURN_AT_BLOCK) burn_fibers[i].state = BURN_RUN;
      continue;
    }
    burn_error = "threads of a block wait at barriers the others never reach (deadlock)";
    return 1;
  }
}

// Runs the grid: returns 0, or an error number (see `cuda_on_cpu.py`) for a launch the GPU
// rejects or a kernel this runtime cannot run.
static int burn_run_grid(void (*fn)(), unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, int fibered) {
  burn_error = nullptr;
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0) return 2;
  if (gy > 65535 || gz > 65535 || gx > 2147483647u) return 3;
  if (bx > 1024 || by > 1024 || bz > 64 || (unsigned long long)bx * by * bz > 1024) return 4;
  burn_thread_fn = fn;
  burn_fibered = fibered;
  burn_nthreads = (int)(bx * by * bz);
  gridDim = dim3{gx, gy, gz};
  blockDim = dim3{bx, by, bz};
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned y = 0; y < gy; ++y)
      for (unsigned x = 0; x < gx; ++x) {
        blockIdx = dim3{x, y, z};
        if (fibered) {
          if (burn_run_block_fibers()) return 5;
        } else {
          for (unsigned tz = 0; tz < bz; ++tz)
            for (unsigned ty = 0; ty < by; ++ty)
              for (unsigned tx = 0; tx < bx; ++tx) {
                threadIdx = dim3{tx, ty, tz};
                fn();
                if (burn_error) return 5;
              }
        }
      }
  return 0;
}

extern "C" const char* burn_cpu_error() { return burn_error ? burn_error : ""; }

// Calls kernel `f` with its parameters read from `params`, an array of pointers to each
// parameter's bytes: what cuLaunchKernel takes (a C `int` reads the first 4 bytes of its slot).
template <class... A, size_t... I>
static inline void burn_call(void (*f)(A...), void** params, std::index_sequence<I...>) {
  f(*static_cast<typename std::remove_cv<A>::type*>(params[I])...);
}
template <class... A>
static inline void burn_invoke(void (*f)(A...), void** params) {
  burn_call(f, params, std::index_sequence_for<A...>());
}
