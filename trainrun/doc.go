// Package trainrun starts, resumes, checkpoints and finishes every
// training run of vomc — 'vomc train', 'vomc synth' and every training
// stage of 'vomc reproduce' (transformers on the Go or the torch engine,
// the TF 2-0 models of package synth) — and declares nothing twice.
//
// # The engine, chosen once
//
// A command (or a study's configuration) names the engine in a Spec:
// Name ("go" or "torch"), the Go engine's compute Backend ("cpu",
// "cuda:N"), the CPU backend to use, the torch engine's settings (Torch).
// NewEngine checks it and opens what it needs (a GPU) once, at the top;
// the *Engine it returns is passed down and used by everything below:
// Engine.Train for every run, Engine.Backend for every model built on the
// Go engine (evaluation, attention maps, TF 2-0). cmd/vomc holds no engine
// logic: it maps flags to a Spec and errors back to flags.
//
// # One driver
//
// Engine.Train(ctx, Job) is the only way a run directory is trained. A
// Job says where (Dir), how it is opened (ModeNew: a new run, a held
// directory refused unless Force; ModeResume: the run's checkpoint, data
// and settings; ModeContinue: resume if there is a checkpoint, else start
// — a study's stages), on what data (DataSpec, plus Meta for the
// checkpoints), the model (Model), the training options (Train,
// CheckpointEvery, Snapshots) and how progress is reported (Events, OnOpen,
// Label, Status, OnStep; the torch engine's own output: TorchOutput). Every setting and the data are checked
// before anything is written; bad settings are *OptionErrors naming the
// option. The run directory holds the checkpoint (every CheckpointEvery
// steps, at every epoch end, on cancellation: *InterruptedError), the
// training log train.jsonl and curve, snapshots, and the model file; a
// divergence keeps the last good checkpoint (*DivergedError). Models:
// Transformer (either engine; the torch engine starts from the same
// parameters and windows), GoModel (any transformer.Trainable of the Go
// engine: synth.RunModel), and 'vomc train's ModelOptions (a transformer
// or the torch engine's LSTM). 'vomc train' writes its flags straight into
// a Job and its ModelOptions: one options struct from flag to trainer. How
// long a run trains (epochs, steps, extensions, early stopping) is decided
// in one file, budget.go. Underneath, Start, Resume and Run drive the Go engine's
// transformer.TrainerOf, and Torch runs python/vomc_torch.
//
// # One definition per training option
//
// Every training option — TrainConfig's fields and the run's own
// (checkpoint_every, snapshots) — is declared once, in transformer.Options:
// key, flag, type, default, bounds, documentation, whether 'vomc
// reproduce's configuration sets it (Study; its key is the flag with "_")
// and whether 'vomc synth' has it. Everything else derives from that
// table: TrainConfig.Validate and its messages, DefaultTrainConfig, the
// flags of 'vomc train' and 'vomc synth' (AddFlags) and the names of
// options in their errors (OptionFlag), reproduce's TrainConfig and the
// checks of its keys, and the torch engine's train config fields, checks
// and flags (python/vomc_torch/options.py reads train_options.json, which
// 'go generate ./python' writes from the table). Tests fail when a surface
// disagrees: transformer (declaration vs TrainConfig), cmd/vomc
// (TestTrainingFlagsDeclared), reproduce (TestStudyOptions) and python
// (TestOptionsFile; TestPythonOptions asks python3 for the engine's
// fields and flags).
//
// Adding a training option is one declaration plus its implementation:
//
//  1. a field in transformer.TrainConfig (with its JSON name), and its
//     entry in transformer.Options — key, flag, type, default, bounds
//     (Min, Max, ProductBelowOne), Zero, Name, Doc, Study if the study
//     sets it (then also a reproduce.Config field of that key), NoSynth;
//  2. what it does: the Go trainer (transformer.TrainerOf) and the torch
//     engine's Trainer (python/vomc_torch/train.py, reading it from its
//     train config);
//  3. 'go generate ./python' to rewrite train_options.json.
//
// Flags, defaults, validation and its messages, reproduce's key and the
// torch engine's flag and checks follow. A run option (Run: true) is
// implemented here instead (Job, AddFlags' targets).
package trainrun
