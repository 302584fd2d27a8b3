package httpapi_test

import (
	"bytes"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A service importing a history gives each message its time: the answer, a replay, get-context
// (raw) and history show it, and history's since reads it. A message without one gets the
// commit's time; seq still follows the order given.
func TestCommitTurnImportedMessageTimes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	svc := e.serviceToken()
	sid := uuid.New()
	body := ctTurn(sid,
		ctMsg("user", "I went climbing in Arco.", "created_at", "2024-05-01T09:30:00+02:00"),
		ctMsg("assistant", "Sounds great."),
		ctMsg("user", "Before that, Kalymnos.", "created_at", "2024-04-30T08:00:00.5Z"),
	)
	body["user_id"] = u.id.String()
	key := "import-" + uuid.NewString()
	before := time.Now().Add(-time.Minute)
	first := e.call(svc, "commit-turn", body, "Idempotency-Key", key).must(t, http.StatusCreated)
	res := ctStrict[ctCommitResult](t, first.raw)
	if len(res.Messages) != 3 {
		t.Fatalf("%d messages answered, want 3", len(res.Messages))
	}
	if got := res.Messages[0].CreatedAt; got != "2024-05-01T07:30:00Z" {
		t.Errorf("messages[0].created_at %q, want 2024-05-01T07:30:00Z", got)
	}
	if got := res.Messages[2].CreatedAt; got != "2024-04-30T08:00:00.5Z" {
		t.Errorf("messages[2].created_at %q, want 2024-04-30T08:00:00.5Z", got)
	}
	if ts := ctUTC(t, "messages[1].created_at", res.Messages[1].CreatedAt); ts.Before(before) || ts.After(time.Now().Add(time.Minute)) {
		t.Errorf("a message without a time was created at %s, want about now", ts)
	}
	if !(res.Messages[0].Seq < res.Messages[1].Seq && res.Messages[1].Seq < res.Messages[2].Seq) {
		t.Errorf("seqs %d, %d, %d do not follow the order given", res.Messages[0].Seq, res.Messages[1].Seq, res.Messages[2].Seq)
	}
	// Expiry and the session's activity count from the commit, not from the given times.
	if n := e.count("messages", "session_id = $1 and expires_at > now() + interval '719 hours'", sid); n != 3 {
		t.Errorf("%d messages expire a retention after the commit, want 3", n)
	}
	if n := e.count("sessions", "id = $1 and last_active_at > now() - interval '1 minute'", sid); n != 1 {
		t.Error("the session's last_active_at is not the commit's time")
	}

	// A replay answers the stored times.
	again := e.call(svc, "commit-turn", body, "Idempotency-Key", key).must(t, http.StatusCreated)
	if again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.raw, first.raw) {
		t.Errorf("replay answered %s, first %s", again.raw, first.raw)
	}
	if n := e.count("messages", "session_id = $1", sid); n != 3 {
		t.Errorf("%d messages after the replay, want 3", n)
	}

	want := []string{res.Messages[0].CreatedAt, res.Messages[1].CreatedAt, res.Messages[2].CreatedAt}
	times := func(msgs []any) []string {
		var out []string
		for _, m := range msgs {
			out = append(out, str(obj(m)["created_at"]))
		}
		return out
	}
	r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "raw"}).must(t, http.StatusOK)
	if got := times(list(r.body["messages"])); !reflect.DeepEqual(got, want) {
		t.Errorf("get-context raw created_at %q, want %q", got, want)
	}
	// The Chat Completions format has no place for it.
	r = e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "openai"}).must(t, http.StatusOK)
	if bytes.Contains(r.raw, []byte("created_at")) {
		t.Errorf("openai messages carry created_at: %s", r.raw)
	}
	r = smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest").must(t, http.StatusOK)
	if got := times(list(r.body["messages"])); !reflect.DeepEqual(got, want) {
		t.Errorf("history created_at %q, want %q", got, want)
	}

	// since reads the stored time: the message said on 30 April is left out, of the session's
	// history and of the user's, and of their totals.
	r = smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest", "since", "2024-05-01T00:00:00Z").must(t, http.StatusOK)
	if got := times(list(r.body["messages"])); !reflect.DeepEqual(got, want[:2]) || r.body["total"] != 2.0 {
		t.Errorf("history since 1 May: %q (total %v), want %q", got, r.body["total"], want[:2])
	}
	r = smOp(e, u.token, "sessions", "history", "order", "oldest", "since", "2024-05-01T00:00:00Z").must(t, http.StatusOK)
	if got := times(list(r.body["messages"])); !reflect.DeepEqual(got, want[:2]) || r.body["total"] != 2.0 {
		t.Errorf("user history since 1 May: %q (total %v), want %q", got, r.body["total"], want[:2])
	}
	// Across sessions the user's history is in time order: the earlier message comes first.
	r = smOp(e, u.token, "sessions", "history", "order", "oldest").must(t, http.StatusOK)
	if got := times(list(r.body["messages"])); !reflect.DeepEqual(got, []string{want[2], want[0], want[1]}) {
		t.Errorf("user history created_at %q, want %q", got, []string{want[2], want[0], want[1]})
	}
}

