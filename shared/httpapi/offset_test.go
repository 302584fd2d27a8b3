package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

// seqRange is from..to, stepping by one up or down.
func seqRange(from, to int) []int {
	var out []int
	step := 1
	if to < from {
		step = -1
	}
	for i := from; ; i += step {
		out = append(out, i)
		if i == to {
			return out
		}
	}
}

// A session's history pages by offset as it does by cursor, in both orders, with since and
// from an offset past its end; the page's next_cursor continues after it.
func TestSessionsHistoryOffset(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	contents := make([]string, 30)
	for i := range contents {
		contents[i] = fmt.Sprintf("m%d", i+1)
	}
	smCommit(e, u.token, sid, "", contents[:10]...)
	e.exec(`update agentmem.messages set created_at = created_at - interval '1 hour' where session_id = $1`, sid)
	since := time.Now().Add(-30 * time.Minute).UTC().Format(time.RFC3339)
	smCommit(e, u.token, sid, "", contents[10:]...)
	// A deleted message is not counted by the offset.
	e.exec(`delete from agentmem.messages where session_id = $1 and seq = 3`, sid)

	for _, tc := range []struct {
		name string
		kv   []any
		want []int
	}{
		{"oldest from 0", []any{"order", "oldest", "offset", 0, "limit", 4}, []int{1, 2, 4, 5}},
		{"oldest from 2", []any{"order", "oldest", "offset", 2, "limit", 4}, []int{4, 5, 6, 7}},
		{"oldest near the end", []any{"order", "oldest", "offset", 26, "limit", 10}, []int{28, 29, 30}},
		{"oldest at the end", []any{"order", "oldest", "offset", 29, "limit", 10}, nil},
		{"oldest past the end", []any{"order", "oldest", "offset", 10000, "limit", 10}, nil},
		{"newest from 5", []any{"order", "newest", "offset", 5, "limit", 3}, []int{25, 24, 23}},
		{"newest default order", []any{"offset", 27, "limit", 5}, []int{2, 1}},
		{"newest past the end", []any{"offset", 29, "limit", 5}, nil},
		{"since", []any{"order", "oldest", "since", since, "offset", 5, "limit", 3}, []int{16, 17, 18}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kv := append([]any{"session_id", sid}, tc.kv...)
			r := smOp(e, u.token, "sessions", "history", kv...).must(t, http.StatusOK)
			if got := smSeqs(r); !slices.Equal(got, tc.want) {
				t.Errorf("seqs %v, want %v", got, tc.want)
			}
			wantTotal := 29.0
			if slices.Contains(tc.kv, any("since")) {
				wantTotal = 20
			}
			if r.body["total"] != wantTotal {
				t.Errorf("total %v, want %v", r.body["total"], wantTotal)
			}
		})
	}
	// next_cursor continues where the offset's page ends.
	r := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest", "offset", 10, "limit", 5).must(t, http.StatusOK)
	if got := smSeqs(r); !slices.Equal(got, seqRange(12, 16)) {
		t.Fatalf("offset 10: %v", got)
	}
	next := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest", "cursor", r.body["next_cursor"], "limit", 5).must(t, http.StatusOK)
	if got := smSeqs(next); !slices.Equal(got, seqRange(17, 21)) {
		t.Errorf("after the offset's page: %v", got)
	}
	// A session that is not the caller's is not found, whatever the offset.
	smOp(e, u.token, "sessions", "history", "session_id", uuid.New(), "offset", 3).must(t, http.StatusNotFound)
	smOp(e, e.newUser("").token, "sessions", "history", "session_id", sid, "offset", 3).must(t, http.StatusNotFound)
}

