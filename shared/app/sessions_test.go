package app_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// sessionsRig is the use cases over a database of their own, with its superuser's connection.
type sessionsRig struct {
	a   *app.App
	env *storetest.Env
}

func newSessionsRig(t *testing.T) *sessionsRig {
	t.Helper()
	e := storetest.New(t, storetest.MaxConns(4))
	return &sessionsRig{a: app.New(e.Store, discard(), app.Config{}), env: e}
}

// commit commits user messages with contents to session sid of agent ("" for the default).
func (r *sessionsRig) commit(t *testing.T, u auth.Principal, sid string, agent string, contents ...string) memory.CommitResult {
	t.Helper()
	in := app.CommitTurnInput{SessionID: ptr(sid)}
	if agent != "" {
		in.Agent = ptr(agent)
	}
	for _, c := range contents {
		in.Messages = append(in.Messages, msg("user", c))
	}
	res, err := r.a.CommitTurn(context.Background(), u, in)
	if err != nil {
		t.Fatal(err)
	}
	return res.CommitResult
}

// count counts the rows of q, as the superuser.
func (r *sessionsRig) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := r.env.Admin(t).QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// snapshot renders every row of user in the tables the sessions function changes: equal
// snapshots mean nothing changed.
func (r *sessionsRig) snapshot(t *testing.T, user string) string {
	t.Helper()
	r.a.WaitEmbedded()
	conn := r.env.Admin(t)
	var out []string
	for _, table := range []string{"sessions", "messages", "active_sessions", "memories"} {
		var s *string
		if err := conn.QueryRow(context.Background(), fmt.Sprintf(
			`select string_agg(x::text, E'\n' order by x::text) from agentmem.%s x where user_id = $1`, table), user).Scan(&s); err != nil {
			t.Fatal(err)
		}
		if s != nil {
			out = append(out, table+":\n"+*s)
		}
	}
	return strings.Join(out, "\n")
}

// wantNotFound fails unless err is the use cases' not_found problem.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if p := app.Problem(err); err == nil || p.Code != apierror.NotFound {
		t.Errorf("%s: %v, want not_found", what, err)
	}
}

// seqs are the seqs of a history page's messages.
func seqs(h app.SessionHistory) []int64 {
	var out []int64
	for _, m := range h.Messages {
		out = append(out, m.Seq)
	}
	return out
}

// Reset deletes the session's live messages (counting only those), keeps the session, its title
// and its seq, so the next message numbers on.
func TestResetKeepsSessionAndSeq(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	ctx := context.Background()
	u := user()
	sid := uuid.NewString()
	r.commit(t, u, sid, "", "a", "b", "c", "d")
	r.env.Exec(t, `update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1 and seq = 4`, sid)
	if _, err := r.a.SetSessionTitle(ctx, u, app.SetSessionTitleInput{SessionID: ptr(sid), Title: json.RawMessage(`"kept"`)}); err != nil {
		t.Fatal(err)
	}
	res, err := r.a.ResetSession(ctx, u, app.SessionChangeInput{SessionID: ptr(sid)})
	if err != nil || res.Deleted != 3 {
		t.Errorf("reset: %+v, %v; want 3 deleted (the expired message is not counted)", res, err)
	}
	if n := r.count(t, `select count(*) from agentmem.messages where session_id = $1`, sid); n != 0 {
		t.Errorf("%d messages left", n)
	}
	list, err := r.a.ListSessions(ctx, u, app.ListSessionsInput{})
	if err != nil || len(list.Sessions) != 1 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if s := list.Sessions[0]; s.SessionID.String() != sid || s.MessageCount != 0 || s.Title == nil || *s.Title != "kept" {
		t.Errorf("after reset the session lists as %+v", s)
	}
	if c := r.commit(t, u, sid, "", "e"); c.Messages[0].Seq != 5 {
		t.Errorf("first message after reset has seq %d, want 5", c.Messages[0].Seq)
	}
	if res, err := r.a.ResetSession(ctx, u, app.SessionChangeInput{SessionID: ptr(sid)}); err != nil || res.Deleted != 1 {
		t.Errorf("second reset: %+v, %v", res, err)
	}
	_, err = r.a.ResetSession(ctx, u, app.SessionChangeInput{SessionID: ptr(uuid.NewString())})
	wantNotFound(t, "reset of no session", err)
}

