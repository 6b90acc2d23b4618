// Kernels of vomc's CUDA backend (package transformer/backend/cuda), one or
// more per op of backend.Backend; the op's math is in its doc comment in
// transformer/backend/backend.go. Compiled to PTX for sm_80 (gen_ptx.sh)
// and embedded in the Go package; the driver JIT-compiles it for the GPU
// at hand. The same file compiles as C++ with emu.h (the test emulator,
// VOMC_EMU) so the kernels' logic is tested without a GPU.
//
// Rules that keep results deterministic (bit-identical from run to run):
// no atomics; every sum over rows is done in fixed chunks whose partial
// sums are added in chunk order by a second kernel; block sizes and grids
// depend only on the shapes. Each kernel is extern "C" (stable names).
// Conventions: float32 tensors, row-major; rows = B·T; "+=" kernels
// accumulate, as the interface's backward ops do.

#ifdef VOMC_EMU
#include "emu.h"
#else
#define EMU_SHARED __shared__
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

typedef unsigned char u8;
typedef long long i64;

// ---------------------------------------------------------------------
// elementwise

extern "C" __global__ void k_add(float* out, const float* a, const float* b, i64 n) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

extern "C" __global__ void k_scale(float* x, float s, i64 n) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * s;
}

// GELU with erf: x·Φ(x), Φ(x) = ½(1 + erf(x/√2)).
__device__ __forceinline__ float gelu_cdf(float x) { return 0.5f * (1.0f + erff(x * 0.70710678118654752f)); }

// act 0 = ReLU, 1 = GELU (backend.Activation).
extern "C" __global__ void k_act_fwd(int act, float* out, const float* inp, i64 n) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = inp[i];
    out[i] = act == 0 ? fmaxf(x, 0.0f) : x * gelu_cdf(x);
}

// dinp = dout·act'(inp) (overwrites).
extern "C" __global__ void k_act_bwd(int act, float* dinp, const float* inp, const float* dout, i64 n) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = inp[i];
    float d;
    if (act == 0) {
        d = x > 0.0f ? 1.0f : 0.0f;
    } else {
        // Φ(x) + x·φ(x), φ(x) = e^{−x²/2}/√(2π)
        d = gelu_cdf(x) + x * 0.39894228040143268f * expf(-0.5f * x * x);
    }
    dinp[i] = act == 0 ? (x > 0.0f ? dout[i] : 0.0f) : dout[i] * d;
}

// AdamW (PyTorch's), with the bias corrections c1 = 1/(1−β1^t), c2 =
// 1/(1−β2^t) and decay = 1 − lr·wd computed on the host; the update is
// evaluated in double as the CPU backend does.
extern "C" __global__ void k_adamw(float* p, const float* g, float* m, float* v, i64 n, float b1, float b2,
                                   double c1, double c2, double lr, float decay, double eps) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float gi = g[i];
    float mi = b1 * m[i] + (1.0f - b1) * gi;
    float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    double upd = (double)mi * c1 / (sqrt((double)vi * c2) + eps);
    p[i] = p[i] * decay - (float)(lr * upd);
}

// ---------------------------------------------------------------------
// reductions to double partial sums (one per block of 256 threads; the
// host adds the partials in order)

#define RED_THREADS 256

