//go:build amd64 && !purego

#include "textflag.h"

// func pause()
// One PAUSE: the spin-wait hint (the core slows the polling loop and
// gives its resources to a sibling hardware thread).
TEXT ·pause(SB), NOSPLIT, $0-0
	PAUSE
	RET
