package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"
)

// TestSharedBindings follows the listings that the set reads of one vhost
// share: none for the first read, one for the second that the next ones
// reuse, and a new one once the last is too old, has failed, or began
// before a write of the client's; another vhost has its own.
func TestSharedBindings(t *testing.T) {
	clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s := sharedBindings{now: func() time.Time { return clock }}
	lists := 0
	fail := false
	list := func(context.Context) (map[string][]rabbithole.BindingInfo, error) {
		lists++
		if fail {
			return nil, errors.New("broker down")
		}
		return map[string][]rabbithole.BindingInfo{"x": {{Source: "x", Destination: "q"}}}, nil
	}
	scans := func(context.Context) bool { return true }
	read := func(vhost string) *bindingListing {
		t.Helper()
		l := s.forSetRead(t.Context(), vhost, scans, list)
		if l != nil {
			<-l.done
		}
		return l
	}

	if l := read("a"); l != nil {
		t.Fatalf("the first read of a vhost shares a listing; want it to read by source")
	}
	second := read("a")
	if second == nil || lists != 1 {
		t.Fatalf("second read: listing %v after %d listings, want one listing", second, lists)
	}
	if got, err := second.bindings(t.Context(), "x"); err != nil || len(got) != 1 || got[0].Destination != "q" {
		t.Errorf("bindings(x) = %v, %v; want the one listed", got, err)
	}
	if got, err := second.bindings(t.Context(), "y"); err != nil || len(got) != 0 {
		t.Errorf("bindings(y) = %v, %v; want none", got, err)
	}
	clock = clock.Add(sharedListingMaxAge - time.Second)
	if l := read("a"); l != second || lists != 1 {
		t.Errorf("a read within %v of the listing listed again (%d listings)", sharedListingMaxAge, lists)
	}

	clock = clock.Add(time.Second)
	aged := read("a")
	if aged == second || lists != 2 {
		t.Errorf("a read %v after the listing reused it (%d listings), want a new one", sharedListingMaxAge, lists)
	}

	s.wrote("a")
	if l := read("a"); l == aged || lists != 3 {
		t.Errorf("a read after a write reused the listing from before it (%d listings), want a new one", lists)
	}
	s.wrote("b")
	if read("a"); lists != 3 {
		t.Errorf("a write to another vhost made vhost a list again (%d listings)", lists)
	}

	if l := read("b"); l != nil || lists != 3 {
		t.Errorf("the first read of vhost b shares (%d listings), want it to read by source", lists)
	}

	fail = true
	s.wrote("a")
	failed := read("a")
	if lists != 4 {
		t.Fatalf("%d listings, want 4", lists)
	}
	if _, err := failed.bindings(t.Context(), "x"); err == nil {
		t.Errorf("bindings of a failed listing: no error")
	}
	fail = false
	if l := read("a"); l == failed || lists != 5 {
		t.Errorf("a read after a failed listing reused it (%d listings), want a new one", lists)
	}
}

// TestSharedBindingsOnlyWhereReadsBySourceScan: on a broker whose reads by
// source do not scan (metadata in Mnesia), or that will not say, every set
// read reads by source; the store is asked once.
func TestSharedBindingsOnlyWhereReadsBySourceScan(t *testing.T) {
	var s sharedBindings
	asked, lists := 0, 0
	scans := func(context.Context) bool { asked++; return false }
	list := func(context.Context) (map[string][]rabbithole.BindingInfo, error) { lists++; return nil, nil }
	for range 5 {
		if l := s.forSetRead(t.Context(), "a", scans, list); l != nil {
			t.Fatal("a set read shares a listing on a broker whose reads by source do not scan")
		}
	}
	if asked != 1 || lists != 0 {
		t.Errorf("store asked %d times and %d listings, want once and none", asked, lists)
	}
}
