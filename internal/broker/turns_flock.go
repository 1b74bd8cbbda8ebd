//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// machineTurn waits for key's turn among the processes of this machine: an
// exclusive flock(2) of key's lock file, which the kernel releases when the
// process ends, however it ends. flock cannot be interrupted, so the wait
// tries without blocking, a few milliseconds apart, until ctx ends;
// waiting is called when the first try fails.
func machineTurn(ctx context.Context, key string, waiting func()) (release func(), err error) {
	// Read-only is enough to lock, and lets users of one machine share the file.
	file, err := os.OpenFile(turnFilePath(key), os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoTurnFile, err)
	}
	fd := int(file.Fd())
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return func() {
				_ = syscall.Flock(fd, syscall.LOCK_UN)
				_ = file.Close()
			}, nil
		case !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR):
			_ = file.Close()
			return nil, fmt.Errorf("%w: locking %s: %w", errNoTurnFile, file.Name(), err)
		}
		waiting()
		select {
		case <-ctx.Done():
			_ = file.Close()
			return nil, context.Cause(ctx)
		case <-time.After(pause):
		}
	}
}
