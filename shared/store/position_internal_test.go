package store

import (
	"fmt"
	"testing"
	"time"
)

func TestPositionText(t *testing.T) {
	t.Parallel()
	for _, p := range []Position{1, 0x16B374D848, 1<<64 - 1} {
		got, err := ParsePosition(p.String())
		if err != nil || got != p {
			t.Errorf("%d: %q read back as %d, %v", p, p.String(), got, err)
		}
	}
	// Equal widths: the greater position is the greater string.
	if a, b := Position(0xFF).String(), Position(0x100).String(); !(a < b) {
		t.Errorf("%q sorts after %q", a, b)
	}
	for _, bad := range []string{"", "16/B374D848", "16B374D848", "000000000000000G", " 000000000000001", "00000000000000001", "+000000000000001"} {
		if _, err := ParsePosition(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	for lsn, want := range map[string]Position{"0/0": 0, "": 0, "0/3000000": 0x3000000, "16/B374D848": 0x16B374D848} {
		if got, err := parseLSN(lsn); err != nil || got != want {
			t.Errorf("lsn %q: %X, %v; want %X", lsn, got, err, want)
		}
	}
	for _, bad := range []string{"3000000", "x/1", "1/x", "100000000/0"} {
		if _, err := parseLSN(bad); err == nil {
			t.Errorf("lsn %q: accepted", bad)
		}
	}
}

func TestCovers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		replayed, p Position
		want        bool
	}{
		{100, 100, true},
		{101, 100, true},
		{99, 100, false},
		// A record ending at a page's end: the insert position is past the next page's header.
		{3 * walPage, 3*walPage + 24, true},
		{3 * walPage, 3*walPage + walPageHeader, true},
		{3 * walPage, 3*walPage + walPageHeader + 1, false},
		{3*walPage - 8, 3*walPage + 24, false},
		{0, 1 << 63, false},
	} {
		if got := covers(tc.replayed, tc.p); got != tc.want {
			t.Errorf("covers(%X, %X) = %v", tc.replayed, tc.p, got)
		}
	}
}

func TestRecentWrites(t *testing.T) {
	t.Parallel()
	w := recentWrites{window: time.Second}
	now := time.Now()
	w.note("a", 10, now)
	w.note("a", 7, now.Add(100*time.Millisecond)) // an answer that came back later
	if got := w.need("a", now.Add(200*time.Millisecond)); got != 10 {
		t.Errorf("need within the window: %d, want the greatest, 10", got)
	}
	if got := w.need("b", now); got != 0 {
		t.Errorf("a user who wrote nothing needs %d", got)
	}
	if got := w.need("a", now.Add(1100*time.Millisecond)); got != 0 {
		t.Errorf("need after the window: %d, want 0", got)
	}
	// Entries past their window go once the map has grown enough to be worth a sweep.
	for i := range 2000 {
		w.note(fmt.Sprintf("old %d", i), 1, now)
	}
	for i := range 3000 {
		w.note(fmt.Sprintf("new %d", i), 1, now.Add(2*time.Second))
	}
	for _, u := range []string{"a", "old 0", "old 1999"} {
		if _, ok := w.m[u]; ok {
			t.Errorf("%q is kept after its window", u)
		}
	}
	if len(w.m) != 3000 {
		t.Errorf("%d entries kept, want the 3000 within their window", len(w.m))
	}
}
