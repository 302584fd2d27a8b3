package app

import (
	"errors"
	"testing"

	"github.com/agentmem/agentmem/shared/apierror"
)

// FuzzCursors: the cursors of sessions, memories, a session's history and a user's history read any string as a position or
// an invalid cursor of the request, never panicking, and read back what they wrote.
func FuzzCursors(f *testing.F) {
	for _, s := range []string{"", "cwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "bgAAAAAAAAAD", "bwAAAAAAAAAD", "c3_______________________________", "bv________w", "%%%", "bQ==",
		"TgAGYLF4DyQAEjRWeBI0VnhCNFZ4EjRWeAAAAAAAAAAD", "TwAGYLF4DyQAEjRWeBI0VnhCNFZ4EjRWeP_______w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		for _, kind := range []byte{cursorSessions, cursorMemories} {
			var fe apierror.Fields
			ts, id, ok := cursorKeyOf(&fe, kind, &cursor)
			wantInvalidRequest(t, "cursorKeyOf", []byte(cursor), fe.Err())
			if ok != (len(fe) == 0) {
				t.Fatalf("cursor %q: ok %v with %d errors", cursor, ok, len(fe))
			}
			if ok && cursorAfterKey(kind, ts, id) != cursor {
				t.Fatalf("cursor %q reads as %v %v, which writes %q", cursor, ts, id, cursorAfterKey(kind, ts, id))
			}
		}
		for _, order := range []string{historyNewest, historyOldest} {
			var fe apierror.Fields
			seq := cursorSeqOf(&fe, order, &cursor)
			wantInvalidRequest(t, "cursorSeqOf", []byte(cursor), fe.Err())
			if (seq != nil) != (len(fe) == 0) {
				t.Fatalf("cursor %q: seq %v with %d errors", cursor, seq, len(fe))
			}
			if seq != nil && cursorAfterSeq(order, *seq) != cursor {
				t.Fatalf("cursor %q reads as %d, which writes %q", cursor, *seq, cursorAfterSeq(order, *seq))
			}
			fe = nil
			key := cursorMessageOf(&fe, order, &cursor)
			wantInvalidRequest(t, "cursorMessageOf", []byte(cursor), fe.Err())
			if (key != nil) != (len(fe) == 0) {
				t.Fatalf("cursor %q: key %v with %d errors", cursor, key, len(fe))
			}
			if key != nil && cursorAfterMessage(order, *key) != cursor {
				t.Fatalf("cursor %q reads as %+v, which writes %q", cursor, *key, cursorAfterMessage(order, *key))
			}
		}
	})
}

// wantInvalidRequest fails unless err is nil or an invalid_request error.
func wantInvalidRequest(t *testing.T, what string, input []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Code != apierror.InvalidRequest {
		t.Fatalf("%s %q: %v, want nil or invalid_request", what, input, err)
	}
}