__device__ void block_sum_double(double* sh, double v, double* out) {
    int t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (int s = RED_THREADS / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    if (t == 0) *out = sh[0];
}

// partial[block] = Σ x[i]² over the block's grid-stride elements.
extern "C" __global__ void k_sumsq_partial(const float* x, i64 n, double* partial) {
    EMU_SHARED double sh[RED_THREADS];
    double acc = 0;
    for (i64 i = (i64)blockIdx.x * RED_THREADS + threadIdx.x; i < n; i += (i64)gridDim.x * RED_THREADS) {
        double v = x[i];
        acc += v * v;
    }
    block_sum_double(sh, acc, &partial[blockIdx.x]);
}

// partial[block] = Σ x[i] (double input).
extern "C" __global__ void k_dsum_partial(const double* x, i64 n, double* partial) {
    EMU_SHARED double sh[RED_THREADS];
    double acc = 0;
    for (i64 i = (i64)blockIdx.x * RED_THREADS + threadIdx.x; i < n; i += (i64)gridDim.x * RED_THREADS) acc += x[i];
    block_sum_double(sh, acc, &partial[blockIdx.x]);
}

// ---------------------------------------------------------------------
// column sums in two steps: partial[k*n + i] = Σ_{r in chunk k} x[r*ld + i]
// (chunks of `chunk` rows), then dst[i] += Σ_k partial[k*pstride + i].

extern "C" __global__ void k_colsum_partial(float* partial, const float* x, int rows, int n, int ld, int chunk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.y;
    if (i >= n) return;
    int r0 = k * chunk, r1 = min(rows, r0 + chunk);
    float acc = 0;
    for (int r = r0; r < r1; r++) acc += x[(i64)r * ld + i];
    partial[(i64)k * n + i] = acc;
}

extern "C" __global__ void k_colsum_final(float* dst, const float* partial, int nparts, int n, int pstride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0;
    for (int k = 0; k < nparts; k++) acc += partial[(i64)k * pstride + i];
    dst[i] += acc;
}

// ---------------------------------------------------------------------
// encoder

// out[r,c] = wte[tok[r],c] + pos[(r mod T),c]
extern "C" __global__ void k_encoder_fwd(float* out, const u8* tok, const float* wte, const float* pos, int B, int T, int C) {
    i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (i64)B * T * C) return;
    i64 r = e / C;
    int c = (int)(e % C);
    int t = (int)(r % T);
    out[e] = wte[(i64)tok[r] * C + c] + pos[(i64)t * C + c];
}

// dpos[t,c] += Σ_b dout[b,t,c]
extern "C" __global__ void k_encoder_bwd_pos(float* dpos, const float* dout, int B, int T, int C) {
    i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (i64)T * C) return;
    float acc = 0;
    for (int b = 0; b < B; b++) acc += dout[(i64)b * T * C + e];
    dpos[e] += acc;
}

// partial[k][a][c] = Σ_{r in chunk k, tok[r] = a} dout[r,c]; grid (⌈C/bx⌉, chunks, A)
extern "C" __global__ void k_encoder_bwd_wte_partial(float* partial, const float* dout, const u8* tok, int rows, int C, int A, int chunk) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.y, a = blockIdx.z;
    if (c >= C) return;
    int r0 = k * chunk, r1 = min(rows, r0 + chunk);
    float acc = 0;
    for (int r = r0; r < r1; r++)
        if (tok[r] == a) acc += dout[(i64)r * C + c];
    partial[((i64)k * A + a) * C + c] = acc;
}

// ---------------------------------------------------------------------
// LayerNorm: one warp per row (8 rows per block of 256 threads)

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void k_layernorm_fwd(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int rows, int C) {
    int lane = threadIdx.x & 31;
    int row = blockIdx.x * 8 + (threadIdx.x >> 5);
    bool ok = row < rows;
    const float* x = inp + (i64)(ok ? row : 0) * C;
    float s = 0;
    if (ok)
        for (int i = lane; i < C; i += 32) s += x[i];
    float mu = warp_sum(s) / C;
    float q = 0;
    if (ok)
        for (int i = lane; i < C; i += 32) {
            float d = x[i] - mu;
            q += d * d;
        }
    float var = warp_sum(q) / C;
    float rs = 1.0f / sqrtf(var + 1e-5f);
    if (!ok) return;
    float* o = out + (i64)row * C;
    for (int i = lane; i < C; i += 32) o[i] = (x[i] - mu) * rs * w[i] + b[i];
    if (lane == 0) {
        if (mean) mean[row] = mu;
        if (rstd) rstd[row] = rs;
    }
}

