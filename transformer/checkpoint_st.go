package transformer

import (
	"fmt"
	"io"

	"github.com/vomc/vomc/safetensors"
)

// A generic safetensors container for checkpoints: F32 tensors only, any
// names, string metadata, in the standard layout (see package
// safetensors, which adds the checksum). readCheckpoint reads it.

// stNamed is one tensor to write.
type stNamed struct {
	name  string
	shape []int
	data  []float32
}

// writeST writes tensors in the given order with the metadata md.
func writeST(w io.Writer, md map[string]string, tensors []stNamed) error {
	ts := make([]safetensors.Tensor, len(tensors))
	for i, t := range tensors {
		n := 1
		for _, s := range t.shape {
			n *= s
		}
		if n != len(t.data) {
			return fmt.Errorf("transformer: tensor %s: shape %v for %d values", t.name, t.shape, len(t.data))
		}
		ts[i] = safetensors.Tensor{Name: t.name, DType: "F32", Shape: t.shape, Data: safetensors.Float32Bytes(t.data)}
	}
	if md == nil {
		md = map[string]string{}
	}
	if err := safetensors.Write(w, md, ts); err != nil {
		return fmt.Errorf("transformer: %w", err)
	}
	return nil
}
