package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// retentionOf reads the default retention a row was stamped with (nil: an explicit expiry)
// and its expiry, of the first row q (selecting default_retention, expires_at) finds.
func retentionOf(t *testing.T, conn *pgx.Conn, q string, args ...any) (*time.Duration, time.Time) {
	t.Helper()
	var d *time.Duration
	var exp time.Time
	if err := conn.QueryRow(context.Background(), `select extract(epoch from default_retention)::float8 * 1e9, expires_at from (`+
		q+`) x limit 1`, args...).Scan(&d, &exp); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return d, exp
}

// backdate moves every row of a user back by ago, as if written then, without the triggers
// (as the superuser: a test's clock, not a write of the functions).
func backdate(t *testing.T, conn *pgx.Conn, user string, ago time.Duration) {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `set local session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"messages", "messages_archive", "memories", "sessions"} {
		if _, err := tx.Exec(ctx, `update agentmem.`+table+` set expires_at = expires_at - make_interval(secs => $2),
			created_at = created_at - make_interval(secs => $2) where user_id = $1`, user, ago.Seconds()); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// A write whose ttl is the deployment's default records it on every row whose expiry it sets
// (the messages, the turn's memories, the session, a memory remembered alone, a session an
// active-session call starts); an explicit ttl records none, even when it equals the default;
// a later write that extends an expiry takes its origin with it, one that leaves it keeps it.
func TestRetentionRecordsWhereAnExpiryCameFrom(t *testing.T) {
	t.Parallel()
	e := storetest.New(t, storetest.MaxConns(4))
	st, conn := e.Store, e.Admin(t)
	ctx := context.Background()
	sc := storetest.Scope("bot")
	def, explicit := uuid.New(), uuid.New()
	const ttl = 720 * time.Hour
	if _, _, err := st.CommitTurn(ctx, store.CommitParams{Scope: sc, SessionID: def, TTL: ttl, TTLIsDefault: true,
		Messages: chat(2, "default"), Memories: []memory.NewMemory{{Content: "Likes tea."}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CommitTurn(ctx, store.CommitParams{Scope: sc, SessionID: explicit, TTL: ttl,
		Messages: chat(2, "explicit"), Memories: []memory.NewMemory{{Content: "Likes coffee."}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CreateMemory(ctx, store.CreateMemoryParams{Scope: sc, Content: "Lives in Porto.", TTL: ttl, TTLIsDefault: true}); err != nil {
		t.Fatal(err)
	}
	active, err := st.ActiveSession(ctx, store.ActiveSessionParams{Scope: memory.Scope{UserID: sc.UserID, Agent: "other"},
		Mode: store.ModeNew, TTL: ttl, TTLIsDefault: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		q       string
		args    []any
		stamped bool
	}{
		{"a default turn's message", `select default_retention, expires_at from agentmem.messages where session_id = $1`, []any{def}, true},
		{"a default turn's session", `select default_retention, expires_at from agentmem.sessions where id = $1`, []any{def}, true},
		{"a default turn's memory", `select default_retention, expires_at from agentmem.memories where content = 'Likes tea.' and user_id = $1`, []any{sc.UserID}, true},
		{"a memory remembered alone", `select default_retention, expires_at from agentmem.memories where content = 'Lives in Porto.' and user_id = $1`, []any{sc.UserID}, true},
		{"a session started by active-session", `select default_retention, expires_at from agentmem.sessions where id = $1`, []any{active.SessionID}, true},
		{"an explicit turn's message", `select default_retention, expires_at from agentmem.messages where session_id = $1`, []any{explicit}, false},
		{"an explicit turn's session", `select default_retention, expires_at from agentmem.sessions where id = $1`, []any{explicit}, false},
		{"an explicit turn's memory", `select default_retention, expires_at from agentmem.memories where content = 'Likes coffee.' and user_id = $1`, []any{sc.UserID}, false},
	} {
		d, exp := retentionOf(t, conn, tc.q, tc.args...)
		if tc.stamped != (d != nil) || d != nil && *d != ttl {
			t.Errorf("%s: default_retention %v, want stamped %v", tc.name, d, tc.stamped)
		}
		if time.Until(exp) < ttl-time.Minute || time.Until(exp) > ttl+time.Minute {
			t.Errorf("%s: expires in %v", tc.name, time.Until(exp))
		}
	}
	// An explicit, later expiry of the same fact takes the memory's origin with it; a default
	// write that leaves the later expiry as it is keeps it explicit.
	if _, _, err := st.CreateMemory(ctx, store.CreateMemoryParams{Scope: sc, Content: "Likes tea.", TTL: 2 * ttl}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CreateMemory(ctx, store.CreateMemoryParams{Scope: sc, Content: "Likes tea.", TTL: ttl, TTLIsDefault: true}); err != nil {
		t.Fatal(err)
	}
	if d, exp := retentionOf(t, conn, `select default_retention, expires_at from agentmem.memories where content = 'Likes tea.' and user_id = $1`, sc.UserID); d != nil || time.Until(exp) < 2*ttl-time.Minute {
		t.Errorf("a memory extended by an explicit ttl: default_retention %v, expires in %v", d, time.Until(exp))
	}
	// A default turn to the explicit session extends it: the session follows the default now.
	if _, _, err := st.CommitTurn(ctx, store.CommitParams{Scope: sc, SessionID: explicit, TTL: ttl, TTLIsDefault: true,
		Messages: chat(1, "later")}); err != nil {
		t.Fatal(err)
	}
	if d, _ := retentionOf(t, conn, `select default_retention, expires_at from agentmem.sessions where id = $1`, explicit); d == nil {
		t.Error("a session extended by a default turn keeps no default")
	}
}

// The sweep re-stamps the rows stamped with another default than the deployment's: the time of
// their write plus the new default. Lowered, the rows it puts in the past are deleted in the
// same sweep and the others expire sooner; raised, they live longer; explicit expiries and
// rows of the deployment's default do not move; archived messages follow as live ones do.
func TestSweepRestampsRowsOfAnotherDefault(t *testing.T) {
	t.Parallel()
	e := newCapEnv(t, false)
	ctx := context.Background()
	sc := storetest.Scope("bot")
	old, recent, explicit := uuid.New(), uuid.New(), uuid.New()
	const before = 720 * time.Hour
	commit := func(sid uuid.UUID, isDefault bool, msgs []memory.NewMessage, facts ...string) {
		t.Helper()
		p := store.CommitParams{Scope: sc, SessionID: sid, TTL: before, TTLIsDefault: isDefault, Messages: msgs}
		for _, f := range facts {
			p.Memories = append(p.Memories, memory.NewMemory{Content: f})
		}
		if _, _, err := e.st.CommitTurn(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 600; i += 100 {
		commit(old, true, chat(100, "old"))
	}
	commit(explicit, false, chat(2, "explicit"), "An explicit fact.")
	commit(old, true, chat(2, "old"), "A default fact.")
	e.sweep(t, memory.HistoryCap{Keep: 500}) // 102 archived, stamped as they were
	backdate(t, e.conn, sc.UserID, 2*time.Hour)
	commit(recent, true, chat(2, "recent"), "A recent fact.")
	count := func(table, where string, args ...any) int {
		t.Helper()
		var n int
		if err := e.conn.QueryRow(ctx, `select count(*) from agentmem.`+table+` where `+where, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("messages_archive", "session_id = $1 and default_retention is not null", old); n != 102 {
		t.Fatalf("%d archived messages carry their default", n)
	}

	// The same default: nothing moves.
	res, err := e.st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute), DefaultRetention: before})
	if err != nil {
		t.Fatal(err)
	}
	if res.Restamped != (memory.RestampCounts{}) || res.Deleted.Messages != 0 {
		t.Fatalf("a sweep with the same default: %+v", res)
	}

	// Lowered to an hour: the rows written two hours ago expire and go; the recent ones expire
	// an hour after their write; the explicit ones stay as they were.
	res, err = e.st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute), DefaultRetention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := memory.RestampCounts{Messages: 502, ArchivedMessages: 102, Memories: 2, Sessions: 2}
	if res.Restamped != want {
		t.Errorf("re-stamped %+v, want %+v", res.Restamped, want)
	}
	if res.Deleted.Messages != 500 || res.Deleted.ArchivedMessages != 102 || res.Deleted.Memories != 1 || res.Deleted.Sessions != 1 {
		t.Errorf("deleted %+v, want the old session's messages, archive, fact and session", res.Deleted)
	}
	if n := count("messages", "user_id = $1", sc.UserID); n != 4 {
		t.Errorf("%d messages left, want the recent and explicit ones", n)
	}
	d, exp := retentionOf(t, e.conn, `select default_retention, expires_at from agentmem.messages where session_id = $1`, recent)
	if d == nil || *d != time.Hour || time.Until(exp) < 59*time.Minute || time.Until(exp) > 61*time.Minute {
		t.Errorf("a recent message: default %v, expires in %v, want an hour after its write", d, time.Until(exp))
	}
	d, exp = retentionOf(t, e.conn, `select default_retention, expires_at from agentmem.messages where session_id = $1`, explicit)
	if d != nil || time.Until(exp) < before-3*time.Hour {
		t.Errorf("an explicit message: default %v, expires in %v", d, time.Until(exp))
	}
	if n := count("memories", "user_id = $1", sc.UserID); n != 2 {
		t.Errorf("%d memories left, want the recent and the explicit fact", n)
	}

	// Raised again: the recent rows live 720 hours from their write.
	if _, err := e.st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute), DefaultRetention: before}); err != nil {
		t.Fatal(err)
	}
	if _, exp := retentionOf(t, e.conn, `select default_retention, expires_at from agentmem.memories where content = 'A recent fact.' and user_id = $1`, sc.UserID); time.Until(exp) < before-time.Minute {
		t.Errorf("a raised default: the recent fact expires in %v", time.Until(exp))
	}
}