// Delete removes the session with its messages and its activation, and nothing of another
// session; a named agent must be the session's; an expired session is gone already, left for
// the sweep.
func TestDeleteSession(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	ctx := context.Background()
	u := user()
	sid, keep := uuid.NewString(), uuid.NewString()
	if _, err := r.a.ActiveSession(ctx, u, app.ActiveSessionInput{Mode: ptr("activate"), SessionID: ptr(sid)}); err != nil {
		t.Fatal(err)
	}
	r.commit(t, u, sid, "", "a", "b")
	r.commit(t, u, keep, "", "c")
	if res, err := r.a.DeleteSession(ctx, u, app.SessionChangeInput{SessionID: ptr(sid)}); err != nil || !res.Deleted {
		t.Fatalf("delete: %+v, %v", res, err)
	}
	for table, col := range map[string]string{"sessions": "id", "messages": "session_id", "active_sessions": "session_id"} {
		if n := r.count(t, `select count(*) from agentmem.`+table+` where `+col+` = $1`, sid); n != 0 {
			t.Errorf("%d rows of %s left", n, table)
		}
	}
	if n := r.count(t, `select count(*) from agentmem.messages where session_id = $1`, keep); n != 1 {
		t.Errorf("the other session has %d messages", n)
	}
	_, err := r.a.DeleteSession(ctx, u, app.SessionChangeInput{SessionID: ptr(sid)})
	wantNotFound(t, "delete again", err)
	_, err = r.a.SessionHistory(ctx, u, app.SessionHistoryInput{SessionID: ptr(sid)})
	wantNotFound(t, "history of the deleted session", err)
	_, err = r.a.DeleteSession(ctx, u, app.SessionChangeInput{SessionID: ptr(keep), Agent: ptr("bot")})
	wantNotFound(t, "delete as another agent", err)
	_, err = r.a.SessionHistory(ctx, u, app.SessionHistoryInput{SessionID: ptr(keep), Agent: ptr("bot")})
	wantNotFound(t, "history as another agent", err)
	if res, err := r.a.DeleteSession(ctx, u, app.SessionChangeInput{SessionID: ptr(keep), Agent: ptr("default")}); err != nil || !res.Deleted {
		t.Errorf("delete as the session's agent: %+v, %v", res, err)
	}
	old := uuid.NewString()
	r.commit(t, u, old, "", "x")
	r.env.Exec(t, `update agentmem.sessions set expires_at = now() - interval '1 second' where id = $1`, old)
	_, err = r.a.DeleteSession(ctx, u, app.SessionChangeInput{SessionID: ptr(old)})
	wantNotFound(t, "delete an expired session", err)
	_, err = r.a.ResetSession(ctx, u, app.SessionChangeInput{SessionID: ptr(old)})
	wantNotFound(t, "reset an expired session", err)
	_, err = r.a.SessionHistory(ctx, u, app.SessionHistoryInput{SessionID: ptr(old)})
	wantNotFound(t, "history of an expired session", err)
	if n := r.count(t, `select count(*) from agentmem.sessions where id = $1`, old); n != 1 {
		t.Errorf("expired session: %d rows, want it left for the sweep", n)
	}
}

