// Package reproduce runs the whole study of the paper "An
// Information-Theoretic Approach to Understanding Transformers' In-Context
// Learning of Variable-Order Markov Chains" from data generated in the run:
// training and test sets drawn from π_CTW, transformers of 1, 2, 3, 4 (and 6)
// layers, attention-only and single-head variants, the synthetic two-layer
// "TF 2-0" models, CTW, Kneser–Ney (δ tuned), PPM (method A) and the
// (D+2)-layer construction; it evaluates every method in context and writes
// the paper's Figs. 3, 4, 5, 8 and 10, a comparison of the construction with
// CTW, a summary table and one self-contained HTML report.
//
// The run is a chain of stages (see Plan) run by package pipeline: each
// stage is cached in OUT/stages/<name>-<hash>/ under a hash of its
// configuration, the hashes of its upstream stages, the vomc version and
// the code key (pipeline.CodeKey); a file "done.json" written last marks it
// complete, and a completed stage is skipped unless an upstream stage's
// outputs changed since (--rerun). A stage interrupted before its marker is
// redone, except training, which continues from its checkpoint
// (transformer.Checkpoint.Resume).
//
// Files: the study's configuration (config.go, model.go: the model
// notation, cost.go: the training cost estimates); the stage graph
// (plan.go) and its stages (data.go, train.go, eval.go: the baselines and
// the models beside CTW, construct.go, fig5.go, fig8.go: the synthetic TF
// 2-0 models, figures.go, seeds.go: statistics across training replicates,
// results.go: the merged results); running it (run.go: Run, RunStage,
// Graph; slurm.go). The report is report_*.go: the HTML page
// (report_page.go) and, per figure, what the paper claims and the verdict
// this run's numbers give (report_fig3.go, …, report_construct.go, with
// the shared comparisons in report_verdicts.go).
package reproduce
