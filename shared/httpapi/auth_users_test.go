package httpapi_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/store"
)

// auSeededTables are the tables auSeed writes through the functions; every one must hold rows
// of the seeded user, so that the erasure of each is proven.
var auSeededTables = []string{"active_sessions", "idempotency_keys", "memories", "messages", "notes",
	"sessions", "user_memory", "user_state"}

// auSignUp adds a user to Supabase Auth's table, as a sign-up does.
func auSignUp(t *testing.T, conn *pgx.Conn, id uuid.UUID) {
	t.Helper()
	if _, err := conn.Exec(t.Context(), `insert into auth.users (id, aud, role, email, raw_app_meta_data,
		created_at, updated_at) values ($1, 'authenticated', 'authenticated', $2, '{"provider":"email"}', now(), now())`,
		id, id.String()+"@example.com"); err != nil {
		t.Fatal(err)
	}
}

// auSeed stores data of a user in a tenant in every table, through the functions: an active
// session, a turn with a memory and an idempotency key, key/value memory, state and notes.
func auSeed(t *testing.T, e *env, id uuid.UUID, tenant string) {
	t.Helper()
	tok := knToken(t, id, tenant)
	e.call(tok, "active-session", map[string]any{"agent": "au-bot"}).must(t, http.StatusCreated)
	e.call(tok, "commit-turn", map[string]any{"session_id": uuid.NewString(), "agent": "au-bot",
		"messages": []map[string]any{{"role": "user", "content": "I live in Porto."}, {"role": "assistant", "content": "Noted."}},
		"memories": []map[string]any{{"content": "User lives in Porto."}}},
		"Idempotency-Key", "au-"+uuid.NewString()).must(t, http.StatusCreated)
	e.call(tok, "user-memory", map[string]any{"op": "set", "key": "profile", "value": map[string]any{"city": "Porto"}}).
		must(t, http.StatusCreated)
	e.call(tok, "user-state", map[string]any{"op": "set", "mode": "active"}).must(t, http.StatusCreated)
	e.call(tok, "notes", map[string]any{"op": "overwrite", "agent": "au-bot", "content": "# Notes\nLives in Porto."}).
		must(t, http.StatusCreated)
}

// Deleting a user from Supabase Auth (auth.users) erases, in the same transaction, every row
// agentmem holds for them, in every table and tenant, and nothing of anyone else; a rolled
// back delete erases nothing.
func TestDeletingAnAuthUserErasesTheirRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	conn := e.adminConn()
	t.Cleanup(func() { conn.Close(context.Background()) })
	tables := knUserTables(t, conn)
	a, b := uuid.New(), uuid.New()
	t1 := "au-" + uuid.NewString()
	for _, id := range []uuid.UUID{a, b} {
		auSignUp(t, conn, id)
	}
	for _, s := range []struct {
		id     uuid.UUID
		tenant string
	}{{a, t1}, {a, ""}, {b, t1}, {b, ""}} {
		auSeed(t, e, s.id, s.tenant)
	}
	aBefore := knCounts(t, conn, tables, a, nil)
	bBefore := knCounts(t, conn, tables, b, nil)
	for _, table := range auSeededTables {
		if aBefore[table] == 0 || bBefore[table] == 0 {
			t.Fatalf("seeding left %s empty: a %v, b %v", table, aBefore, bBefore)
		}
	}

	t.Run("rolled back", func(t *testing.T) {
		tx, err := conn.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background()) //nolint:errcheck
		if _, err := tx.Exec(t.Context(), `delete from auth.users where id = $1`, a); err != nil {
			t.Fatal(err)
		}
		// Inside the transaction of the delete, the rows are already gone, and one job tells
		// the adapters (auFanout).
		for table, n := range auCountsIn(t, tx, tables, a) {
			if table == "jobs" && n == 1 {
				auFanout(t, tx, a)
				continue
			}
			if n != 0 {
				t.Errorf("within the delete's transaction, %d rows of the user remain in %s", n, table)
			}
		}
		if err := tx.Rollback(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := knCounts(t, conn, tables, a, nil); !maps.Equal(got, aBefore) {
			t.Errorf("after a rolled back delete, the user has %v, want %v", got, aBefore)
		}
	})

	t.Run("committed", func(t *testing.T) {
		// Supabase Auth deletes as its own role, which has no privilege on schema agentmem.
		authAdmin := auAuthAdminRole(t, conn)
		tx, err := conn.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background()) //nolint:errcheck
		if _, err := tx.Exec(t.Context(), "set local role "+pgx.Identifier{authAdmin}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		tag, err := tx.Exec(t.Context(), `delete from auth.users where id = $1`, a)
		if err != nil {
			t.Fatal(err)
		}
		if tag.RowsAffected() != 1 {
			t.Fatalf("deleted %d auth users, want 1", tag.RowsAffected())
		}
		if err := tx.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
		for table, n := range knCounts(t, conn, tables, a, nil) {
			if table == "jobs" && n == 1 {
				continue
			}
			if n != 0 {
				t.Errorf("%d rows of the deleted user remain in %s", n, table)
			}
		}
		if got := knCounts(t, conn, tables, b, nil); !maps.Equal(got, bBefore) {
			t.Errorf("another user's rows changed: %v, want %v", got, bBefore)
		}
		ftx, err := conn.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		auFanout(t, ftx, a)
		ftx.Rollback(t.Context()) //nolint:errcheck
		// What forget-user would erase, the deletion erased (forget-user keeps the erasure's
		// job, as the deletion keeps an earlier one).
		res, err := e.store.ForgetUser(t.Context(), store.ForgetParams{UserID: a.String(), AllTenants: true})
		if err != nil {
			t.Fatal(err)
		}
		for table, n := range res.Deleted {
			if n != 0 {
				t.Errorf("forget-user after the deletion still found %d rows in %s", n, table)
			}
		}
		// The user's old token now reads nothing.
		r := e.call(knToken(t, a, t1), "user-state", map[string]any{"op": "get"})
		if r.status != http.StatusNotFound {
			t.Errorf("user-state get of the deleted user: status %d, want 404: %s", r.status, r.raw)
		}
	})
}