// The user's history across sessions and the list of sessions page by offset as by cursor.
func TestSessionsUserHistoryAndListOffset(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	var sessions []uuid.UUID
	for i := range 4 {
		s := uuid.New()
		sessions = append(sessions, s)
		smCommit(e, u.token, s, "", fmt.Sprintf("s%d a", i), fmt.Sprintf("s%d b", i), fmt.Sprintf("s%d c", i))
	}
	smCommit(e, e.newUser("").token, uuid.New(), "", "someone else's")
	key := func(m map[string]any) string { return fmt.Sprint(m["session_id"], "/", m["seq"]) }
	for _, order := range []string{"oldest", "newest"} {
		all := smOp(e, u.token, "sessions", "history", "order", order, "limit", 200).must(t, http.StatusOK)
		var want []string
		for _, m := range list(all.body["messages"]) {
			want = append(want, key(obj(m)))
		}
		if len(want) != 12 {
			t.Fatalf("%s: %d messages", order, len(want))
		}
		for _, off := range []int{0, 1, 5, 11, 12, 500} {
			r := smOp(e, u.token, "sessions", "history", "order", order, "offset", off, "limit", 4).must(t, http.StatusOK)
			var got []string
			for _, m := range list(r.body["messages"]) {
				got = append(got, key(obj(m)))
			}
			w := want[min(off, len(want)):min(off+4, len(want))]
			if !slices.Equal(got, w) && !(len(got) == 0 && len(w) == 0) {
				t.Errorf("%s offset %d: %v, want %v", order, off, got, w)
			}
			if r.body["total"] != 12.0 {
				t.Errorf("%s offset %d: total %v", order, off, r.body["total"])
			}
		}
	}

	all := smOp(e, u.token, "sessions", "list").must(t, http.StatusOK)
	var ids []string
	for _, s := range list(all.body["sessions"]) {
		ids = append(ids, str(obj(s)["session_id"]))
	}
	if len(ids) != 4 {
		t.Fatalf("list: %v", ids)
	}
	for _, s := range sessions {
		if !slices.Contains(ids, s.String()) {
			t.Fatalf("list %v lacks the user's session %s", ids, s)
		}
	}
	for _, off := range []int{0, 1, 3, 4, 9} {
		r := smOp(e, u.token, "sessions", "list", "offset", off, "limit", 2).must(t, http.StatusOK)
		var got []string
		for _, s := range list(r.body["sessions"]) {
			got = append(got, str(obj(s)["session_id"]))
		}
		w := ids[min(off, 4):min(off+2, 4)]
		if !slices.Equal(got, w) && !(len(got) == 0 && len(w) == 0) {
			t.Errorf("list offset %d: %v, want %v", off, got, w)
		}
	}
	r := smOp(e, u.token, "sessions", "list", "agent", "default", "offset", 3).must(t, http.StatusOK)
	if got := list(r.body["sessions"]); len(got) != 1 || str(obj(got[0])["session_id"]) != ids[3] {
		t.Errorf("list of an agent, offset 3: %s", r.raw)
	}
}

// offset is 0 to 10,000 and never with a cursor: anything else is a 400 naming offset that
// changes nothing.
func TestSessionsOffsetBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	smCommit(e, u.token, sid, "", "a", "b", "c")
	cursor := smOp(e, u.token, "sessions", "history", "session_id", sid, "limit", 1).must(t, http.StatusOK).body["next_cursor"]
	userCursor := smOp(e, u.token, "sessions", "history", "limit", 1).must(t, http.StatusOK).body["next_cursor"]
	smCommit(e, u.token, uuid.New(), "", "d")
	listCursor := smOp(e, u.token, "sessions", "list", "limit", 1).must(t, http.StatusOK).body["next_cursor"]
	if cursor == nil || userCursor == nil || listCursor == nil {
		t.Fatal("fixture has no cursors")
	}
	before := smSnapshot(e, u.id)
	const (
		bound   = "must be between 0 and 10000"
		combine = "cannot be combined with cursor; page with one or the other"
		number  = "must be an integer"
		unknown = "is not a known field"
	)
	for _, tc := range []struct{ name, body, message string }{
		{"negative", fmt.Sprintf(`{"op":"history","session_id":%q,"offset":-1}`, sid), bound},
		{"over the bound", fmt.Sprintf(`{"op":"history","session_id":%q,"offset":10001}`, sid), bound},
		{"fraction", fmt.Sprintf(`{"op":"history","session_id":%q,"offset":1.5}`, sid), number},
		{"string", fmt.Sprintf(`{"op":"history","session_id":%q,"offset":"3"}`, sid), number + ", not string"},
		{"huge", fmt.Sprintf(`{"op":"history","session_id":%q,"offset":1e30}`, sid), number},
		{"with cursor", fmt.Sprintf(`{"op":"history","session_id":%q,"offset":1,"cursor":%q}`, sid, cursor), combine},
		{"zero with cursor", fmt.Sprintf(`{"op":"history","session_id":%q,"offset":0,"cursor":%q}`, sid, cursor), combine},
		{"user history over the bound", `{"op":"history","offset":20000}`, bound},
		{"user history with cursor", fmt.Sprintf(`{"op":"history","offset":2,"cursor":%q}`, userCursor), combine},
		{"list negative", `{"op":"list","offset":-5}`, bound},
		{"list over the bound", `{"op":"list","offset":10001}`, bound},
		{"list with cursor", fmt.Sprintf(`{"op":"list","offset":1,"cursor":%q}`, listCursor), combine},
		{"reset", fmt.Sprintf(`{"op":"reset","session_id":%q,"offset":1}`, sid), unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.call(u.token, "sessions", tc.body)
			wantProblem(t, r, http.StatusBadRequest, "invalid_request", "offset")
			if got := fieldMessage(r, "offset"); got != tc.message {
				t.Errorf("offset: %q, want %q", got, tc.message)
			}
		})
	}
	if smSnapshot(e, u.id) != before {
		t.Fatal("a refused request changed something")
	}
}

// fieldMessage is what a problem's errors say of field ("" when they do not name it).
func fieldMessage(r response, field string) string {
	for _, fe := range list(r.body["errors"]) {
		if str(obj(fe)["field"]) == field {
			return str(obj(fe)["message"])
		}
	}
	return ""
}
