// Command libvomc is vomc's door for Python: built with
//
//	go build -buildmode=c-shared -o libvomc.so ./cmd/libvomc
//
// it is a shared library whose few C functions the Python package vomc
// (python/vomc) calls through ctypes, in the Python process. Like
// cmd/vomc it is a front door only: every call decodes a JSON request and
// the caller's arrays, makes one library call (source, dataset, methods,
// eval, attnmap, explore) and encodes the answer; no algorithm lives here.
//
// The C interface (cgo.go):
//
//	long long vomc_call(char *op, char *req, long long reqlen,
//	                    void **arrays, long long *lens, int n, long long id);
//	long long vomc_result(long long handle, int i, void *dst, long long n);
//	void vomc_release(long long handle);
//	void vomc_cancel(long long id);
//
// vomc_call runs operation op (ops.go) on the JSON request and the n
// arrays (the caller's memory, read or written in place during the call
// only) and returns a handle on its answer: part 0 is a JSON object,
// {"result": …} or {"error": message, "kind": kind}, parts 1.. are byte
// blobs. vomc_result copies part i into dst (at most n bytes) and
// returns its length (dst NULL: the length only); vomc_release frees the
// answer. vomc_cancel(id) cancels the context of the call made with id,
// which then returns the error kind "cancelled" (Ctrl-C in Python).
//
// Every call recovers a panic on its own goroutine into the error kind
// "internal", so that the interpreter survives it, and so do the worker
// pools the calls run (methods.Distributions, eval.Evaluate, dataset.Build,
// KN's tuning, internal/parallel.For, synth's feature extraction): a panic
// on a worker comes back to the call as a *panics.Error, answered as the
// same kind with the panic's value and the worker's stack; the arrays' sizes are
// checked against the request before any is read.
//
// Built as an ordinary program (go build ./...), it only says how to
// build it.
package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// compute is the one CPU backend of every model the library's calls load
// (tf and synth methods, attention maps, the explorer), chosen once, as
// cmd/vomc chooses its own: the kernel set of VOMC_KERNELS, else the best
// this build and CPU run.
var compute = sync.OnceValue(func() backend.Backend { return cpu.New(kernels.Default()) })

// torchEngine is the PyTorch engine that torch: methods run on, one for
// the process: its interpreter ($VOMC_PYTHON, else the first python3 with
// torch and numpy) is decided once, at its first use.
var torchEngine = sync.OnceValue(func() *trainrun.Torch { return &trainrun.Torch{} })

func main() {
	fmt.Fprintln(os.Stderr, "libvomc is a shared library for the Python package vomc: go build -buildmode=c-shared -o libvomc.so ./cmd/libvomc (pip install ./python does it)")
	os.Exit(2)
}
