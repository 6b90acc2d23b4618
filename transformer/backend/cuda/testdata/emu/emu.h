// emu.h: just enough of CUDA C++ to run kernels.cu on the CPU, for the
// CUDA backend's tests on machines without a GPU (package cuda's
// emu_test.go builds kernels.cu with this header into a shared library).
//
// A block's threads are fibers on one OS thread, switched at
// __syncthreads and warp shuffles (on x86-64 by emu_switch below, which
// saves the callee-saved registers only; elsewhere by ucontext, whose
// every switch is a system call for the signal mask), which are barriers of the whole block
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
    void* sp;  // the saved stack pointer (emu_switch)
    dim3 tid;
    int state;  // 0 running/runnable, 1 at barrier, 2 done
    int site;   // the source line of the barrier it waits at
    char* stack;
};

struct Block {
    Fiber* fibers = nullptr;
    int n = 0, cur = 0;
    ucontext_t sched;
    void* sched_sp = nullptr;
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

#if defined(__x86_64__)
#define EMU_SWITCH 1
// emu_switch(from, to) saves the callee-saved registers on the current
// stack, stores its pointer in *from and continues where to was saved
// (System V ABI: rbx, rbp, r12-r15; the kernels leave MXCSR and the x87
// control word alone).
extern "C" void emu_switch(void** from, void* to);
asm(R"(
	.text
	.globl emu_switch
	.hidden emu_switch
	.type emu_switch, @function
emu_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size emu_switch, .-emu_switch
)");
#endif

// to_sched switches from fiber f back to the block's scheduler.
inline void to_sched(Fiber* f) {
#ifdef EMU_SWITCH
    emu_switch(&f->sp, blk().sched_sp);
#else
    swapcontext(&f->ctx, &blk().sched);
#endif
}

inline void barrier(int site) {
    Block& b = blk();
    Fiber* f = &b.fibers[b.cur];
    f->state = 1;
    f->site = site;
    to_sched(f);
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

#ifdef EMU_SWITCH
// fiber_entry is where a fiber starts: emu_switch's ret lands here, on the
// frame start lays out.
[[noreturn]] static void fiber_entry() {
    Block& b = blk();
    b.body(b.arg);
    Fiber* f = &b.fibers[b.cur];
    f->state = 2;
    to_sched(f);
    __builtin_trap();  // a finished fiber is never resumed
}

// start makes f begin at fiber_entry when next resumed: on its stack, six
// zero registers for emu_switch to pop, fiber_entry's address for its ret,
// and a zero return address, so that fiber_entry starts with the stack
// aligned as after a call.
inline void start(Fiber& f, size_t stackSize) {
    uintptr_t top = ((uintptr_t)f.stack + stackSize) & ~(uintptr_t)15;
    void** frame = (void**)(top - 64);
    for (int i = 0; i < 6; i++) frame[i] = nullptr;
    frame[6] = (void*)&fiber_entry;
    frame[7] = nullptr;
    f.sp = frame;
}

inline void resume(Fiber& f) { emu_switch(&blk().sched_sp, f.sp); }
#else
static void trampoline(unsigned lo, unsigned hi) {
    (void)lo;
    (void)hi;
    Block& b = blk();
    b.body(b.arg);
    b.fibers[b.cur].state = 2;
    // returning switches to uc_link (the scheduler)
}

inline void start(Fiber& f, size_t stackSize) {
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack;
    f.ctx.uc_stack.ss_size = stackSize;
    f.ctx.uc_link = &blk().sched;
    makecontext(&f.ctx, (void (*)())trampoline, 2, 0u, 0u);
}

inline void resume(Fiber& f) { swapcontext(&blk().sched, &f.ctx); }
#endif

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
                    start(f, stackSize);
                }
                for (;;) {
                    int live = 0, waiting = 0;
                    for (int i = 0; i < n; i++) {
                        if (b.fibers[i].state == 0) {
                            b.cur = i;
                            resume(b.fibers[i]);
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
