package broker

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"
)

// TestSharedBindingsJoinOnlyLaterListings checks the freshness rule: a read
// that asks while a listing is under way gets the next one, which begins
// only when the one under way is done; reads that ask before it begins
// share it; and another vhost's listing does not wait.
func TestSharedBindingsJoinOnlyLaterListings(t *testing.T) {
	t.Parallel()
	var s sharedBindings
	var calls atomic.Int32
	began := make(chan string, 10)
	release := map[string]chan struct{}{"v": make(chan struct{}), "w": make(chan struct{})}
	list := func(vhost string) func(context.Context) (map[string][]rabbithole.BindingInfo, error) {
		return func(context.Context) (map[string][]rabbithole.BindingInfo, error) {
			n := calls.Add(1)
			began <- vhost
			<-release[vhost]
			return map[string][]rabbithole.BindingInfo{"x": make([]rabbithole.BindingInfo, n)}, nil
		}
	}
	ctx := t.Context()
	first := s.join(ctx, "v", list("v"))
	if got := <-began; got != "v" {
		t.Fatalf("began %q", got)
	}
	second, third := s.join(ctx, "v", list("v")), s.join(ctx, "v", list("v"))
	if second == first || third != second {
		t.Fatal("a read that asked while a listing was under way joined it, or two reads that asked before the next began did not share it")
	}
	other := s.join(ctx, "w", list("w"))
	if got := <-began; got != "w" {
		t.Fatalf("began %q, want the other vhost's listing at once", got)
	}
	select {
	case got := <-began:
		t.Fatalf("the next listing of %q began while the one under way was not done", got)
	case <-time.After(50 * time.Millisecond):
	}
	release["v"] <- struct{}{}
	<-first.done
	if got := <-began; got != "v" {
		t.Fatalf("began %q", got)
	}
	close(release["v"])
	close(release["w"])
	<-second.done
	<-other.done
	if len(first.bySource["x"]) != 1 || len(second.bySource["x"]) != 3 {
		t.Errorf("the listings are calls %d and %d, want 1 and 3", len(first.bySource["x"]), len(second.bySource["x"]))
	}
	if fourth := s.join(ctx, "v", list("v")); fourth == second {
		t.Error("a read that asked after a listing was done joined it")
	}
}

// TestSharedBindingsOnlyWhileSeveralSetsAreRead checks when reads share.
func TestSharedBindingsOnlyWhileSeveralSetsAreRead(t *testing.T) {
	t.Parallel()
	var s sharedBindings
	doneA := s.readingSet("v")
	if s.shared("v") {
		t.Error("one set read shares")
	}
	doneB := s.readingSet("v")
	doneC := s.readingSet("w")
	if !s.shared("v") || s.shared("w") {
		t.Error("two set reads of v do not share, or one of w does")
	}
	doneA()
	doneC()
	if s.shared("v") || s.shared("w") {
		t.Error("sharing outlived the reads")
	}
	doneB()
	if len(s.reading) != 0 {
		t.Errorf("reading = %v after every read ended", s.reading)
	}
}