// dinp += rstd·(g − mean(g) − x̂·mean(g·x̂)), g = dout·w
extern "C" __global__ void k_layernorm_bwd_dinp(float* dinp, const float* dout, const float* inp, const float* w, const float* mean, const float* rstd, int rows, int C) {
    int lane = threadIdx.x & 31;
    int row = blockIdx.x * 8 + (threadIdx.x >> 5);
    bool ok = row < rows;
    i64 off = (i64)(ok ? row : 0) * C;
    float mu = ok ? mean[row] : 0, rs = ok ? rstd[row] : 0;
    float sg = 0, sgx = 0;
    if (ok)
        for (int i = lane; i < C; i += 32) {
            float g = dout[off + i] * w[i];
            float xh = (inp[off + i] - mu) * rs;
            sg += g;
            sgx += g * xh;
        }
    float mg = warp_sum(sg) / C, mgx = warp_sum(sgx) / C;
    if (!ok) return;
    for (int i = lane; i < C; i += 32) {
        float g = dout[off + i] * w[i];
        float xh = (inp[off + i] - mu) * rs;
        dinp[off + i] += rs * (g - mg - xh * mgx);
    }
}

// partial[k][0..C) = Σ_{r in chunk k} dout·x̂, partial[k][C..2C) = Σ dout
extern "C" __global__ void k_layernorm_bwd_partial(float* partial, const float* dout, const float* inp, const float* mean, const float* rstd, int rows, int C, int chunk) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.y;
    if (c >= C) return;
    int r0 = k * chunk, r1 = min(rows, r0 + chunk);
    float sw = 0, sb = 0;
    for (int r = r0; r < r1; r++) {
        float d = dout[(i64)r * C + c];
        sw += d * (inp[(i64)r * C + c] - mean[r]) * rstd[r];
        sb += d;
    }
    partial[(i64)k * 2 * C + c] = sw;
    partial[(i64)k * 2 * C + C + c] = sb;
}

// ---------------------------------------------------------------------
// GEMM: Cm[m,n] = beta·Cm[m,n] + Σ_k A(m,k)·B(k,n), A(m,k) = A[m·sam + k·sak],
// B(k,n) = B[k·sbk + n·sbn], Cm[m,n] at Cm[m·ldc + n]. Tiles of 64×64, 256
// threads, each 4×4 outputs; blockIdx.z splits K into chunks of kchunk:
// with partial, chunk z writes partial[z·M·N + m·N + n] (no beta) for
// k_splitk_reduce to add in order.

#define GT 64
#define GK 16

