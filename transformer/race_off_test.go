//go:build !race

package transformer

const raceEnabled = false
