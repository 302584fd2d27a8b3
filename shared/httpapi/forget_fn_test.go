package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/auth"
)

// knSeedSQL writes one row for (tenant $1, user $2) in the tables no function of the core
// writes in knSeed. A table with a user_id column that knSeed leaves empty fails
// TestForgetUser* until it gets a row here, so the erasure of every table is proven.
var knSeedSQL = map[string]string{
	"user_memory": `insert into agentmem.user_memory (tenant_id, user_id, key, value)
		values ($1, $2, 'kn-' || gen_random_uuid(), '{"v": 1}')`,
	"user_state": `insert into agentmem.user_state (tenant_id, user_id, mode) values ($1, $2, 'active')
		on conflict do nothing`,
	"notes": `insert into agentmem.notes (tenant_id, user_id, agent, content)
		values ($1, $2, 'kn-' || gen_random_uuid(), '# Notes')`,
	// A rate-limit counter (written only when limits are set): it names the user and when they
	// were last active, so it goes with the rest.
	"request_rates": `insert into agentmem.request_rates (tenant_id, user_id, tat)
		values ($1, $2, now() + interval '1 minute') on conflict do nothing`,
	// A job of the outbox (written by changes only when an adapter is enabled): the user's
	// queued jobs go with the rest.
	"jobs": `insert into agentmem.jobs (id, event_id, tenant_id, user_id, intent, adapter)
		values (gen_random_uuid(), gen_random_uuid(), $1, $2, 'onTurnCommitted', 'webhook')`,
	// A rolling summary (written by the summarize job only when summaries are on), of one of
	// the user's sessions that has none yet.
	"session_summaries": `insert into agentmem.session_summaries (session_id, tenant_id, user_id, agent, content,
		  through_seq, prompt, model)
		select s.id, s.tenant_id, s.user_id, s.agent, 'a summary', 1, 'summarise.v1', 'test' from agentmem.sessions s
		where s.tenant_id = $1 and s.user_id = $2
		  and not exists (select 1 from agentmem.session_summaries x where x.session_id = s.id)
		limit 1`,
	// A message the history cap archived (moved only by the sweep), in one of the user's
	// sessions, below its live messages.
	"messages_archive": `insert into agentmem.messages_archive (session_id, seq, id, tenant_id, user_id, agent, role,
		  content, token_estimate, created_at, expires_at)
		select s.id, (select coalesce(min(a.seq), 0) - 1 from agentmem.messages_archive a where a.session_id = s.id),
		  'kn-' || gen_random_uuid(), s.tenant_id, s.user_id, s.agent, 'user', 'archived', 1, now(), now() + interval '1 day'
		from agentmem.sessions s where s.tenant_id = $1 and s.user_id = $2
		limit 1`,
}