extern "C" __global__ void k_gemm(const float* A, const float* Bm, float* Cm, float* partial, int M, int N, int K,
                                  i64 sam, i64 sak, i64 sbk, i64 sbn, i64 ldc, float beta, int kchunk) {
    EMU_SHARED float As[GK][GT + 4];
    EMU_SHARED float Bs[GK][GT + 4];
    int tid = threadIdx.x;
    int tm = tid / 16, tn = tid % 16;  // 16×16 threads, each 4×4
    int m0 = blockIdx.x * GT, n0 = blockIdx.y * GT;  // grid (⌈M/64⌉, ⌈N/64⌉, splits)
    int kb = blockIdx.z * kchunk, ke = min(K, kb + kchunk);
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0;
    bool aK = sak == 1;  // k contiguous in A: threads walk k fastest
    bool bN = sbn == 1;  // n contiguous in B: threads walk n fastest
    for (int k0 = kb; k0 < ke; k0 += GK) {
        for (int e = tid; e < GK * GT; e += 256) {
            int kk, mm;
            if (aK) { kk = e % GK; mm = e / GK; } else { mm = e % GT; kk = e / GT; }
            int gm = m0 + mm, gk = k0 + kk;
            As[kk][mm] = (gm < M && gk < ke) ? A[gm * sam + gk * sak] : 0.0f;
            int nn, kk2;
            if (bN) { nn = e % GT; kk2 = e / GT; } else { kk2 = e % GK; nn = e / GK; }
            int gn = n0 + nn, gk2 = k0 + kk2;
            Bs[kk2][nn] = (gn < N && gk2 < ke) ? Bm[gk2 * sbk + gn * sbn] : 0.0f;
        }
        __syncthreads();
        for (int kk = 0; kk < GK; kk++) {
            float a[4], bv[4];
            for (int i = 0; i < 4; i++) a[i] = As[kk][tm + 16 * i];
            for (int j = 0; j < 4; j++) bv[j] = Bs[kk][tn + 16 * j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] += a[i] * bv[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++) {
        int gm = m0 + tm + 16 * i;
        if (gm >= M) continue;
        for (int j = 0; j < 4; j++) {
            int gn = n0 + tn + 16 * j;
            if (gn >= N) continue;
            if (partial) {
                partial[(i64)blockIdx.z * M * N + (i64)gm * N + gn] = acc[i][j];
            } else {
                float* c = &Cm[gm * ldc + gn];
                *c = beta == 0.0f ? acc[i][j] : beta * *c + acc[i][j];
            }
        }
    }
}

// k_gemm128 is k_gemm with 128×128 tiles, each of the 256 threads
// computing 8×8 outputs (rows ty·4..+3 and 64+ty·4..+3, columns likewise
// from tx) from float4 shared-memory reads: for the large products of
// training (rows = B·T in the hundreds of thousands). Same arguments.
#define G2T 128
#define G2K 8
#define G2W 33 /* float4 per shared row: 132 floats, so the transposing stores spread over the banks */

extern "C" __global__ void k_gemm128(const float* A, const float* Bm, float* Cm, float* partial, int M, int N, int K,
                                     i64 sam, i64 sak, i64 sbk, i64 sbn, i64 ldc, float beta, int kchunk) {
    EMU_SHARED float4 As4[G2K][G2W];
    EMU_SHARED float4 Bs4[G2K][G2W];
    float* As = (float*)&As4[0][0];
    float* Bs = (float*)&Bs4[0][0];
    int tid = threadIdx.x;
    int ty = tid / 16, tx = tid % 16;
    int m0 = blockIdx.x * G2T, n0 = blockIdx.y * G2T;
    int kb = blockIdx.z * kchunk, ke = min(K, kb + kchunk);
    float acc[8][8];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) acc[i][j] = 0;
    bool aK = sak == 1, bN = sbn == 1;
    for (int k0 = kb; k0 < ke; k0 += G2K) {
        for (int e = tid; e < G2K * G2T; e += 256) {
            int kk, mm;
            if (aK) { kk = e % G2K; mm = e / G2K; } else { mm = e % G2T; kk = e / G2T; }
            int gm = m0 + mm, gk = k0 + kk;
            As[kk * (4 * G2W) + mm] = (gm < M && gk < ke) ? A[gm * sam + gk * sak] : 0.0f;
            int nn, kk2;
            if (bN) { nn = e % G2T; kk2 = e / G2T; } else { kk2 = e % G2K; nn = e / G2K; }
            int gn = n0 + nn, gk2 = k0 + kk2;
            Bs[kk2 * (4 * G2W) + nn] = (gn < N && gk2 < ke) ? Bm[gk2 * sbk + gn * sbn] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < G2K; kk++) {
            float4 a0 = As4[kk][ty], a1 = As4[kk][16 + ty];
            float4 b0 = Bs4[kk][tx], b1 = Bs4[kk][16 + tx];
            float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] += a[i] * bv[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < 8; i++) {
        int gm = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
        if (gm >= M) continue;
        for (int j = 0; j < 8; j++) {
            int gn = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
            if (gn >= N) continue;
            if (partial) {
                partial[(i64)blockIdx.z * M * N + (i64)gm * N + gn] = acc[i][j];
            } else {
                float* c = &Cm[gm * ldc + gn];
                *c = beta == 0.0f ? acc[i][j] : beta * *c + acc[i][j];
            }
        }
    }
}

// Cm[m,n] = beta·Cm[m,n] + Σ_z partial[z][m][n]
extern "C" __global__ void k_splitk_reduce(float* Cm, const float* partial, int S, int M, int N, i64 ldc, float beta) {
    i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (i64)M * N) return;
    i64 m = e / N, n = e % N;
    float acc = 0;
    for (int z = 0; z < S; z++) acc += partial[(i64)z * M * N + e];
    float* c = &Cm[m * ldc + n];
    *c = beta == 0.0f ? acc : beta * *c + acc;
}

// out[r, o] += bias[o]
extern "C" __global__ void k_add_bias(float* out, const float* bias, int rows, int OC) {
    i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (i64)rows * OC) return;
    out[e] += bias[e % OC];
}

