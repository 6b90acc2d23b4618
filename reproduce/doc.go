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
// The study is divided by concern into packages, each importing only the
// ones below it:
//
//	reproduce          the stage graph (Plan: data, train, eval, construct,
//	                   fig5, fig8, dynamics, profile, figures and report
//	                   stages), running it (Run, RunStage, Graph), Slurm
//	                   submissions (WriteSlurm) and the command (Command)
//	reproduce/report   the findings: what the paper claims per figure, the
//	                   verdict rules (paired tests, margins, Holm), and the
//	                   HTML and text report
//	reproduce/figures  the figures drawn from the merged results
//	reproduce/results  what the stages leave behind: stage and file names,
//	                   the stages' records, the merged results (Merge),
//	                   statistics across seeds, the methods selected
//	reproduce/study    the study's configuration: presets, keys, the model
//	                   notation, training options, cost estimates
//
// This package's files: the stage graph (plan.go) and its stages (data.go,
// train.go, eval.go: the baselines and the models beside CTW,
// construct.go, fig5.go, fig8.go: the synthetic TF 2-0 models,
// dynamics.go, ladder.go: the attention profiles of the budget ladder);
// running it (run.go: Run, RunStage, Graph; slurm.go; command.go);
// config.go names the study's configuration for callers of this package.
package reproduce
