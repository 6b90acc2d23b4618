// Package synth trains the synthetic two-layer models of the paper's
// Section 4.5 "Interpreting Two-Layer Transformers" (Fig. 8): "TF 2-0" is
// the two CONSTRUCTED layers of package construct — context extension
// (Theorem 3) and statistics collection (Theorem 4), whose output is
// a^(2)_i of eq. (statistics) — followed by a TRAINABLE feed-forward layer
// (the FF of the second layer, with its residual) and the output layer.
// The variants change what the FF sees:
//
//	TF20             (s; g; g←; pos)                        "TF 2-0"
//	WithoutCounts    (s; g)                                 "TF 2-0 w/o counts"
//	TotalCountsOnly  (s; g; i)                              "TF 2-0 total counts only"
//	WithAllCounts    (s; g; n_{i,s_l}, l = 0..D; i)         "TF 2-0 w/ all counts"
//
// # Features
//
// Running the construction is O(T²) per window (0.66 s per 1000 symbols at
// D = 5), far too slow for millions of training symbols. Extractor gives
// the same numbers — construct.Construction.Features in the hard-attention
// limit, to ≈1e-13 (TestFeaturesMatchConstruction, D = 1..4, A = 2..4,
// every row, unseen suffixes included) — by keeping, for every suffix
// length l, the next-symbol and previous-symbol counts of each context:
// O(D·A) per position. It reproduces the construction's conventions
// exactly: the dummy context x_{1−D}^0 = 0, row j = 0 at the last padding
// position, the hard attention's average over the best partial matches for
// a suffix that never occurred (the paper's "initialised arbitrarily"),
// g←_D = 0, and pos_i = (1, cos(iπ/N), sin(iπ/N)) at i = D + j.
//
// # Model
//
// With a = f (the features, width F = Dim) or, optionally, a = W_e f + b_e
// (Config.Embed; the paper's FF acts on the residual stream a^(2) itself,
// so the default has no embedding):
//
//	h = a + W_1 σ(W_2 a + b_2) + b_1,   P(x_{i+1} | x_1^i) = softmax(W_o h + b_o)
//
// σ is GELU (default) or ReLU, the hidden width 4 × the stream width unless
// Config.Hidden says otherwise. There is no LayerNorm. Everything is
// float32, with the matrix products on transformer/kernels.Gemm
// (xxxForward/xxxBackward pairs in model.go); TestGradients checks every
// parameter's gradient against float64 central differences of an
// independent implementation.
//
// Count normalisation. The counts n_{i,s_l} and the total i grow with the
// position (up to the window length N); the paper does not say how its
// synthetic models received them. Here each count c enters as ln(1 + c)
// (Config.CountNorm = Log1p, the default: 0..5.5 for N = 256, fine steps
// at the small counts where the Dirichlet estimates change most) or as c/N
// (Scale). pos_i, g, g← and s are bounded and enter as they are.
//
// # Training and prediction
//
// The model runs on the transformer engine's backend seam (package
// transformer/backend): the features of every position are computed on
// the host by exact counting (Extractor; that is the point of TF 2-0),
// uploaded once per batch, and the embedding, FF, residual and read-out
// are the backend's Matmul/Activation/Add/CrossEntropy forward and
// backward ops; parameters, gradients and AdamW moments live on the
// backend. Model is a transformer.Trainable, so training is the engine's
// (Trainer = transformer.TrainerOf[*Activations, *Model]; Train, NewTrainer,
// Resume): the transformer's conventions — position t predicts x_{t+1}, a
// window of T symbols has T−1 targets (row 0, the prediction of x_1 from
// nothing, is uniform in the predictor, as for the transformer), the loss
// is the mean cross-entropy in nats — AdamW, warm-up + cosine schedule,
// clipping, validation at every epoch end, early stopping after Patience
// epochs without a better validation loss (the best parameters
// restored), checkpoints from which a run resumes bit-identically.
// Deterministic given TrainConfig.Seed. Model is a predict.SequencePredictor
// named by the paper's label; rows beyond the trained context use the
// last Context−1 symbols (a sliding window). Save/Load use safetensors
// (F32 tensors, configuration and training summary in __metadata__),
// written atomically. `vomc synth` trains one from the command line and
// `synth:path=DIR` (package methods) evaluates it in `vomc eval`.
package synth