// ---------------------------------------------------------------------
// causal attention, fused: one thread per query (forward, dq) or key (dk,
// dv), 64 per block, grid (B·NH, ⌈T/64⌉), keys/queries staged through shared memory in tiles;
// no T×T matrix is written. Head size hs ≤ MAXHS (instances below).

#define AQ 64

// Tiles of keys (or queries) in shared memory as float4 rows of MAXHS
// floats (entries d ≥ hs are 0), so the inner loops read 4 values per
// shared-memory load. KT rows per tile keep each array at 16 KB or less.
template <int MAXHS>
struct Tile {
    static constexpr int KT = MAXHS <= 64 ? 64 : 4096 / MAXHS;
    static constexpr int W = MAXHS / 4;
};

// tile_load fills rows [0, KT) of dst (as floats) with src rows j0.. of
// stride ld (hs entries each), zero beyond T or hs. All AQ threads call it.
template <int MAXHS>
__device__ __forceinline__ void tile_load(float4* dst, const float* src, i64 ld, int j0, int T, int hs) {
    constexpr int KT = Tile<MAXHS>::KT;
    float* f = (float*)dst;
    for (int e = threadIdx.x; e < KT * MAXHS; e += AQ) {
        int jj = e / MAXHS, d = e % MAXHS, j = j0 + jj;
        f[e] = (j < T && d < hs) ? src[(i64)j * ld + d] : 0.0f;
    }
}

__device__ __forceinline__ float dot4(const float* q, float4 k) { return q[0] * k.x + q[1] * k.y + q[2] * k.z + q[3] * k.w; }

__device__ __forceinline__ void axpy4(float* a, float p, float4 v) {
    a[0] += p * v.x;
    a[1] += p * v.y;
    a[2] += p * v.z;
    a[3] += p * v.w;
}

