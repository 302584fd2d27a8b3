package store

import (
	"context"
	"testing"
	"time"
)

// A request's statements end on the server a tenth of its time left before the client gives up
// (at least 50 ms, at most a second), never at less than 1 ms, and without a deadline never.
func TestStatementTimeoutLeavesAMarginForTheBatch(t *testing.T) {
	if got := statementTimeout(context.Background()); got != "0" {
		t.Errorf("without a deadline: %q, want 0", got)
	}
	for _, c := range []struct {
		left       time.Duration
		lo, hi     time.Duration // the timeout, allowing for the time the test itself takes
		wantMargin time.Duration
	}{
		{left: 30 * time.Second, lo: 28900 * time.Millisecond, hi: 29 * time.Second, wantMargin: time.Second},
		{left: 3600 * time.Millisecond, lo: 3140 * time.Millisecond, hi: 3240 * time.Millisecond, wantMargin: 360 * time.Millisecond},
		{left: 300 * time.Millisecond, lo: 150 * time.Millisecond, hi: 250 * time.Millisecond, wantMargin: 50 * time.Millisecond},
		{left: 20 * time.Millisecond, lo: time.Millisecond, hi: time.Millisecond, wantMargin: 50 * time.Millisecond},
	} {
		if got := timeoutMargin(c.left); got != c.wantMargin {
			t.Errorf("margin of %v: %v, want %v", c.left, got, c.wantMargin)
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.left)
		got, err := time.ParseDuration(statementTimeout(ctx))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if got < c.lo || got > c.hi {
			t.Errorf("statement timeout with %v left: %v, want %v to %v", c.left, got, c.lo, c.hi)
		}
	}
}
