package adapter_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
)

func TestParseNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{" , ", nil, ""},
		{"webhook", []string{"webhook"}, ""},
		{" webhook ,", []string{"webhook"}, ""},
		{"webhook,webhook", nil, "named twice"},
		{"webhook,redis-cache", nil, `unknown adapter "redis-cache"; known: webhook`},
		{"Webhook", nil, "unknown adapter"},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := adapter.ParseNames(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("%q: %v, want an error with %q", c.in, err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%q: %v %v, want %v", c.in, got, err, c.want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	base := errors.New("the webhook answered 503")
	if d := adapter.RetryAfter(fmt.Errorf("deliver: %w", &adapter.RetryAfterError{After: 3 * time.Second, Err: base})); d != 3*time.Second {
		t.Errorf("wrapped: %s", d)
	}
	if d := adapter.RetryAfter(base); d != 0 {
		t.Errorf("plain: %s", d)
	}
	if e := (&adapter.RetryAfterError{Err: base}); e.Error() != base.Error() || !errors.Is(e, base) {
		t.Errorf("%v", e)
	}
}

// A backfill page's id depends on the change and the page only: a retry sends each page under
// the id it had, and pages of one change never share one.
func TestPageID(t *testing.T) {
	t.Parallel()
	a, b := uuid.New(), uuid.New()
	first, again := adapter.PageID(a, 1), adapter.PageID(a, 1)
	if first != again {
		t.Error("not stable")
	}
	seen := map[uuid.UUID]bool{a: true, b: true}
	for _, id := range []uuid.UUID{adapter.PageID(a, 1), adapter.PageID(a, 2), adapter.PageID(b, 1)} {
		if seen[id] {
			t.Errorf("id %s repeats", id)
		}
		seen[id] = true
	}
}