template <int MAXHS>
__device__ void attn_fwd(float* out, float* lse, const float* qkv, int T, int C, int NH, int hs, float scale) {
    constexpr int KT = Tile<MAXHS>::KT, W = Tile<MAXHS>::W;
    EMU_SHARED float4 Ks[KT][W];
    EMU_SHARED float4 Vs[KT][W];
    int bh = blockIdx.x, b = bh / NH, h = bh % NH;
    int i = blockIdx.y * AQ + threadIdx.x;
    i64 C3 = 3 * (i64)C;
    const float* base = qkv + (i64)b * T * C3 + (i64)h * hs;
    bool valid = i < T;
    int w4 = (hs + 3) / 4;
    float q[MAXHS], acc[MAXHS];
#pragma unroll
    for (int d = 0; d < MAXHS; d++) {
        q[d] = (valid && d < hs) ? base[(i64)i * C3 + d] * scale : 0.0f;
        acc[d] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    int iend = min(T, (int)(blockIdx.y * AQ + AQ));
    for (int j0 = 0; j0 < iend; j0 += KT) {
        __syncthreads();
        tile_load<MAXHS>(&Ks[0][0], base + C, C3, j0, T, hs);
        tile_load<MAXHS>(&Vs[0][0], base + 2 * C, C3, j0, T, hs);
        __syncthreads();
        if (valid) {
            int jmax = min(KT, i - j0 + 1);
            for (int jj = 0; jj < jmax; jj++) {
                float s = 0.0f;
#pragma unroll
                for (int c = 0; c < W; c++)
                    if (c < w4) s += dot4(&q[4 * c], Ks[jj][c]);
                if (s > m) {
                    float corr = expf(m - s);
                    l *= corr;
#pragma unroll
                    for (int d = 0; d < MAXHS; d++) acc[d] *= corr;
                    m = s;
                }
                float p = expf(s - m);
                l += p;
#pragma unroll
                for (int c = 0; c < W; c++)
                    if (c < w4) axpy4(&acc[4 * c], p, Vs[jj][c]);
            }
        }
    }
    if (!valid) return;
    float inv = 1.0f / l;
    float* o = out + ((i64)b * T + i) * C + (i64)h * hs;
#pragma unroll
    for (int d = 0; d < MAXHS; d++)
        if (d < hs) o[d] = acc[d] * inv;
    if (lse) lse[(i64)bh * T + i] = m + logf(l);
}

// Per query i: D_i = dout_i·o_i (o_i recomputed from lse; kept in Dbuf for
// the key kernel), then dq_i += scale·Σ_{j≤i} P_ij (dout_i·v_j − D_i) k_j.
template <int MAXHS>
__device__ void attn_bwd_q(float* dqkv, float* Dbuf, const float* dout, const float* qkv, const float* lse, int T, int C, int NH, int hs, float scale) {
    constexpr int KT = Tile<MAXHS>::KT, W = Tile<MAXHS>::W;
    EMU_SHARED float4 Ks[KT][W];
    EMU_SHARED float4 Vs[KT][W];
    int bh = blockIdx.x, b = bh / NH, h = bh % NH;
    int i = blockIdx.y * AQ + threadIdx.x;
    i64 C3 = 3 * (i64)C;
    const float* base = qkv + (i64)b * T * C3 + (i64)h * hs;
    bool valid = i < T;
    int w4 = (hs + 3) / 4;
    float q[MAXHS], g[MAXHS], a[MAXHS];
#pragma unroll
    for (int d = 0; d < MAXHS; d++) {
        q[d] = (valid && d < hs) ? base[(i64)i * C3 + d] * scale : 0.0f;
        g[d] = (valid && d < hs) ? dout[((i64)b * T + i) * C + (i64)h * hs + d] : 0.0f;
        a[d] = 0.0f;
    }
    float L = valid ? lse[(i64)bh * T + i] : 0.0f;
    int iend = min(T, (int)(blockIdx.y * AQ + AQ));
    float D = 0.0f;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            // a held o_i: D_i = dout_i·o_i; a now accumulates dq_i / scale
#pragma unroll
            for (int d = 0; d < MAXHS; d++) {
                D += g[d] * a[d];
                a[d] = 0.0f;
            }
        }
        for (int j0 = 0; j0 < iend; j0 += KT) {
            __syncthreads();
            tile_load<MAXHS>(&Ks[0][0], base + C, C3, j0, T, hs);
            tile_load<MAXHS>(&Vs[0][0], base + 2 * C, C3, j0, T, hs);
            __syncthreads();
            if (!valid) continue;
            int jmax = min(KT, i - j0 + 1);
            for (int jj = 0; jj < jmax; jj++) {
                float s = 0.0f;
#pragma unroll
                for (int c = 0; c < W; c++)
                    if (c < w4) s += dot4(&q[4 * c], Ks[jj][c]);
                float p = expf(s - L);
                if (pass == 0) {
#pragma unroll
                    for (int c = 0; c < W; c++)
                        if (c < w4) axpy4(&a[4 * c], p, Vs[jj][c]);
                } else {
                    float dp = 0.0f;
#pragma unroll
                    for (int c = 0; c < W; c++)
                        if (c < w4) dp += dot4(&g[4 * c], Vs[jj][c]);
                    float ds = p * (dp - D);
#pragma unroll
                    for (int c = 0; c < W; c++)
                        if (c < w4) axpy4(&a[4 * c], ds, Ks[jj][c]);
                }
            }
        }
    }
    if (!valid) return;
    Dbuf[(i64)bh * T + i] = D;
    float* dq = dqkv + ((i64)b * T + i) * C3 + (i64)h * hs;
