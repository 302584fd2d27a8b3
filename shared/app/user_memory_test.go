package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
)

// user-memory refuses a key, value or agent out of its rules, naming the field, and a key or
// value where the operation takes none; a refused request changes nothing. The limits are
// accepted at their edges.
func TestUserMemoryRefusesBadInput(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	a, ctx, u := r.a, context.Background(), user()
	if _, err := a.SetUserMemory(ctx, u, app.UserMemoryInput{Key: ptr("k"), Value: json.RawMessage(`{"v":1}`)}); err != nil {
		t.Fatal(err)
	}
	before := r.snapshotUserMemory(t, u.UserID)
	set := func(key *string, value string) func() error {
		return func() error {
			_, err := a.SetUserMemory(ctx, u, app.UserMemoryInput{Key: key, Value: json.RawMessage(value)})
			return err
		}
	}
	op := func(f func(context.Context, auth.Principal, app.UserMemoryInput) error, in app.UserMemoryInput) func() error {
		return func() error { return f(ctx, u, in) }
	}
	get := func(ctx context.Context, p auth.Principal, in app.UserMemoryInput) error {
		_, err := a.GetUserMemory(ctx, p, in)
		return err
	}
	del := func(ctx context.Context, p auth.Principal, in app.UserMemoryInput) error {
		_, err := a.DeleteUserMemory(ctx, p, in)
		return err
	}
	list := func(ctx context.Context, p auth.Principal, in app.UserMemoryInput) error {
		_, err := a.ListUserMemory(ctx, p, in)
		return err
	}
	clear := func(ctx context.Context, p auth.Principal, in app.UserMemoryInput) error {
		_, err := a.ClearUserMemory(ctx, p, in)
		return err
	}
	tooBig := `{"p":"` + strings.Repeat("x", 64<<10-len(`{"p":""}`)+1) + `"}`
	for _, tc := range []struct {
		name  string
		call  func() error
		field string
	}{
		{"missing key", set(nil, `{}`), "key"},
		{"empty key", set(ptr(""), `{}`), "key"},
		{"key too long", set(ptr(strings.Repeat("k", 129)), `{}`), "key"},
		{"blank key", set(ptr("   "), `{}`), "key"},
		{"key with surrounding space", set(ptr(" k"), `{}`), "key"},
		{"key with a line break", set(ptr("a\nb"), `{}`), "key"},
		{"key with a control character", op(get, app.UserMemoryInput{Key: ptr("a\u0007b")}), "key"},
		{"key with a line separator", op(del, app.UserMemoryInput{Key: ptr("a\u2028b")}), "key"},
		{"missing value", set(ptr("k"), ``), "value"},
		{"null value", set(ptr("k"), `null`), "value"},
		{"array value", set(ptr("k"), `[1]`), "value"},
		{"string value", set(ptr("k"), `"v"`), "value"},
		{"number value", set(ptr("k"), `1`), "value"},
		{"value over 64 KiB", set(ptr("k"), tooBig), "value"},
		// The HTTP decoder names the path (value.s); the store, given it anyway, names value.
		{"unpaired surrogate in value", set(ptr("k"), `{"s":"\ud800"}`), "value"},
		{"number beyond numeric's range", set(ptr("k"), `{"n":1e200000}`), "value"},
		{"agent", op(func(ctx context.Context, p auth.Principal, in app.UserMemoryInput) error {
			_, err := a.SetUserMemory(ctx, p, in)
			return err
		}, app.UserMemoryInput{Key: ptr("k"), Value: json.RawMessage(`{}`), Agent: ptr("bot")}), "agent"},
		{"key with list", op(list, app.UserMemoryInput{Key: ptr("k")}), "key"},
		{"key with clear", op(clear, app.UserMemoryInput{Key: ptr("k")}), "key"},
		{"value with get", op(get, app.UserMemoryInput{Key: ptr("k"), Value: json.RawMessage(`{}`)}), "value"},
		{"value with delete", op(del, app.UserMemoryInput{Key: ptr("k"), Value: json.RawMessage(`{"v":1}`)}), "value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantField(t, tc.name, tc.call(), tc.field)
		})
	}
	for name, call := range map[string]func() error{"NUL in value": set(ptr("k"), `{"s":"a\u0000"}`), "NUL in key": set(ptr("a\x00"), `{}`)} {
		if err := call(); err == nil || app.Problem(err).Code != apierror.InvalidRequest {
			t.Errorf("%s: %v, want invalid_request", name, err)
		}
	}
	_, err := a.ClearUserMemory(ctx, u, app.UserMemoryInput{ActingFor: app.ActingFor{UserID: ptr(user().UserID)}})
	if p := app.Problem(err); err == nil || p.Code != apierror.Forbidden {
		t.Errorf("a user acting for another: %v, want forbidden", err)
	}
	if after := r.snapshotUserMemory(t, u.UserID); after != before {
		t.Fatalf("bad requests changed the memory:\n%s\n%s", before, after)
	}
	// A null value where the operation takes none counts as absent.
	if item, err := a.GetUserMemory(ctx, u, app.UserMemoryInput{Key: ptr("k"), Value: json.RawMessage(`null`)}); err != nil || string(item.Value) != `{"v": 1}` {
		t.Errorf("get with a null value: %+v, %v", item, err)
	}
	// The edges that are valid: a key of 128 characters (256 bytes), a value of exactly 64 KiB
	// once compacted (spaces around it do not count), deep nesting within the size.
	key := strings.Repeat("é", 128)
	value := `{ "p" : "` + strings.Repeat("x", 64<<10-len(`{"p":""}`)) + `" }`
	deep := `{"a":` + strings.Repeat("[", 5000) + "7" + strings.Repeat("]", 5000) + `}`
	for k, v := range map[string]string{key: `{}`, "big": value, "deep": deep} {
		if _, err := a.SetUserMemory(ctx, u, app.UserMemoryInput{Key: ptr(k), Value: json.RawMessage(v)}); err != nil {
			t.Errorf("set %.20s: %v", k, err)
		}
	}
	item, err := a.GetUserMemory(ctx, u, app.UserMemoryInput{Key: ptr("deep")})
	var compact bytes.Buffer
	if err != nil || json.Compact(&compact, item.Value) != nil || compact.String() != deep {
		t.Errorf("deep value came back as %.80s… (%v)", item.Value, err)
	}
}

// snapshotUserMemory renders user's key/value memory: equal snapshots mean nothing changed.
func (r *sessionsRig) snapshotUserMemory(t *testing.T, user string) string {
	t.Helper()
	var s *string
	if err := r.env.Admin(t).QueryRow(context.Background(), `select string_agg(x::text, E'\n' order by x::text)
		from agentmem.user_memory x where user_id = $1`, user).Scan(&s); err != nil {
		t.Fatal(err)
	}
	if s == nil {
		return ""
	}
	return *s
}
