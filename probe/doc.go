// Package probe fits linear probes from a trained model's residual stream
// to the statistics an exact in-context algorithm computes (`vomc probe`):
// does the stream hold, linearly, what CTW and the Bayes predictor need?
//
// # Streams
//
// For a transformer (either engine's model file) the streams are the
// embedding output x⁰ and the stream xˡ after each block l = 1..L
// (transformer.Model.ResidualStreams, on the forward-only pass of
// prediction), before the final LayerNorm; for a
// synthetic "TF 2-0" model (package synth) the stream a entering its
// feed-forward layer (the constructed features) and h after it
// (synth.Activations.Residual). Row t of a window is the model's state
// after x_1..x_{t+1}, from which it predicts x_{t+2}. Windows longer than
// the model's context N are probed on their first N symbols.
//
// # Targets
//
// Every target is computed exactly, at the same positions, by vomc's own
// code for the data set's prior (its manifest). Row t's targets are read
// after x_1..x_{t+1} have been observed: they describe the context from
// which the model's row t predicts x_{t+2}.
//
//   - omega: ω_l, l = 0..D (D the prior's largest depth), the Bayes
//     posterior probability that the context suffix s_l of length l is a
//     leaf of the source tree (bayes.State.LeafPosterior). The prior draws
//     a component c (a depth D_c, and a leaf kind) and then a tree from
//     π_CTW(D_c, λ), so ω_l = Σ_c π(c | x) ω^(c)_l with π(c | x) the
//     posterior over components (bayes.State.Posterior) and ω^(c)_l the
//     leaf posterior under c: CTW(D_c)'s ω of the paper's Theorem 2
//     (ctw.State.Weights) for Dirichlet leaves, 0 for l > D_c. Under a
//     prior of one depth with Dirichlet leaves it is CTW(D)'s ω.
//   - omega_ctw (only where that differs: several depths or non-Dirichlet
//     leaves): CTW(D)'s ω_{n,l} (ctw.State.Weights, D the largest depth, the
//     prior's λ and α, the dummy context 0^D), the weights of
//     P(x_{n+1} | x_1^n) = Σ_l ω_{n,l} p_{n,s_l} under one depth D; under
//     the ladder's depths 1..5 it is not the posterior that s_l is a leaf.
//   - depth_posterior: the Bayes posterior over the prior's depths,
//     bayes.State.Posterior summed over the leaf kinds of each depth
//     (only when the prior has more than one depth);
//   - counts_k, k = 0..D: n_{s_k}(a), a = 0..A−1, how often the current
//     context s_k of length k has been followed by a (synth.Extractor's
//     "w/ all counts" block; raw counts, not normalised);
//   - map_length: the MAP context length arg max_l ω_l of omega, a class;
//     map_length_ctw (with omega_ctw) the arg-max of CTW(D)'s ω.
//
// # Probes
//
// A probe is ridge regression on standardised features (each stream
// column centred and scaled by its training mean and standard deviation;
// targets centred), W_λ = (ZᵀZ + λI)⁻¹ Zᵀ Y, computed once per stream from
// the eigendecomposition of ZᵀZ for every penalty λ = c · tr(ZᵀZ)/p, c in
// DefaultPenalties. The data set's trees are split (drawn from the seed)
// into training, validation and test windows, so no tree is in two
// splits; each window contributes Positions positions drawn from the
// seed. For every (condition, stream, target) and for all positions and
// each position band, a probe is fitted on the training rows (of that
// band), c is chosen by the validation score, and the test score is
// reported with a 95% percentile interval from Bootstrap resamples of the
// test windows (the same resamples for every probe). A band's probe is
// fitted on the band alone because its R² is relative to the target's
// variance within the band: a probe of all positions, judged on early
// positions whose counts barely vary, would score far below 0 there. Vector targets are scored by R² = 1 −
// Σ SSE / Σ SST over all their outputs (SST about the test rows' mean);
// map_length by accuracy, from one-vs-rest ridge on the one-hot classes
// (the arg-max of the D+1 scores), with Chance the accuracy of always
// answering the training rows' most frequent class.
//
// # Controls
//
// Every table carries two controls. Shuffled: the trained model's
// features, with the training and validation targets of each position
// band permuted among that band's rows (so the band's target
// distribution is kept and only the pairing with the features is broken:
// a probe that can only memorise, R² ≈ 0 and accuracy at chance; the
// permutation is not within position, which would keep the position's
// mean target and so score what position alone explains). Init: the same
// architecture with the initial parameters of InitSeed — for a
// transformer the Go engine's GPT-2-style initialisation
// (transformer.NewOn), also for a model the torch engine trained (it
// draws from the same distribution with torch's generator, so the control
// is another draw from the model's initial distribution, not its own
// initial parameters); Result.Init says which. It shows what the
// architecture and the embedding of the symbols and positions give
// without learning.
//
// Run writes probe.json (everything), probe.csv (one line per probe and
// band) and probe.png (test score by stream and target).
package probe