// auAuthAdminRole makes a role that, like Supabase Auth's supabase_auth_admin, may delete
// from auth.users and has no privilege on schema agentmem; it is dropped when the test ends.
func auAuthAdminRole(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	name := "agentmem_test_auth_admin_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	id := pgx.Identifier{name}.Sanitize()
	for _, q := range []string{"create role " + id + " nologin", "grant usage on schema auth to " + id,
		"grant select, delete on auth.users to " + id} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{"drop owned by " + id, "drop role " + id} {
			if _, err := conn.Exec(context.Background(), q); err != nil {
				t.Logf("%s: %v", q, err)
			}
		}
	})
	var agentmem bool
	if err := conn.QueryRow(t.Context(), `select has_schema_privilege($1, 'agentmem', 'usage')`, name).Scan(&agentmem); err != nil {
		t.Fatal(err)
	}
	if agentmem {
		t.Fatalf("%s may use schema agentmem", name)
	}
	return name
}

// auCountsIn counts the rows of a user, every tenant, in each table, within tx.
func auCountsIn(t *testing.T, tx pgx.Tx, tables []string, id uuid.UUID) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range tables {
		var n int
		if err := tx.QueryRow(t.Context(), "select count(*) from agentmem."+pgx.Identifier{table}.Sanitize()+
			" where user_id::text = $1", id.String()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// auFanout checks the user's one job is the erasure's fan-out to the adapters: every tenant,
// no content.
func auFanout(t *testing.T, tx pgx.Tx, id uuid.UUID) {
	t.Helper()
	var adapter, intent, status, tenant, refs string
	if err := tx.QueryRow(t.Context(), `select adapter, intent, status, tenant_id, refs::text from agentmem.jobs
		where user_id = $1`, id).Scan(&adapter, &intent, &status, &tenant, &refs); err != nil {
		t.Fatal(err)
	}
	if adapter != "fanout" || intent != "onUserForgotten" || status != "pending" || tenant != "" || refs != `{"all_tenants": true}` {
		t.Errorf("the erasure's job: %s %s %s %q %s", adapter, intent, status, tenant, refs)
	}
}

// agentmem.erase_user, the erasure behind the trigger, erases the tables forget-user erases,
// counting each as forget-user counts it; only the migrating login may run it, and the
// trigger function runs as its owner with an empty search_path.
func TestEraseUserMatchesForgetUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	conn := e.adminConn()
	t.Cleanup(func() { conn.Close(context.Background()) })
	tables := knUserTables(t, conn)
	c, d := uuid.New(), uuid.New()
	for _, s := range []struct {
		id     uuid.UUID
		tenant string
	}{{c, "au-x"}, {c, ""}, {d, "au-x"}, {d, ""}} {
		auSeed(t, e, s.id, s.tenant)
	}
	dBefore := knCounts(t, conn, tables, d, nil)

	var raw []byte
	if err := conn.QueryRow(t.Context(), `select agentmem.erase_user($1)`, c).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var erased map[string]int64
	if err := json.Unmarshal(raw, &erased); err != nil {
		t.Fatal(err)
	}
	forgot, err := e.store.ForgetUser(t.Context(), store.ForgetParams{UserID: d.String(), AllTenants: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(erased)), slices.Sorted(maps.Keys(forgot.Deleted)); !slices.Equal(got, want) {
		t.Errorf("erase_user erases %v; forget-user erases %v", got, want)
	}
	for table, n := range forgot.Deleted {
		if int(n) != dBefore[table] {
			t.Errorf("forget-user deleted %d rows of %s, want %d", n, table, dBefore[table])
		}
		if erased[table] != n {
			t.Errorf("erase_user deleted %d rows of %s, forget-user %d for the same data", erased[table], table, n)
		}
	}

	for _, fn := range []string{"agentmem.erase_user(text)", "agentmem.erase_deleted_auth_user()"} {
		for _, role := range []string{"public", "anon", "authenticated", "service_role", store.CallerRole} {
			var can bool
			if err := conn.QueryRow(t.Context(), `select has_function_privilege($1, $2, 'execute')`, role, fn).Scan(&can); err != nil {
				t.Fatal(err)
			}
			if can {
				t.Errorf("%s may execute %s", role, fn)
			}
		}
	}
	var definer bool
	var config []string
	if err := conn.QueryRow(t.Context(), `select prosecdef, proconfig from pg_proc
		where oid = 'agentmem.erase_deleted_auth_user()'::regprocedure`).Scan(&definer, &config); err != nil {
		t.Fatal(err)
	}
	if !definer || !slices.Equal(config, []string{`search_path=""`}) {
		t.Errorf("the trigger function: security definer %v, settings %q; want a security definer with search_path ''", definer, config)
	}
	var triggers int
	if err := conn.QueryRow(t.Context(), `select count(*) from pg_trigger
		where tgrelid = 'auth.users'::regclass and tgfoid = 'agentmem.erase_deleted_auth_user()'::regprocedure
		and not tgisinternal`).Scan(&triggers); err != nil {
		t.Fatal(err)
	}
	if triggers != 1 {
		t.Errorf("%d triggers on auth.users run the erasure, want 1", triggers)
	}
}