// delete_message deletes one live message of the session, found by id; a message of another
// session, an unknown or expired one, is not found.
func TestDeleteMessage(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	ctx := context.Background()
	u := user()
	sid, other := uuid.NewString(), uuid.NewString()
	c := r.commit(t, u, sid, "", "a", "b", "c")
	otherMsg := r.commit(t, u, other, "", "z").Messages[0].ID
	del := func(session, message string) (app.SessionDeleted, error) {
		return r.a.DeleteMessage(ctx, u, app.SessionChangeInput{SessionID: ptr(session), MessageID: ptr(message)})
	}
	if res, err := del(sid, c.Messages[1].ID); err != nil || !res.Deleted {
		t.Fatalf("delete_message: %+v, %v", res, err)
	}
	h, err := r.a.SessionHistory(ctx, u, app.SessionHistoryInput{SessionID: ptr(sid), Order: ptr("oldest")})
	if err != nil || !slices.Equal(seqs(h), []int64{1, 3}) || h.Total != 2 {
		t.Errorf("after delete_message: seqs %v total %d, %v", seqs(h), h.Total, err)
	}
	_, err = del(sid, c.Messages[1].ID)
	wantNotFound(t, "delete it again", err)
	_, err = del(sid, uuid.NewString())
	wantNotFound(t, "an unknown message", err)
	_, err = del(sid, otherMsg)
	wantNotFound(t, "a message of another session", err)
	_, err = del(uuid.NewString(), otherMsg)
	wantNotFound(t, "a message of another session, in no session", err)
	if n := r.count(t, `select count(*) from agentmem.messages where session_id = $1`, other); n != 1 {
		t.Errorf("the other session's message is gone")
	}
	r.env.Exec(t, `update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1 and seq = 1`, sid)
	_, err = del(sid, c.Messages[0].ID)
	wantNotFound(t, "an expired message", err)
}

// set_title sets a title of 1 to 200 characters without control characters, or clears it with
// null; a refused title changes nothing.
func TestSetSessionTitle(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	ctx := context.Background()
	u := user()
	sid := uuid.NewString()
	r.commit(t, u, sid, "", "a")
	title := func() *string {
		t.Helper()
		l, err := r.a.ListSessions(ctx, u, app.ListSessionsInput{})
		if err != nil || len(l.Sessions) != 1 {
			t.Fatalf("list: %+v, %v", l, err)
		}
		return l.Sessions[0].Title
	}
	set := func(raw string) (app.SessionTitle, error) {
		return r.a.SetSessionTitle(ctx, u, app.SetSessionTitleInput{SessionID: ptr(sid), Title: json.RawMessage(raw)})
	}
	long := strings.Repeat("é", 200)
	res, err := set(`"` + long + `"`)
	if err != nil || res.SessionID.String() != sid || res.Title == nil || *res.Title != long {
		t.Errorf("set_title: %+v, %v", res, err)
	}
	if got := title(); got == nil || *got != long {
		t.Errorf("listed title %v", got)
	}
	before := r.snapshot(t, u.UserID)
	for _, bad := range []string{`""`, `"   "`, `"` + strings.Repeat("x", 201) + `"`, `5`, `"line\nbreak"`, `"a\tb"`, `["x"]`, `{}`, ``} {
		_, err := set(bad)
		wantField(t, "title "+bad, err, "title")
	}
	if _, err := set(`"a\u0000b"`); err == nil || app.Problem(err).Code != apierror.InvalidRequest {
		t.Errorf("a title with NUL: %v, want invalid_request", err)
	}
	if r.snapshot(t, u.UserID) != before {
		t.Error("a refused set_title changed something")
	}
	if res, err := set(`null`); err != nil || res.Title != nil || title() != nil {
		t.Errorf("clearing: %+v, %v; listed %v", res, err, title())
	}
	_, err = r.a.SetSessionTitle(ctx, u, app.SetSessionTitleInput{SessionID: ptr(uuid.NewString()), Title: json.RawMessage(`"x"`)})
	wantNotFound(t, "set_title of no session", err)
}