#pragma unroll
    for (int d = 0; d < MAXHS; d++)
        if (d < hs) dq[d] += a[d] * scale;
}

// Per key j: dv_j += Σ_{i≥j} P_ij dout_i, dk_j += scale·Σ_{i≥j} P_ij (dout_i·v_j − D_i) q_i.
template <int MAXHS>
__device__ void attn_bwd_kv(float* dqkv, const float* Dbuf, const float* dout, const float* qkv, const float* lse, int T, int C, int NH, int hs, float scale) {
    constexpr int QT = Tile<MAXHS>::KT, W = Tile<MAXHS>::W;
    EMU_SHARED float4 Qs[QT][W];
    EMU_SHARED float4 Gs[QT][W];
    EMU_SHARED float Ls[QT];
    EMU_SHARED float Ds[QT];
    int bh = blockIdx.x, b = bh / NH, h = bh % NH;
    int j = blockIdx.y * AQ + threadIdx.x;
    i64 C3 = 3 * (i64)C;
    const float* base = qkv + (i64)b * T * C3 + (i64)h * hs;
    const float* gbase = dout + (i64)b * T * C + (i64)h * hs;
    bool valid = j < T;
    int w4 = (hs + 3) / 4;
    float k[MAXHS], v[MAXHS], dk[MAXHS], dv[MAXHS];
#pragma unroll
    for (int d = 0; d < MAXHS; d++) {
        k[d] = (valid && d < hs) ? base[(i64)j * C3 + C + d] * scale : 0.0f;
        v[d] = (valid && d < hs) ? base[(i64)j * C3 + 2 * C + d] : 0.0f;
        dk[d] = 0.0f;
        dv[d] = 0.0f;
    }
    for (int i0 = blockIdx.y * AQ; i0 < T; i0 += QT) {
        __syncthreads();
        tile_load<MAXHS>(&Qs[0][0], base, C3, i0, T, hs);
        tile_load<MAXHS>(&Gs[0][0], gbase, C, i0, T, hs);
        for (int ii = threadIdx.x; ii < QT; ii += AQ) {
            int i = i0 + ii;
            Ls[ii] = i < T ? lse[(i64)bh * T + i] : 0.0f;
            Ds[ii] = i < T ? Dbuf[(i64)bh * T + i] : 0.0f;
        }
        __syncthreads();
        if (!valid) continue;
        int iimax = min(QT, T - i0);
        for (int ii = max(0, j - i0); ii < iimax; ii++) {
            float s = 0.0f, dp = 0.0f;
#pragma unroll
            for (int c = 0; c < W; c++)
                if (c < w4) {
                    s += dot4(&k[4 * c], Qs[ii][c]);
                    dp += dot4(&v[4 * c], Gs[ii][c]);
                }
            float p = expf(s - Ls[ii]);
            float ds = p * (dp - Ds[ii]);
#pragma unroll
            for (int c = 0; c < W; c++)
                if (c < w4) {
                    axpy4(&dv[4 * c], p, Gs[ii][c]);
                    axpy4(&dk[4 * c], ds, Qs[ii][c]);
                }
        }
    }
    if (!valid) return;
    float* dkp = dqkv + ((i64)b * T + j) * C3 + C + (i64)h * hs;
    float* dvp = dkp + C;
#pragma unroll
    for (int d = 0; d < MAXHS; d++)
        if (d < hs) {
            dkp[d] += dk[d] * scale;
            dvp[d] += dv[d];
        }
}

