package upstream_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentmem/agentmem/shared/upstream"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, header, value string
		want                time.Duration
	}{
		{"seconds", "Retry-After", "3", 3 * time.Second},
		{"fraction", "Retry-After", "0.5", 500 * time.Millisecond},
		{"date", "Retry-After", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"past date", "Retry-After", now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"far date", "Retry-After", now.Add(24 * 365 * time.Hour).Format(http.TimeFormat), upstream.MaxRetryAfter},
		{"milliseconds", "Retry-After-Ms", "250", 250 * time.Millisecond},
		{"zero", "Retry-After", "0", 0},
		{"negative", "Retry-After", "-5", 0},
		{"garbage", "Retry-After", "soon", 0},
		{"a year", "Retry-After", "31536000", upstream.MaxRetryAfter},
		{"beyond int64 nanoseconds", "Retry-After", "1e20", upstream.MaxRetryAfter},
		{"beyond int64 milliseconds", "Retry-After-Ms", "1e300", upstream.MaxRetryAfter},
		{"infinity", "Retry-After", "+Inf", upstream.MaxRetryAfter},
		{"NaN", "Retry-After", "NaN", 0},
		{"NaN milliseconds", "Retry-After-Ms", "NaN", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			h.Set(tt.header, tt.value)
			if got := upstream.RetryAfter(h, now); got != tt.want {
				t.Errorf("%s: %s: %q = %v, want %v", tt.name, tt.header, tt.value, got, tt.want)
			}
		})
	}
}

// FuzzRetryAfter: whatever the headers say, the wait is between 0 and upstream.MaxRetryAfter.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "0.5", "Sun, 23 Nov 2026 12:01:30 GMT", "-5", "soon", "1e20", "NaN", "+Inf", ""} {
		f.Add(s, "")
		f.Add("", s)
	}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ra, raMs string) {
		h := http.Header{}
		h.Set("Retry-After", ra)
		if raMs != "" {
			h.Set("Retry-After-Ms", raMs)
		}
		if got := upstream.RetryAfter(h, now); got < 0 || got > upstream.MaxRetryAfter {
			t.Fatalf("Retry-After %q, Retry-After-Ms %q: wait %v", ra, raMs, got)
		}
	})
}
