//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package broker

import "context"

// machineTurn has no file lock to take on this platform (Windows): the
// deletions take turns within each process only.
func machineTurn(context.Context, string, func()) (func(), error) { return nil, errNoTurnFile }