// knUserTables lists, straight from the catalog, the tables of schema agentmem that have a
// user_id column (not their partitions, when the tables are partitioned by user).
func knUserTables(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(t.Context(), `
		select c.table_name::text from information_schema.columns c
		join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
		where c.table_schema = 'agentmem' and c.column_name = 'user_id' and t.table_type = 'BASE TABLE'
		  and not (select r.relispartition from pg_class r where r.oid = format('%I.%I', c.table_schema, c.table_name)::regclass)
		order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 8 {
		t.Fatalf("only %d tables with user_id: %v", len(tables), tables)
	}
	return tables
}

// knToken is a user token for a given user id and tenant.
func knToken(t *testing.T, id uuid.UUID, tenant string) string {
	t.Helper()
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: id.String(), TenantID: tenant})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// knSeed stores data of a user in a tenant in every table: through the functions where they
// write it (sessions, messages, memories, active sessions, idempotency records), by SQL for
// the rest.
func knSeed(t *testing.T, e *env, conn *pgx.Conn, id uuid.UUID, tenant string) {
	t.Helper()
	tok := knToken(t, id, tenant)
	e.call(tok, "active-session", map[string]any{"agent": "kn-bot"}).must(t, http.StatusCreated)
	e.call(tok, "commit-turn", map[string]any{"session_id": uuid.NewString(), "agent": "kn-bot",
		"messages": []map[string]any{{"role": "user", "content": "I live in Lisbon."}, {"role": "assistant", "content": "Noted."}},
		"memories": []map[string]any{{"content": "User lives in Lisbon."}}},
		"Idempotency-Key", "kn-"+uuid.NewString()).must(t, http.StatusCreated)
	// The words of those messages counted for BM25, and a turn's left pending.
	if _, err := conn.Exec(t.Context(), `select agentmem.fold_message_words($1, $2, 'kn-bot', 1000)`, id.String(), tenant); err != nil {
		t.Fatal(err)
	}
	e.call(tok, "commit-turn", map[string]any{"session_id": uuid.NewString(), "agent": "kn-bot",
		"messages": []map[string]any{{"role": "user", "content": "And I work in Porto."}}}).must(t, http.StatusCreated)
	for _, q := range knSeedSQL {
		if _, err := conn.Exec(t.Context(), q, tenant, id); err != nil {
			t.Fatal(err)
		}
	}
}

// knCounts counts the rows of a user (in one tenant, or every tenant when tenant is nil) in
// every table with a user_id column.
func knCounts(t *testing.T, conn *pgx.Conn, tables []string, id uuid.UUID, tenant *string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range tables {
		if tenant == nil {
			out[table] = knCount(t, conn, table, "user_id::text = $1", id.String())
		} else {
			out[table] = knCount(t, conn, table, "user_id::text = $1 and tenant_id = $2", id.String(), *tenant)
		}
	}
	return out
}

// knCount counts rows of a table as the superuser, bypassing row-level security.
func knCount(t *testing.T, conn *pgx.Conn, table, where string, args ...any) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(t.Context(), "select count(*) from agentmem."+pgx.Identifier{table}.Sanitize()+
		" where "+where, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func knPtr(s string) *string { return &s }

func TestForgetUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	conn := e.adminConn()
	t.Cleanup(func() { conn.Close(context.Background()) })
	tables := knUserTables(t, conn)
	svc := e.serviceToken()

	tests := []struct {
		name string
		// forget erases a's data and returns the tenant it erased (nil: every tenant).
		forget func(t *testing.T, a uuid.UUID, t1, t2 string) (response, *string)
	}{
		{"a user erases themself", func(t *testing.T, a uuid.UUID, t1, _ string) (response, *string) {
			return e.call(knToken(t, a, t1), "forget-user", map[string]any{}), &t1
		}},
		{"a user naming themself", func(t *testing.T, a uuid.UUID, t1, _ string) (response, *string) {
			return e.call(knToken(t, a, t1), "forget-user", map[string]any{"user_id": a, "tenant_id": t1}), &t1
		}},
		{"a service erases one tenant", func(t *testing.T, a uuid.UUID, t1, _ string) (response, *string) {
			return e.call(svc, "forget-user", map[string]any{"user_id": a, "tenant_id": t1}), &t1
		}},
		{"a service erases every tenant", func(t *testing.T, a uuid.UUID, _, _ string) (response, *string) {
			return e.call(svc, "forget-user", map[string]any{"user_id": a}), nil
		}},
		{"a user without a tenant", func(t *testing.T, a uuid.UUID, _, _ string) (response, *string) {
			return e.call(knToken(t, a, ""), "forget-user", nil), knPtr("")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn := e.adminConn()
			defer conn.Close(context.Background())
			a, b := uuid.New(), uuid.New()
			t1, t2 := "kn-"+uuid.NewString(), "kn-"+uuid.NewString()
			// a and b in t1, a in t2 and without a tenant too.
			for _, s := range []struct {
				id     uuid.UUID
				tenant string
			}{{a, t1}, {b, t1}, {a, t2}, {a, ""}, {b, ""}} {
				knSeed(t, e, conn, s.id, s.tenant)
			}
			aAll := knCounts(t, conn, tables, a, nil)
			bAll := knCounts(t, conn, tables, b, nil)
			for _, table := range tables {
				if aAll[table] == 0 || bAll[table] == 0 {
					t.Fatalf("table agentmem.%s has no row of the users: seed it in knSeed or knSeedSQL so its erasure is tested", table)
				}
			}

			r, tenant := tc.forget(t, a, t1, t2)
			r.must(t, http.StatusOK)
			// Every table is in the answer, with the number of rows it lost.
			deleted := obj(r.body["deleted"])
			var keys []string
			for k := range deleted {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, tables) {
				t.Errorf("deleted names %v; the tables with user_id are %v", keys, tables)
			}
			if r.body["user_id"] != a.String() {
				t.Errorf("user_id: %s", r.raw)
			}
			if (tenant == nil && r.body["tenant_id"] != nil) || (tenant != nil && r.body["tenant_id"] != *tenant) {
				t.Errorf("tenant_id %v, want %v", r.body["tenant_id"], tenant)
			}

			after := knCounts(t, conn, tables, a, nil)
			for _, table := range tables {
				// a has nothing left in the erased scope.
				left := after[table]
				if tenant != nil {
					left = knCount(t, conn, table, "user_id = $1 and tenant_id = $2", a, *tenant)
				}
				if left != 0 {
					t.Errorf("%s: %d rows of the erased user remain", table, left)
				}
				if got, want := int(deleted[table].(float64)), aAll[table]-after[table]; got != want {
					t.Errorf("%s: answer says %d deleted, %d were", table, got, want)
				}
				// Outside the erased scope nothing changed: a's other tenants, and b everywhere.
				if tenant != nil && after[table] == 0 {
					t.Errorf("%s: erasing tenant %q took a's rows of the other tenants", table, *tenant)
				}
			}
			if got := knCounts(t, conn, tables, b, nil); !mapsEqual(got, bAll) {
				t.Errorf("the other user's rows changed: %v, were %v", got, bAll)
			}
			// Erasing again finds nothing.
			r2, _ := tc.forget(t, a, t1, t2)
			r2.must(t, http.StatusOK)
			for table, n := range obj(r2.body["deleted"]) {
				if n != 0.0 {
					t.Errorf("second erasure deleted %v rows of %s", n, table)
				}
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestForgetUserBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	svc := e.serviceToken()
	u := e.newUser("kn-t")
	tests := []callCase{
		{"service without user_id", svc, map[string]any{}, 400, "user_id"},
		{"service with a bad user_id", svc, map[string]any{"user_id": "no\x01pe"}, 400, "user_id"},
		{"service with a bad tenant_id", svc, map[string]any{"user_id": uuid.NewString(), "tenant_id": "a\u0001b"}, 400, "tenant_id"},
		{"user naming another user", u.token, map[string]any{"user_id": uuid.NewString()}, 403, ""},
		{"user naming another tenant", u.token, map[string]any{"tenant_id": "other"}, 403, ""},
		{"unknown field", u.token, map[string]any{"everything": true}, 400, "everything"},
		{"user_id of the wrong type", svc, map[string]any{"user_id": 12}, 400, "user_id"},
		{"no token", "", map[string]any{}, 401, ""},
	}
	runCallCases(t, e, "forget-user", tests)
}

// A table added to the schema later is erased too, without a change to forget-user: whether
// users may write it or only the service, whether it has a tenant_id, and whether it hangs off
// another table by a foreign key.
func TestForgetUserCoversTablesAddedLater(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	conn := e.adminConn()
	defer conn.Close(context.Background())
	// The messages' key: (session_id, seq), or with user_id in front on tables partitioned by user,
	// where a foreign key to a user-owned table carries the user.
	var messageKey string
	if err := conn.QueryRow(t.Context(), `select string_agg(a.attname, ', ' order by k.ord)
		from pg_constraint c cross join unnest(c.conkey) with ordinality k(attnum, ord)
		join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum
		where c.conrelid = 'agentmem.messages'::regclass and c.contype = 'p'`).Scan(&messageKey); err != nil {
		t.Fatal(err)
	}
	e.exec(`
		create table agentmem.kn_jobs (id bigint generated always as identity primary key,
		  tenant_id text not null default '', user_id uuid not null, payload text);
		grant select, insert, update, delete on agentmem.kn_jobs to service_role;
		create table agentmem.kn_devices (user_id text not null, name text);
		grant select, insert, update, delete on agentmem.kn_devices to service_role;
		create table agentmem.kn_message_votes (session_id uuid not null, seq bigint not null,
		  tenant_id text not null default '', user_id text not null,
		  foreign key (` + messageKey + `) references agentmem.messages (` + messageKey + `) on delete restrict);
		alter table agentmem.kn_message_votes enable row level security;
		create policy owner_only on agentmem.kn_message_votes for all to authenticated
		  using (user_id = (select auth.jwt() ->> 'sub') and tenant_id = (select agentmem.current_tenant()));
		grant select, insert, update, delete on agentmem.kn_message_votes to authenticated, service_role;`)
	for _, tc := range []struct {
		name  string
		token func(a uuid.UUID) string
		body  func(a uuid.UUID) any
	}{
		{"as the user", func(a uuid.UUID) string { return knToken(t, a, "t1") }, func(uuid.UUID) any { return nil }},
		{"as a service", func(uuid.UUID) string { return e.serviceToken() }, func(a uuid.UUID) any { return map[string]any{"user_id": a} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := uuid.New(), uuid.New()
			for _, id := range []uuid.UUID{a, b} {
				knSeed(t, e, conn, id, "t1")
				for _, q := range []string{
					`insert into agentmem.kn_jobs (tenant_id, user_id, payload) values ('t1', $1, 'job')`,
					`insert into agentmem.kn_devices (user_id, name) values ($1::text, 'phone')`,
					// A vote on one of the user's own messages: it must go before the message.
					`insert into agentmem.kn_message_votes (session_id, seq, tenant_id, user_id)
					 select session_id, seq, tenant_id, user_id from agentmem.messages where user_id = $1 limit 1`,
				} {
					if _, err := conn.Exec(t.Context(), q, id); err != nil {
						t.Fatal(err)
					}
				}
			}
			r := e.call(tc.token(a), "forget-user", tc.body(a)).must(t, http.StatusOK)
			deleted := obj(r.body["deleted"])
			for _, table := range []string{"kn_jobs", "kn_devices", "kn_message_votes"} {
				if deleted[table] != 1.0 {
					t.Errorf("%s: deleted %v, want 1: %s", table, deleted[table], r.raw)
				}
			}
			for _, table := range knUserTables(t, conn) {
				if n := knCount(t, conn, table, "user_id::text = $1", a.String()); n != 0 {
					t.Errorf("%s: %d rows of the erased user remain", table, n)
				}
				if n := knCount(t, conn, table, "user_id::text = $1", b.String()); n == 0 {
					t.Errorf("%s: the other user's rows are gone", table)
				}
			}
		})
	}
}
