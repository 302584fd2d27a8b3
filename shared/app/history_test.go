package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

func ptr[T any](v T) *T { return &v }

// newApp is the use cases over a database of their own, and a way to count its rows.
func newApp(t *testing.T) (*app.App, func(q string, args ...any) int) {
	t.Helper()
	e := storetest.New(t, storetest.MaxConns(4))
	conn := e.Admin(t)
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return app.New(e.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{}), count
}

// wantField fails unless err shows the caller (app.Problem) a 400 invalid_request naming field.
func wantField(t *testing.T, what string, err error, field string) {
	t.Helper()
	ae := app.Problem(err)
	if err == nil || ae.Code != apierror.InvalidRequest {
		t.Errorf("%s: %v, want invalid_request", what, err)
		return
	}
	for _, f := range ae.Fields {
		if f.Field == field {
			return
		}
	}
	t.Errorf("%s: %v does not name %s", what, ae.Fields, field)
}

func user() auth.Principal { return auth.Principal{Role: auth.RoleUser, UserID: uuid.NewString()} }

// A history without session_id is the user's across sessions, with its own cursors: paging
// through it with next_cursor gives every message once, each with its session; a cursor of a
// session's history, or of the other order, is refused, as is a malformed since.
func TestUserHistoryThroughTheUseCase(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t)
	ctx := context.Background()
	u := user()
	sessions := []string{uuid.NewString(), uuid.NewString()}
	for i := 0; i < 3; i++ {
		for _, sid := range sessions {
			_, err := a.CommitTurn(ctx, u, app.CommitTurnInput{SessionID: ptr(sid), Messages: []app.MessageInput{
				{Role: ptr("user"), Content: json.RawMessage(`"q"`)}, {Role: ptr("assistant"), Content: json.RawMessage(`"a"`)}}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []string
	in := app.SessionHistoryInput{Op: ptr("history"), Order: ptr("oldest"), Limit: ptr(int64(5))}
	for {
		page, err := a.SessionHistory(ctx, u, in)
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 12 {
			t.Errorf("total %d, want 12", page.Total)
		}
		for _, m := range page.Messages {
			if m.SessionID == nil {
				t.Fatalf("message without session_id")
			}
			got = append(got, m.SessionID.String())
		}
		if page.NextCursor == nil {
			break
		}
		in.Cursor = page.NextCursor
	}
	if len(got) != 12 {
		t.Fatalf("%d messages paged, want 12", len(got))
	}
	// Per-session history carries no session_id (the session is the request's own).
	one, err := a.SessionHistory(ctx, u, app.SessionHistoryInput{SessionID: ptr(sessions[0]), Limit: ptr(int64(2))})
	if err != nil || len(one.Messages) != 2 || one.Messages[0].SessionID != nil || one.Total != 6 {
		t.Fatalf("session history: %+v, %v", one, err)
	}
	userNewest, err := a.SessionHistory(ctx, u, app.SessionHistoryInput{Limit: ptr(int64(1))})
	if err != nil || userNewest.NextCursor == nil {
		t.Fatalf("user history: %+v, %v", userNewest, err)
	}
	for _, c := range []struct {
		name  string
		in    app.SessionHistoryInput
		field string
	}{
		{"a session's cursor", app.SessionHistoryInput{Cursor: one.NextCursor}, "cursor"},
		{"the user's cursor for a session", app.SessionHistoryInput{SessionID: ptr(sessions[0]), Cursor: userNewest.NextCursor}, "cursor"},
		{"the other order's cursor", app.SessionHistoryInput{Order: ptr("oldest"), Cursor: userNewest.NextCursor}, "cursor"},
		{"since not a time", app.SessionHistoryInput{Since: ptr("yesterday")}, "since"},
		{"since without a zone", app.SessionHistoryInput{Since: ptr("2026-11-20T09:00:00")}, "since"},
		{"since a date", app.SessionHistoryInput{SessionID: ptr(sessions[0]), Since: ptr("2026-11-20")}, "since"},
		{"bad agent", app.SessionHistoryInput{Agent: ptr("a b")}, "agent"},
		{"limit", app.SessionHistoryInput{Limit: ptr(int64(201))}, "limit"},
		{"order", app.SessionHistoryInput{Order: ptr("latest")}, "order"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := a.SessionHistory(ctx, u, c.in)
			wantField(t, c.name, err, c.field)
		})
	}
	// A service names the user; without user_id it is refused.
	svc := auth.Principal{Role: auth.RoleService}
	_, err = a.SessionHistory(ctx, svc, app.SessionHistoryInput{})
	wantField(t, "service without user_id", err, "user_id")
	page, err := a.SessionHistory(ctx, svc, app.SessionHistoryInput{ActingFor: app.ActingFor{UserID: ptr(u.UserID)}})
	if err != nil || page.Total != 12 {
		t.Errorf("service for the user: total %d, %v", page.Total, err)
	}
	// since: a time between two microseconds rounds up, never taking in an earlier message.
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	if page, err := a.SessionHistory(ctx, u, app.SessionHistoryInput{Since: ptr(future)}); err != nil || page.Total != 0 {
		t.Errorf("since an hour ahead: total %d, %v", page.Total, err)
	}
	if page, err := a.SessionHistory(ctx, u, app.SessionHistoryInput{Since: ptr("2026-01-01T00:00:00.0000001+02:00")}); err != nil || page.Total != 12 {
		t.Errorf("since long ago with nanoseconds and an offset: total %d, %v", page.Total, err)
	}
}

// clear validates its agent and service callers' user, and answers how many it deleted.
func TestClearThroughTheUseCase(t *testing.T) {
	t.Parallel()
	a, count := newApp(t)
	ctx := context.Background()
	u := user()
	for _, agent := range []string{"alpha", "beta"} {
		if _, err := a.CommitTurn(ctx, u, app.CommitTurnInput{SessionID: ptr(uuid.NewString()), Agent: ptr(agent),
			Messages: []app.MessageInput{{Role: ptr("user"), Content: json.RawMessage(`"hello"`)}}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := a.ClearMessages(ctx, u, app.SessionsClearInput{Agent: ptr("")})
	wantField(t, "empty agent", err, "agent")
	_, err = a.ClearMessages(ctx, auth.Principal{Role: auth.RoleService}, app.SessionsClearInput{})
	wantField(t, "service without user_id", err, "user_id")
	if _, err := a.ClearMessages(ctx, user(), app.SessionsClearInput{ActingFor: app.ActingFor{UserID: ptr(u.UserID)}}); err == nil {
		t.Error("a user cleared another's messages")
	}
	if n := count(`select count(*) from agentmem.messages where user_id = $1`, u.UserID); n != 2 {
		t.Fatalf("refused clears deleted messages: %d left", n)
	}
	res, err := a.ClearMessages(ctx, u, app.SessionsClearInput{Agent: ptr("beta")})
	if err != nil || res.Deleted != 1 {
		t.Errorf("clear beta: %+v, %v", res, err)
	}
	res, err = a.ClearMessages(ctx, auth.Principal{Role: auth.RoleService}, app.SessionsClearInput{ActingFor: app.ActingFor{UserID: ptr(u.UserID)}})
	if err != nil || res.Deleted != 1 {
		t.Errorf("service clear: %+v, %v", res, err)
	}
}