// Only a service gives a message its time, and only within bounds (2000-01-01 to the commit's
// time plus 5 minutes); anything else is 400 naming the message's field, and stores nothing.
func TestCommitTurnMessageTimesRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	svc := e.serviceToken()
	turn := func(token string, forUser uuid.UUID, at any) map[string]any {
		b := ctTurn(uuid.New(), ctMsg("user", "hello"), ctMsg("assistant", "hi", "created_at", at))
		if token == svc {
			b["user_id"] = forUser.String()
		}
		return b
	}
	for _, c := range []struct {
		name string
		user bool // the user's own token instead of a service's
		at   any
		// field is the field the problem names, when not messages[1].created_at: encoding/json
		// names a value of the wrong type by its path without the index.
		field string
	}{
		{"user token", true, "2024-05-01T09:30:00Z", ""},
		{"user token, a time of now", true, time.Now().UTC().Format(time.RFC3339), ""},
		{"an hour ahead", false, time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano), ""},
		{"ten minutes ahead in another zone", false, time.Now().Add(10 * time.Minute).In(time.FixedZone("", -5*3600)).Format(time.RFC3339), ""},
		{"before 2000", false, "1999-12-31T23:59:59.999Z", ""},
		{"year zero", false, "0000-01-01T00:00:00Z", ""},
		{"no zone", false, "2024-05-01T09:30:00", ""},
		{"a date only", false, "2024-05-01", ""},
		{"not a time", false, "last week", ""},
		{"a number", false, 1714555800, "messages.created_at"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := ctFor(e, t)
			u := e.newUser("")
			token := svc
			if c.user {
				token = u.token
			}
			r := e.call(token, "commit-turn", turn(token, u.id, c.at))
			field := "messages[1].created_at"
			if c.field != "" {
				field = c.field
			}
			wantProblem(t, r, http.StatusBadRequest, "invalid_request", field)
			if c.user && !bytes.Contains(r.raw, []byte("service callers only")) {
				t.Errorf("a user's refusal does not say who may give a time: %s", r.raw)
			}
			ctNothingStored(t, e, u.id)
		})
	}

	// The bounds themselves are in: 2000-01-01 exactly, and a clock a little ahead of ours.
	u := e.newUser("")
	for _, at := range []string{"2000-01-01T00:00:00Z", time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano)} {
		res := ctCommit(t, e, svc, turn(svc, u.id, at))
		want, _ := time.Parse(time.RFC3339Nano, at)
		if got := ctUTC(t, "created_at", res.Messages[1].CreatedAt); !got.Equal(want.Truncate(time.Microsecond)) && !got.Equal(want.Round(time.Microsecond)) {
			t.Errorf("created_at %s, want %s", got, want)
		}
	}
	// A null time is no time.
	res := ctCommit(t, e, u.token, ctTurn(uuid.New(), ctMsg("user", "hello", "created_at", nil)))
	if ts := ctUTC(t, "created_at", res.Messages[0].CreatedAt); time.Since(ts).Abs() > time.Minute {
		t.Errorf("a null created_at stored %s, want about now", ts)
	}
}

// FuzzCommitTurnMessageTimes: whatever time a service gives a message, commit-turn stores it
// or answers invalid_request, never 5xx.
func FuzzCommitTurnMessageTimes(f *testing.F) {
	turn := func(at string) string {
		return `{"user_id":"$UID","session_id":"$SID","messages":[{"role":"user","content":"hi","created_at":` + at + `}]}`
	}
	fuzzFunction(f, "commit-turn", true,
		turn(`"2024-05-01T09:30:00Z"`), turn(`"2024-05-01T09:30:00.123456789+02:00"`), turn(`null`),
		turn(`"2000-01-01T00:00:00Z"`), turn(`"2000-01-01T00:00:00+00:01"`), turn(`"0001-01-01T00:00:00+23:59"`),
		turn(`"9999-12-31T23:59:59-23:59"`), turn(`"2024-02-30T00:00:00Z"`), turn(`"2024-05-01T24:00:00Z"`),
		turn(`"2024-05-01t09:30:00z"`), turn(`"2024-05-01 09:30:00Z"`), turn(`""`), turn(`1714555800`),
		turn(`{"t":1}`), turn(`"2024-05-01T09:30:00Z\u0000"`))
}