// Every operation of the sessions function refuses a limit, agent, cursor, time, order, session
// or message id out of its range, naming the field, and changes nothing.
func TestSessionsRefuseBadInput(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	ctx := context.Background()
	u := user()
	sid := uuid.NewString()
	c := r.commit(t, u, sid, "", "a", "b", "c")
	mid := c.Messages[0].ID
	page, err := r.a.SessionHistory(ctx, u, app.SessionHistoryInput{SessionID: ptr(sid), Order: ptr("newest"), Limit: ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	newest := page.NextCursor
	r.env.Exec(t, `insert into agentmem.sessions (id, user_id, agent, expires_at) select gen_random_uuid(), $1, 'default', now() + interval '1 day' from generate_series(1, 2)`, u.UserID)
	list, err := r.a.ListSessions(ctx, u, app.ListSessionsInput{Limit: ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	listCursor := list.NextCursor
	userPage, err := r.a.SessionHistory(ctx, u, app.SessionHistoryInput{Limit: ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	userNewest := userPage.NextCursor
	if newest == nil || listCursor == nil || userNewest == nil {
		t.Fatal("fixture has no cursors")
	}
	memCursor := base64.RawURLEncoding.EncodeToString(append([]byte{'m'}, make([]byte, 24)...))
	farCursor := base64.RawURLEncoding.EncodeToString(append([]byte{'s', 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, make([]byte, 16)...))
	negSeq := base64.RawURLEncoding.EncodeToString([]byte{'o', 0xff, 0, 0, 0, 0, 0, 0, 0})
	before := r.snapshot(t, u.UserID)

	listIn := func(f func(*app.ListSessionsInput)) func() error {
		return func() error {
			in := app.ListSessionsInput{}
			f(&in)
			_, err := r.a.ListSessions(ctx, u, in)
			return err
		}
	}
	history := func(f func(*app.SessionHistoryInput)) func() error {
		return func() error {
			in := app.SessionHistoryInput{SessionID: ptr(sid)}
			f(&in)
			_, err := r.a.SessionHistory(ctx, u, in)
			return err
		}
	}
	userHistory := func(f func(*app.SessionHistoryInput)) func() error {
		return func() error {
			in := app.SessionHistoryInput{}
			f(&in)
			_, err := r.a.SessionHistory(ctx, u, in)
			return err
		}
	}
	change := func(op func(context.Context, auth.Principal, app.SessionChangeInput) error, in app.SessionChangeInput) func() error {
		return func() error { return op(ctx, u, in) }
	}
	reset := func(ctx context.Context, p auth.Principal, in app.SessionChangeInput) error {
		_, err := r.a.ResetSession(ctx, p, in)
		return err
	}
	del := func(ctx context.Context, p auth.Principal, in app.SessionChangeInput) error {
		_, err := r.a.DeleteSession(ctx, p, in)
		return err
	}
	delMsg := func(ctx context.Context, p auth.Principal, in app.SessionChangeInput) error {
		_, err := r.a.DeleteMessage(ctx, p, in)
		return err
	}
	for _, tc := range []struct {
		name  string
		call  func() error
		field string
	}{
		{"list limit 0", listIn(func(in *app.ListSessionsInput) { in.Limit = ptr(int64(0)) }), "limit"},
		{"list limit 101", listIn(func(in *app.ListSessionsInput) { in.Limit = ptr(int64(101)) }), "limit"},
		{"list bad agent", listIn(func(in *app.ListSessionsInput) { in.Agent = ptr("a b") }), "agent"},
		{"list empty cursor", listIn(func(in *app.ListSessionsInput) { in.Cursor = ptr("") }), "cursor"},
		{"list garbage cursor", listIn(func(in *app.ListSessionsInput) { in.Cursor = ptr("!!!") }), "cursor"},
		{"list padded cursor", listIn(func(in *app.ListSessionsInput) { in.Cursor = ptr(*listCursor + "=") }), "cursor"},
		{"list memories cursor", listIn(func(in *app.ListSessionsInput) { in.Cursor = ptr(memCursor) }), "cursor"},
		{"list history cursor", listIn(func(in *app.ListSessionsInput) { in.Cursor = newest }), "cursor"},
		{"list far cursor", listIn(func(in *app.ListSessionsInput) { in.Cursor = ptr(farCursor) }), "cursor"},
		{"history empty session", history(func(in *app.SessionHistoryInput) { in.SessionID = ptr("") }), "session_id"},
		{"history bad session", history(func(in *app.SessionHistoryInput) { in.SessionID = ptr("abc") }), "session_id"},
		{"history since", history(func(in *app.SessionHistoryInput) { in.Since = ptr("yesterday") }), "since"},
		{"history since no zone", history(func(in *app.SessionHistoryInput) { in.Since = ptr("2026-11-20T09:00:00") }), "since"},
		{"history order", history(func(in *app.SessionHistoryInput) { in.Order = ptr("NEWEST") }), "order"},
		{"history limit 0", history(func(in *app.SessionHistoryInput) { in.Limit = ptr(int64(0)) }), "limit"},
		{"history limit 201", history(func(in *app.SessionHistoryInput) { in.Limit = ptr(int64(201)) }), "limit"},
		{"history other order cursor", history(func(in *app.SessionHistoryInput) { in.Order = ptr("oldest"); in.Cursor = newest }), "cursor"},
		{"history list cursor", history(func(in *app.SessionHistoryInput) { in.Cursor = listCursor }), "cursor"},
		{"history negative seq", history(func(in *app.SessionHistoryInput) { in.Order = ptr("oldest"); in.Cursor = ptr(negSeq) }), "cursor"},
		{"history bad agent", history(func(in *app.SessionHistoryInput) { in.Agent = ptr("") }), "agent"},
		{"session history user cursor", history(func(in *app.SessionHistoryInput) { in.Cursor = userNewest }), "cursor"},
		{"user history since", userHistory(func(in *app.SessionHistoryInput) { in.Since = ptr("2026-11-20") }), "since"},
		{"user history session cursor", userHistory(func(in *app.SessionHistoryInput) { in.Cursor = newest }), "cursor"},
		{"user history list cursor", userHistory(func(in *app.SessionHistoryInput) { in.Cursor = listCursor }), "cursor"},
		{"user history other order cursor", userHistory(func(in *app.SessionHistoryInput) { in.Order = ptr("oldest"); in.Cursor = userNewest }), "cursor"},
		{"user history limit", userHistory(func(in *app.SessionHistoryInput) { in.Limit = ptr(int64(201)) }), "limit"},
		{"user history order", userHistory(func(in *app.SessionHistoryInput) { in.Order = ptr("Newest") }), "order"},
		{"user history agent", userHistory(func(in *app.SessionHistoryInput) { in.Agent = ptr("a b") }), "agent"},
		{"clear agent", func() error {
			_, err := r.a.ClearMessages(ctx, u, app.SessionsClearInput{Agent: ptr("a/b")})
			return err
		}, "agent"},
		{"reset no session", change(reset, app.SessionChangeInput{}), "session_id"},
		{"reset message_id", change(reset, app.SessionChangeInput{SessionID: ptr(sid), MessageID: ptr(mid)}), "message_id"},
		{"reset braces uuid", change(reset, app.SessionChangeInput{SessionID: ptr("{" + sid + "}")}), "session_id"},
		{"delete no session", change(del, app.SessionChangeInput{}), "session_id"},
		{"delete_message no message", change(delMsg, app.SessionChangeInput{SessionID: ptr(sid)}), "message_id"},
		{"delete_message bad message", change(delMsg, app.SessionChangeInput{SessionID: ptr(sid), MessageID: ptr("x\x01")}), "message_id"},
		{"delete_message bad session", change(delMsg, app.SessionChangeInput{SessionID: ptr("x"), MessageID: ptr(mid)}), "session_id"},
		{"set_title no session", func() error {
			_, err := r.a.SetSessionTitle(ctx, u, app.SetSessionTitleInput{Title: json.RawMessage(`"x"`)})
			return err
		}, "session_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantField(t, tc.name, tc.call(), tc.field)
		})
	}
	if r.snapshot(t, u.UserID) != before {
		t.Fatal("a refused request changed something")
	}
	_, err = r.a.ListSessions(ctx, auth.Principal{Role: auth.RoleService}, app.ListSessionsInput{})
	wantField(t, "service without user_id", err, "user_id")
}
