package dataset_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/source"
)

// Build a small test set (fresh windows) from the paper's prior, write it
// and read it back.
func Example() {
	cfg := dataset.Config{
		Prior: source.PaperPrior(3), // A=3, D=3, λ=0.15, α=0.5
		K:     4,                    // trees
		NK:    1024,                 // symbols per tree
		N:     256,                  // window length: 4 windows per tree
		Fresh: true,                 // each window starts from the dummy context
		Seed:  7,
	}
	d, err := dataset.Build(cfg, 2, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("windows:", d.Windows(), "of", len(d.Window(0)), "symbols; tree of window 5:", d.TreeOf[5])

	dir, _ := os.MkdirTemp("", "vomc-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "test-set")
	if err := d.Write(path, false); err != nil {
		fmt.Println(err)
		return
	}
	e, err := dataset.Read(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("read back:", e.Windows(), "windows, same checksum:", e.Checksum() == d.Checksum())
	// Output:
	// windows: 16 of 256 symbols; tree of window 5: 1
	// read back: 16 windows, same checksum: true
}

func ExampleConfig_Validate() {
	cfg := dataset.Config{Prior: source.PaperPrior(5), K: 1_000_000, NK: 100_000, N: 1536}
	fmt.Println(cfg.Validate())
	// Output:
	// dataset: K = 1000000 trees × 65 windows × N = 1536 symbols needs about 105 GiB, more than the limit of 16 GiB
}
