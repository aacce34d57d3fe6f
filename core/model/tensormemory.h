#pragma once

// Tensor memory on the CPU, kept for reuse. A training step allocates the same activations,
// gradients and temporaries, of the same sizes, step after step. Handed back to the C library,
// blocks of a few MiB either go back to the system and fault in again, page by page, on the
// next step (17 % of a step's time on a 33.6 M-weight model here), or stay on its heap, where
// long-lived tensors made between them leave holes the heap never returns (the same run held
// 440 MiB more than it used, past the memory plan). The cache keeps freed blocks of 1 MiB and
// more by size (eight sizes an octave) and hands each the smallest kept block that fits it, up
// to half as large again (twice as large above 32 MiB), so a step reuses the previous step's
// memory, even where a worker's share of the batch changes from step to step. A block that no
// step has taken for two steps is freed, and so is everything before an evaluation and after
// a run: what the cache holds never stays beside memory the run needs otherwise. It keeps at
// most an eighth of the memory a run's CPU device has (limitCachedTensorMemory; 1 GiB before
// one says), and a block freed past that goes back at once. Nor does it ever add to the peak:
// before a block is made afresh, kept ones are given back until live and kept blocks together
// hold no more than the live ones alone have held at their most.
//
// initTorchRuntime() installs it as LibTorch's CPU allocator. Other devices keep their own.

#include "model/internal.h"

#include <cstdint>

namespace tandem {

struct TensorMemoryCounts {
    int64_t cachedBytes = 0; // freed blocks kept for reuse
    int64_t liveBytes = 0;   // blocks of 1 MiB and more handed out and not yet freed
    int64_t reused = 0;      // allocations served from them
    int64_t fresh = 0;       // allocations of 1 MiB and more that were not
};

void installTensorMemoryCache();
// One step of training is over: blocks kept since before the previous step and not taken since
// are freed. Any thread.
void tensorMemoryStepDone();
// What the cache keeps at most from now on (a run's device memory, an eighth of it). Any thread.
// 0: it keeps nothing, frees what it kept, and hands each new block out at its own size, straight
// from LibTorch's allocator (a process that computes no steps).
void limitCachedTensorMemory(int64_t bytes);
// Frees every kept block. Any thread.
void releaseCachedTensorMemory();
TensorMemoryCounts tensorMemoryCounts();

} // namespace tandem
