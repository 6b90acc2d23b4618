// emu.h: just enough of CUDA C++ to run kernels.cu on the CPU, for the
// CUDA backend's tests on machines without a GPU (package cuda's
// emu_test.go builds kernels.cu with this header into a shared library).
//
// A block's threads are fibers (ucontext) on one OS thread, switched at
// __syncthreads and warp shuffles, which are barriers of the whole block
// here: the kernels call them uniformly in every block. Blocks run one
// after another; __shared__ variables are function-level statics. Not a
// timing or memory-model simulator: it checks index arithmetic, barriers,
// bounds and the numbers.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ucontext.h>

using std::max;
using std::min;

struct alignas(16) float4 {
    float x, y, z, w;
};

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define EMU_SHARED static

namespace emu {

struct Fiber {
    ucontext_t ctx;
    dim3 tid;
    int state;  // 0 running/runnable, 1 at barrier, 2 done
    int site;   // the source line of the barrier it waits at
    char* stack;
};

struct Block {
    Fiber* fibers = nullptr;
    int n = 0, cur = 0;
    ucontext_t sched;
    float shfl[1024];
    void (*body)(void*) = nullptr;
    void* arg = nullptr;
    dim3 idx, grid, block;  // blockIdx, gridDim, blockDim of the launch
};

inline Block& blk() {
    static Block b;
    return b;
}

inline Fiber* cur() { return &blk().fibers[blk().cur]; }

inline void barrier(int site) {
    Block& b = blk();
    Fiber* f = &b.fibers[b.cur];
    f->state = 1;
    f->site = site;
    swapcontext(&f->ctx, &b.sched);
}

// shfl_xor exchanges v between lanes t and t^mask; every thread of the
// block must call it (the kernels do: warp reductions over whole blocks).
inline float shfl_xor(float v, int mask, int site) {
    Block& b = blk();
    int t = b.cur;
    b.shfl[t] = v;
    barrier(site);
    float r = b.shfl[t ^ mask];
    barrier(site);
    return r;
}

}  // namespace emu

#define threadIdx (emu::cur()->tid)
#define blockIdx (emu::blk().idx)
#define gridDim (emu::blk().grid)
#define blockDim (emu::blk().block)
#define __syncthreads() emu::barrier(__LINE__)
#define __shfl_xor_sync(mask, v, lane) emu::shfl_xor((v), (lane), -__LINE__)

inline float __int_as_float(int i) {
    float f;
    std::memcpy(&f, &i, 4);
    return f;
}

namespace emu {

static void trampoline(unsigned lo, unsigned hi) {
    (void)lo;
    (void)hi;
    Block& b = blk();
    b.body(b.arg);
    b.fibers[b.cur].state = 2;
    // returning switches to uc_link (the scheduler)
}

// run calls body(arg) as every thread of every block of the grid.
inline int run(dim3 grid, dim3 block, void (*body)(void*), void* arg) {
    Block& b = blk();
    int n = (int)(block.x * block.y * block.z);
    if (n <= 0 || n > 1024) return 1;
    const size_t stackSize = 256 * 1024;
    if (b.n < n) {
        for (int i = 0; i < b.n; i++) free(b.fibers[i].stack);
        free(b.fibers);
        b.fibers = (Fiber*)calloc(n, sizeof(Fiber));
        for (int i = 0; i < n; i++) b.fibers[i].stack = (char*)malloc(stackSize);
        b.n = n;
    }
    b.body = body;
    b.arg = arg;
    b.grid = grid;
    b.block = block;
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                b.idx.x = bx;
                b.idx.y = by;
                b.idx.z = bz;
                for (int i = 0; i < n; i++) {
                    Fiber& f = b.fibers[i];
                    f.tid.x = i % block.x;
                    f.tid.y = (i / block.x) % block.y;
                    f.tid.z = i / (block.x * block.y);
                    f.state = 0;
                    getcontext(&f.ctx);
                    f.ctx.uc_stack.ss_sp = f.stack;
                    f.ctx.uc_stack.ss_size = stackSize;
                    f.ctx.uc_link = &b.sched;
                    makecontext(&f.ctx, (void (*)())trampoline, 2, 0u, 0u);
                }
                for (;;) {
                    int live = 0, waiting = 0;
                    for (int i = 0; i < n; i++) {
                        if (b.fibers[i].state == 0) {
                            b.cur = i;
                            swapcontext(&b.sched, &b.fibers[i].ctx);
                        }
                    }
                    for (int i = 0; i < n; i++) {
                        if (b.fibers[i].state != 2) live++;
                        if (b.fibers[i].state == 1) waiting++;
                    }
                    if (live == 0) break;
                    // every live thread is at a barrier (the others have
                    // returned): all must wait at the same one, as on a
                    // GPU, where threads at different __syncthreads (or a
                    // shuffle with exited lanes) are undefined behaviour
                    int site = 0;
                    for (int i = 0; i < n; i++)
                        if (b.fibers[i].state == 1) {
                            if (site == 0) site = b.fibers[i].site;
                            if (b.fibers[i].site != site) {
                                std::fprintf(stderr, "emu: threads of block (%u,%u,%u) wait at different barriers (lines %d and %d)\n", bx, by, bz, site, b.fibers[i].site);
                                return 3;
                            }
                        }
                    if (site < 0 && live != n) {
                        std::fprintf(stderr, "emu: a warp shuffle (line %d) in block (%u,%u,%u) after %d threads returned\n", -site, bx, by, bz, n - live);
                        return 3;
                    }
                    for (int i = 0; i < n; i++)
                        if (b.fibers[i].state == 1) b.fibers[i].state = 0;
                    (void)waiting;
                }
            }
    return 0;
}

}  // namespace emu
