//go:build nodemo

package models

import "embed"

// files is empty in a build with -tags nodemo: the binary that travels to
// a lent GPU machine (docs/figures/paper_shape_gpu/device/continue.sh)
// leaves the shipped models out, ≈ 2 MiB of a tree limited to 64 MiB.
var files embed.FS
