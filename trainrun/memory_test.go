package trainrun

import (
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// deviceBackend is a backend that reports memory of its own, as a GPU
// backend does.
type deviceBackend struct {
	backend.Backend
	avail int64
}

func (d deviceBackend) MemoryAvailable() (int64, error) { return d.avail, nil }
func (d deviceBackend) Name() string                    { return "gpu/test" }

// TestCheckBackendMemory: a backend with memory of its own is checked
// against that memory, not the host's.
func TestCheckBackendMemory(t *testing.T) {
	be := cpu.New(kernels.Default())
	defer be.Close()
	for _, c := range []struct {
		be      backend.Backend
		need    float64
		wantErr string
	}{
		{deviceBackend{be, 1 << 30}, 1 << 29, ""},
		{deviceBackend{be, 1 << 30}, 1 << 31, "needs ≈ 2 GiB of gpu/test memory, more than the 1 GiB available"},
		{deviceBackend{be, 0}, 1, "of gpu/test memory"},
		{be, 1 << 20, ""}, // the host's memory
	} {
		err := CheckBackendMemory(c.be, c.need, "training")
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s, need %g: %v, want %q", c.be.Name(), c.need, err, c.wantErr)
		}
	}
}