#define ATTN_INSTANCES(HS)                                                                                                        \
    extern "C" __global__ void k_attn_fwd_##HS(float* out, float* lse, const float* qkv, int T, int C, int NH, int hs, float scale) { \
        attn_fwd<HS>(out, lse, qkv, T, C, NH, hs, scale);                                                                         \
    }                                                                                                                             \
    extern "C" __global__ void k_attn_bwd_q_##HS(float* dqkv, float* Dbuf, const float* dout, const float* qkv, const float* lse, int T, \
                                                 int C, int NH, int hs, float scale) {                                            \
        attn_bwd_q<HS>(dqkv, Dbuf, dout, qkv, lse, T, C, NH, hs, scale);                                                         \
    }                                                                                                                             \
    extern "C" __global__ void k_attn_bwd_kv_##HS(float* dqkv, const float* Dbuf, const float* dout, const float* qkv, const float* lse, \
                                                  int T, int C, int NH, int hs, float scale) {                                    \
        attn_bwd_kv<HS>(dqkv, Dbuf, dout, qkv, lse, T, C, NH, hs, scale);                                                        \
    }

ATTN_INSTANCES(8)
ATTN_INSTANCES(16)
ATTN_INSTANCES(32)
ATTN_INSTANCES(64)
ATTN_INSTANCES(128)

// The T×T weights of every (window, head), for analysis: one thread per
// row (b, h, i): out[bh][i][j] = softmax_{j≤i}(q_i·k_j·scale), 0 for j > i.
extern "C" __global__ void k_attn_weights(float* out, const float* qkv, int B, int T, int C, int NH, float scale) {
    i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= (i64)B * NH * T) return;
    int i = (int)(r % T);
    i64 bh = r / T;
    int b = (int)(bh / NH), h = (int)(bh % NH);
    int hs = C / NH;
    i64 C3 = 3 * (i64)C;
    const float* base = qkv + (i64)b * T * C3 + (i64)h * hs;
    const float* q = base + (i64)i * C3;
    float m = -INFINITY, l = 0.0f;
    for (int j = 0; j <= i; j++) {
        const float* k = base + (i64)j * C3 + C;
        float s = 0.0f;
        for (int d = 0; d < hs; d++) s += q[d] * k[d];
        s *= scale;
        if (s > m) {
            l *= expf(m - s);
            m = s;
        }
        l += expf(s - m);
    }
    float* o = out + r * T;
    for (int j = 0; j < T; j++) {
        if (j > i) {
            o[j] = 0.0f;
            continue;
        }
        const float* k = base + (i64)j * C3 + C;
        float s = 0.0f;
        for (int d = 0; d < hs; d++) s += q[d] * k[d];
        o[j] = expf(s * scale - m) / l;
    }
}

// ---------------------------------------------------------------------
// cross-entropy

// One thread per row r = b·T + t: probs = softmax(logits) (double sums, as
// the CPU backend), losses[r] = −ln probs[tok[r+1]] for t < T−1, 0 at
// T−1; dl[r] the loss in double for the sum.
extern "C" __global__ void k_ce_fwd(float* probs, float* losses, double* dl, const float* logits, const u8* tok, int B, int T, int A) {
    i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= (i64)B * T) return;
    const float* l = logits + r * A;
    float* p = probs + r * A;
    float mx = l[0];
    for (int a = 1; a < A; a++) mx = fmaxf(mx, l[a]);
    double sum = 0;
    for (int a = 0; a < A; a++) {
        double e = exp((double)(l[a] - mx));
        p[a] = (float)e;
        sum += e;
    }
    double inv = 1.0 / sum;
    for (int a = 0; a < A; a++) p[a] = (float)((double)p[a] * inv);
    if (r % T == T - 1) {
        losses[r] = 0.0f;
        dl[r] = 0.0;
        return;
    }
    int y = tok[r + 1];
    double loss = log(sum) - (double)(l[y] - mx);
    losses[r] = (float)loss;
    dl[r] = loss;
}

// dlogits = scale·(probs − onehot(tok[r+1])) for t < T−1, 0 at T−1 (overwrites)
extern "C" __global__ void k_ce_bwd(float* dlogits, const float* probs, const u8* tok, float scale, int B, int T, int A) {
    i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (i64)B * T * A) return;
    i64 r = e / A;
    int a = (int)(e % A);
    if (r % T == T - 1) {
        dlogits[e] = 0.0f;
        return;
    }
    float d = scale * probs[e];
    if (a == tok[r + 1]) d -= scale;
    dlogits[e] = d;
}
