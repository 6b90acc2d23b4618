//go:build !nodemo

package models

import "embed"

// files are the shipped models, embedded in the binary.
//
//go:embed d3-tf44-e32 d3-tf44 d5-tf44-e32 d5-tf44-x4 d5-tf44-sin-x4
var files embed.FS
