//go:build !(linux && (amd64 || arm64))

package cuda

import (
	"fmt"
	"runtime"
)

// openDriver: the driver is loaded only on Linux (amd64, arm64).
func openDriver(int) (driver, error) {
	return nil, fmt.Errorf("cuda: the CUDA backend runs on Linux (amd64 or arm64) only, not %s/%s", runtime.GOOS, runtime.GOARCH)
}
