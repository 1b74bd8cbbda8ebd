package broker

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestRunUntilUnreachable(t *testing.T) {
	t.Parallel()
	unreachable := &UnreachableError{Endpoint: "http://127.0.0.1:1", Err: errors.New("connection refused")}
	tests := map[string]struct {
		failure   error
		wantCalls int64
	}{
		// One call at a time: the first failure decides whether the others are made.
		"unreachable stops the rest":    {failure: unreachable, wantCalls: 1},
		"a refused permission does not": {failure: &AuthError{Endpoint: "http://x", Username: "u", Reason: "Access refused."}, wantCalls: 5},
		"other failures do not":         {failure: &APIError{Method: "PUT", Path: "/api/x", StatusCode: 400}, wantCalls: 5},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int64
			errs := runUntilUnreachable(context.Background(), 5, 1, func(context.Context, int) error {
				calls.Add(1)
				return tc.failure
			})
			if got := calls.Load(); got != tc.wantCalls {
				t.Errorf("made %d calls, want %d", got, tc.wantCalls)
			}
			for i, err := range errs {
				if !errors.Is(err, tc.failure) {
					t.Errorf("call %d: error %v, want it to wrap %v", i, err, tc.failure)
				}
			}
		})
	}
}
