//go:build race

package kernels

// raceEnabled: the race detector allocates on synchronisation and empties
// sync.Pools at random, so allocation counts are not checked.
const raceEnabled = true
