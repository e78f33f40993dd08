/* Scratch memory on 64-byte cache lines, for the kernels' vector loads.
 *
 * Why: malloc returns 16-byte alignment, and where its block started depended on the heap (in
 * Python, on PYTHONHASHSEED): a 64-byte vector load off a line boundary reads two cache lines.
 * rnn.c's LSTM(64 -> 128) x 2 over 50 steps ran 0.59 or 0.90-0.95 ms per forward by the seed
 * until its scratch took this. aligned_alloc wants a size that is a multiple of the alignment.
 * Freed with free(). */
#ifndef BURN_LINEBUF_H
#define BURN_LINEBUF_H
#include <stdlib.h>

static inline void *line_alloc(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64); }

#endif
