// Package construct makes the paper's transformer construction of CTW
// executable: Section 4.4 "Interpretation via Constructions" (Theorems 2–5)
// and Appendix "Construction of Transformer for CTW". Given the prior
// π_CTW(D, λ, α) it builds the (D+2)-layer transformer with explicit
// attention matrices, runs it in float64, and in the hard-attention limit
// c → ∞ reproduces CTW's predictive distribution (ctw, Init = Pad) at every
// position to ~1e-14.
//
// # Executor (Section 4.1)
//
// Transformer runs layers of multi-head causal attention with explicit
// W_Q,m, W_K,m, W_V,m and W_O, a residual, then an FF sub-layer with a
// residual. Where the paper says "a sufficiently wide FF layer can compute
// f", the FF is f itself, an exact Go function of the layer input (type FF);
// the read-out Σ_l ω_{n,l} p_{n,s_{n,l}} of Theorem 5 is likewise exact. The
// temperature c is a factor of every W_K; Config.C = 0 or +Inf selects the
// exact limit c → ∞ (uniform attention over the arg-max set of scores).
//
// # Positions and embedding
//
// Position 0 is a BOS sink, positions 1..D hold the dummy context
// x_{1−D}^0 = 0 (ctw.Pad), position D+j holds x_j; P(x_{j+1} | x_1^j) is read
// at position D+j. h^(1)_i = (x_i one-hot in part 0 of s; 0; pos_i; flags)
// with pos_i = (1, cos(iπ/N), sin(iπ/N)). Layout names the blocks as the
// paper does (s, g, g_back = g←, n, p, le = ℓ^e, delta = δ, lw = ℓ^w, pos)
// plus the added ones (g_ctx, g_ctx_back, n_ctx, le_ctx, lw_ctx,
// lw_ctx_sib, flags).
//
// # Layers
//
//   - Layer 1 (Theorem 3): D heads, W_Q,m = Rot(m) on pos, W_K,m = c·I on
//     pos, W_V,m copies x_u into part m of s. FF zero.
//   - Layer 2 (Theorem 4): the paper's D+1 heads (query s_{i,l}, key
//     c·s_{u−1,l}, value (x_u; x_{u−l−1})) giving g_{i,s_{i,l}} and
//     g←_{i−1,s_{i,l}}; FF: n_{i,s_{i,l}} = (i−D)·g·Π_{j<l} g←_j(x_{i−j}), p,
//     ℓ^e, ℓ^w_{s_D} = ℓ^e_{s_D} (h^(3)).
//   - Layers 3..D+2 (Theorem 5): A heads copying ℓ^w of the children
//     q·s_{i,d} of the path node at depth d = D+2−ℓ; FF: δ_{i,d+1} and
//     ℓ^w_{i,s_{i,d}} (eq. h-ell-induction).
//   - Read-out: ω from the δ's, P = Σ_l ω_l p_l.
//
// # Where this implementation departs from the paper, and why
//
// 1. Induction keys and values (the one substantive error). The paper's
// head q at position n attends to the latest position i whose own suffix
// s_{i,d+1} = x_{i−d}^i equals q·s_{n,d} and copies ℓ^w_{i,s_{i,d+1}}
// computed at i. That value counts only x_1..x_i, but CTW's node at time n
// also counts x_{i+1}, the symbol that followed that occurrence (whenever
// i < n, i.e. for every sibling of the path). Built literally
// (Config.LiteralInduction) the construction is off by up to 0.3–0.45 in
// probability. Correction: key on the SHIFTED suffix c_{u,d+1} = x_{u−d−1}^{u−1}
// (the context that x_u followed) and copy the node's value after the
// update by x_u, computed at u. The latest u ≤ n with c_{u,d+1} = q·s_{n,d}
// is the last time that node changed, so the copy is its value at time n.
// Those values are those of the context chain c_{u,l}, l = 1..D, which the
// paper never computes, so the construction adds: D heads to layer 2 (query
// c_{i,l}, same keys and values: g~, g~←), their count recovery in the
// layer-2 FF (n~, ℓ^e~, ℓ^w~_D = ℓ^e~_D), and A heads to every induction
// layer but the last (query q·c_{i,d}) whose FF computes ℓ^w~ of c_{i,d} by
// the CTW recursion. The paper's path quantities (g, g←, n, p, ℓ^e, ℓ^w, δ)
// and its query of the path heads are kept. Still D+2 layers; layer 2 has
// 2D+1 heads instead of D+1, induction layers 2A (the last A) instead of A.
//
// 2. Match weight. In the paper's induction W_K the suffix match and the
// positional term have the same scale, so a position matching d of the d+1
// query symbols close to n (score d + pos_n·pos_u, up to d+2) can beat a full
// match far back (score d+1 + pos_n·pos_u, down to d+1). Here a matching
// symbol scores 4, more than the range [0, 2] of pos_n·pos_u.
//
// 3. Never-seen nodes. A child q·s that has never been followed by a symbol
// has no position to copy from; its ℓ^w is 0 (p^e = p^w = 1). The BOS sink
// (pos_0 = 0, a bos flag) scores 4(d+1) − 1, between any partial and any
// full match, and holds ℓ^w~ = 0. In layer 2, a never-seen path suffix gets
// arbitrary g, g← (whatever the attention returns — the paper's
// "initialised arbitrarily"); no correction is needed there because the
// recovered total N_l is a product containing the factor g←(x) = 0 of the
// deepest suffix that did occur, so n = N_l·g = 0 exactly. The shifted
// context c_{i,l} always occurs (at i itself).
//
// 4. Dummy context. The D padding positions carry symbol 0 and a pad flag.
// Layer 1 needs nothing extra (for i ≤ m its arg-max is position 1, a pad,
// so s is padded with 0s as x_{1−D}^0 = 0 demands). The statistics and
// induction heads get one score row −(D+2)c resp. −(4D+8)c at flagged
// positions so that padding symbols are never counted or copied, and the
// total count of the recovery formula is i−D (the paper's i).
//
// 5. Representation. Blocks are only ever added to (the paper's h^(3) drops
// g, g←; here they stay in the residual stream), ℓ^w and δ get one slot per
// depth instead of one moving slot, and each head keeps only the non-zero
// rows of its E×E matrices (the paper's remark that E^(ℓ) can be smaller
// with W_O a permutation). The FFs recover i from pos_i by atan2 and use
// lnΓ for ℓ^e.
//
// # Finite temperature
//
// With finite c every W_K is c times its unit version and the attention is
// an ordinary softmax. The slowest factor is the "latest position" term:
// neighbouring positions differ by c(1 − cos(π/N)) ≈ cπ²/(2N²), so c must
// be large against N² (ErrorVsC, `vomc construct --error-plot`).
//
// # Fig. 8 features
//
// Construction.Features returns the layer-2 output a^(2) in the variants of
// the paper's synthetic two-layer models ("TF 2-0", "w/o counts", "total
// counts only", "w/ all counts"), for training an FF and read-out on them.
package construct
