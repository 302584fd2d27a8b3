package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// knCaller is who calls an RPC through PostgREST: a role and, for users, their claims.
type knCaller struct {
	role   string
	user   uuid.UUID
	tenant string
}

// knAs runs fn in a transaction as PostgREST would for the caller (role and request.jwt.claims
// set for the transaction), then rolls it back.
func knAs(t *testing.T, conn *pgx.Conn, c knCaller, fn func(tx pgx.Tx) error) error {
	t.Helper()
	ctx := t.Context()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	claims := map[string]any{"role": c.role}
	if c.user != uuid.Nil {
		claims["sub"] = c.user.String()
		claims["aud"] = "authenticated"
	}
	if c.tenant != "" {
		claims["app_metadata"] = map[string]any{"tenant_id": c.tenant}
	}
	b, _ := json.Marshal(claims)
	if _, err := tx.Exec(ctx, `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)`,
		c.role, string(b)); err != nil {
		t.Fatal(err)
	}
	return fn(tx)
}

func knVec(text string) string { return pgvector.NewVector(embedding.Hash{}.Vector(text)).String() }

func knPgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

type knRow struct {
	id      uuid.UUID
	content string
	score   float64
}

// knQuery runs an RPC and returns (id, content, score) of each row; score is the last column.
func knQuery(t *testing.T, tx pgx.Tx, sql string, args ...any) ([]knRow, error) {
	t.Helper()
	rows, err := tx.Query(t.Context(), sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (knRow, error) {
		vals, err := r.Values()
		if err != nil {
			return knRow{}, err
		}
		var out knRow
		switch id := vals[0].(type) {
		case [16]byte:
			out.id = uuid.UUID(id)
		default:
			return out, fmt.Errorf("id of type %T", vals[0])
		}
		for _, v := range vals[1:] {
			if s, ok := v.(string); ok && out.content == "" && !strings.HasPrefix(s, "src-") {
				out.content = s
			}
		}
		out.score, _ = vals[len(vals)-1].(float64)
		return out, nil
	})
}

func knContents(rows []knRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.content)
	}
	slices.Sort(out)
	return out
}

// The match functions for supabase-js run as their caller: a user sees only their own
// memories (and their tenant's knowledge) whatever the arguments say, a filter only narrows,
// anon may not call them, and a user among many still gets their rows from the HNSW index.
func TestMatchFunctions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: seeds many users' memories for the HNSW index path")
	}
	db := testdb.New(t)
	ctx := t.Context()
	conn := storetest.Admin(t, db.URL)

	a, b, c := uuid.New(), uuid.New(), uuid.New()
	seed := func(tenant string, user uuid.UUID, content, expires string) {
		t.Helper()
		_, err := conn.Exec(ctx, `insert into agentmem.memories (tenant_id, user_id, agent, content, content_key,
			embedding, embedding_model, expires_at) values ($1, $2, '', $3, gen_random_uuid()::text, $4::extensions.vector,
			$6, now() + $5::interval)`, tenant, user, content, knVec(content), expires, embedding.HashModel)
		if err != nil {
			t.Fatal(err)
		}
	}
	seed("t1", a, "Ada prefers metric units", "1 day")
	seed("t1", a, "Ada drinks green tea every morning", "1 day")
	seed("t1", a, "Ada once preferred metric units in an expired fact", "-1 second")
	seed("t1", b, "Bob prefers imperial units", "1 day")
	seed("t1", b, "Bob drinks coffee", "1 day")
	seed("t2", c, "Cy prefers metric units too", "1 day")
	// Many rows of someone else, so the HNSW scan must go past them to find a user's rows.
	for i := 0; i < 300; i++ {
		seed("t1", b, fmt.Sprintf("Bob fact number %d about metric units and tea", i), "1 day")
	}
	if _, err := conn.Exec(ctx, `insert into agentmem.knowledge_chunks (tenant_id, source, chunk_index, content, embedding, embedding_model)
		values ('t1', 'src-handbook', 0, 'Refunds take five days', $1::extensions.vector, $4),
		       ('t1', 'src-handbook', 1, 'Shipping is free over fifty euros', $2::extensions.vector, $4),
		       ('t2', 'src-other', 0, 'Refunds take ten days in tenant two', $3::extensions.vector, $4)`,
		knVec("Refunds take five days"), knVec("Shipping is free over fifty euros"),
		knVec("Refunds take ten days in tenant two"), embedding.HashModel); err != nil {
		t.Fatal(err)
	}

	// One memory of a and one chunk of t1 hold vectors of another model than the rest.
	if _, err := conn.Exec(ctx, `update agentmem.memories set embedding_model = 'model-a'
		where content = 'Ada prefers metric units'`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `update agentmem.knowledge_chunks set embedding_model = 'model-k'
		where source = 'src-handbook' and chunk_index = 0`); err != nil {
		t.Fatal(err)
	}

	q := knVec("metric units")
	// A zero vector has no direction: its cosine distance to anything is NaN.
	zero := "[" + strings.TrimSuffix(strings.Repeat("0,", 384), ",") + "]"
	userA := knCaller{role: "authenticated", user: a, tenant: "t1"}
	userB := knCaller{role: "authenticated", user: b, tenant: "t1"}
	service := knCaller{role: "service_role"}
	aOwn := []string{"Ada drinks green tea every morning", "Ada prefers metric units"}

	tests := []struct {
		name   string
		caller knCaller
		sql    string
		args   []any
		// want is the sorted contents expected; nil with wantCode means an error.
		want     []string
		wantCode string
		first    string
		// only, when set, is the prefix of every row's content (and the row count is not checked).
		only string
		// seqscan lets the planner scan the table instead of the HNSW index.
		seqscan bool
	}{
		{name: "user, no filter", caller: userA, sql: `select * from public.match_memories($1::extensions.vector, 10)`,
			args: []any{q}, want: aOwn, first: "Ada prefers metric units"},
		{name: "user, filter null", caller: userA, sql: `select * from public.match_memories($1::extensions.vector, 10, $2)`,
			args: []any{q, nil}, want: aOwn},
		{name: "user, filter names another user", caller: userA, sql: `select * from public.match_memories($1::extensions.vector, 10, $2)`,
			args: []any{q, b}, want: nil},
		{name: "user, filter names themself", caller: userA, sql: `select * from public.match_memories($1::extensions.vector, 1, $2)`,
			args: []any{q, a}, want: []string{"Ada prefers metric units"}},
		{name: "user of another tenant", caller: knCaller{role: "authenticated", user: a, tenant: "t2"},
			sql: `select * from public.match_memories($1::extensions.vector, 10)`, args: []any{q}, want: nil},
		{name: "authenticated without a user", caller: knCaller{role: "authenticated"},
			sql: `select * from public.match_memories($1::extensions.vector, 10)`, args: []any{q}, want: nil},
		{name: "service narrows to one user", caller: service,
			sql: `select * from public.match_memories($1::extensions.vector, 10, $2)`, args: []any{q, a}, want: aOwn},
		{name: "anon may not call match_memories", caller: knCaller{role: "anon"},
			sql: `select * from public.match_memories($1::extensions.vector, 10)`, args: []any{q}, wantCode: "42501"},
		{name: "anon with a user's claims may not either", caller: knCaller{role: "anon", user: a, tenant: "t1"},
			sql: `select * from public.match_memories($1::extensions.vector, 10)`, args: []any{q}, wantCode: "42501"},
		{name: "hybrid as user", caller: userA,
			sql:  `select * from public.hybrid_match_memories('metric units', $1::extensions.vector, 10)`,
			args: []any{q}, want: aOwn, first: "Ada prefers metric units"},
		{name: "hybrid, text side only", caller: userA,
			sql:  `select * from public.hybrid_match_memories('green tea', $1::extensions.vector, 1, 1, 0)`,
			args: []any{q}, want: []string{"Ada drinks green tea every morning"}},
		{name: "hybrid as another user", caller: userB,
			sql:  `select * from public.hybrid_match_memories('Ada prefers metric units', $1::extensions.vector, 50)`,
			args: []any{knVec("Ada prefers metric units")}, only: "Bob "},
		{name: "anon may not call hybrid", caller: knCaller{role: "anon"},
			sql:  `select * from public.hybrid_match_memories('metric', $1::extensions.vector, 10)`,
			args: []any{q}, wantCode: "42501"},
		{name: "knowledge of the user's tenant", caller: userA,
			sql:  `select * from public.match_knowledge($1::extensions.vector, 10)`,
			args: []any{knVec("refunds")}, want: []string{"Refunds take five days", "Shipping is free over fifty euros"},
			first: "Refunds take five days"},
		{name: "knowledge filter cannot widen", caller: userA,
			sql:  `select * from public.match_knowledge($1::extensions.vector, 10, 't2')`,
			args: []any{knVec("refunds")}, want: nil},
		{name: "service knowledge of one tenant", caller: service,
			sql:  `select * from public.match_knowledge($1::extensions.vector, 10, 't2')`,
			args: []any{knVec("refunds")}, want: []string{"Refunds take ten days in tenant two"}},
		{name: "service, hybrid narrows to one user", caller: service,
			sql:  `select * from public.hybrid_match_memories('metric units', $1::extensions.vector, 10, filter_user_id => $2)`,
			args: []any{q, a}, want: aOwn, first: "Ada prefers metric units"},
		{name: "service, hybrid narrows to one tenant", caller: service,
			sql:  `select * from public.hybrid_match_memories('metric units', $1::extensions.vector, 10, filter_tenant_id => 't2')`,
			args: []any{q}, want: []string{"Cy prefers metric units too"}},
		{name: "service, match_memories narrows to one tenant", caller: service,
			sql:  `select * from public.match_memories($1::extensions.vector, 10, filter_tenant_id => 't2')`,
			args: []any{q}, want: []string{"Cy prefers metric units too"}},
		{name: "user, hybrid filter names another user", caller: userA,
			sql:  `select * from public.hybrid_match_memories('metric units', $1::extensions.vector, 10, filter_user_id => $2)`,
			args: []any{q, b}, want: nil},
		{name: "user, hybrid filter names another tenant", caller: userA,
			sql:  `select * from public.hybrid_match_memories('metric units', $1::extensions.vector, 10, filter_tenant_id => 't2')`,
			args: []any{q}, want: nil},
		{name: "query_model keeps that model's vectors", caller: userA,
			sql:  `select * from public.match_memories($1::extensions.vector, 10, query_model => 'model-a')`,
			args: []any{q}, want: []string{"Ada prefers metric units"}},
		{name: "query_model of no stored vector", caller: userA,
			sql:  `select * from public.match_memories($1::extensions.vector, 10, query_model => 'model-z')`,
			args: []any{q}, want: nil},
		{name: "hybrid, vector side ranks only query_model's vectors", caller: userA,
			sql:  `select * from public.hybrid_match_memories('zzzz', $1::extensions.vector, 10, query_model => 'model-a')`,
			args: []any{q}, want: []string{"Ada prefers metric units"}},
		{name: "hybrid, vector side without query_model", caller: userA,
			sql:  `select * from public.hybrid_match_memories('zzzz', $1::extensions.vector, 10)`,
			args: []any{q}, want: aOwn},
		{name: "knowledge of query_model", caller: userA,
			sql:  `select * from public.match_knowledge($1::extensions.vector, 10, query_model => 'model-k')`,
			args: []any{knVec("refunds")}, want: []string{"Refunds take five days"}},
		{name: "zero vector, memories", caller: service, seqscan: true,
			sql: `select * from public.match_memories($1::extensions.vector, 10)`, args: []any{zero}, want: nil},
		{name: "zero vector, memories by index", caller: service,
			sql: `select * from public.match_memories($1::extensions.vector, 10)`, args: []any{zero}, want: nil},
		{name: "zero vector, knowledge", caller: service, seqscan: true,
			sql: `select * from public.match_knowledge($1::extensions.vector, 10)`, args: []any{zero}, want: nil},
		{name: "zero vector, hybrid without a word in common", caller: service, seqscan: true,
			sql:  `select * from public.hybrid_match_memories('zzzz', $1::extensions.vector, 10)`,
			args: []any{zero}, want: nil},
		{name: "zero vector, hybrid ranks by text alone", caller: userA, seqscan: true,
			sql:  `select * from public.hybrid_match_memories('green tea', $1::extensions.vector, 10)`,
			args: []any{zero}, want: []string{"Ada drinks green tea every morning"}},
		{name: "anon may not call match_knowledge", caller: knCaller{role: "anon"},
			sql: `select * from public.match_knowledge($1::extensions.vector, 10)`, args: []any{q}, wantCode: "42501"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []knRow
			err := knAs(t, conn, tc.caller, func(tx pgx.Tx) error {
				// Make the planner use the HNSW index, as it does on a large table.
				if _, err := tx.Exec(ctx, `set local enable_seqscan = off; set local enable_sort = off`); err != nil {
					return err
				}
				if tc.seqscan {
					if _, err := tx.Exec(ctx, `set local enable_seqscan = on; set local enable_sort = on;
						set local enable_indexscan = off`); err != nil {
						return err
					}
				}
				var err error
				got, err = knQuery(t, tx, tc.sql, tc.args...)
				return err
			})
			if tc.wantCode != "" {
				if knPgCode(err) != tc.wantCode {
					t.Fatalf("error %v, want SQLSTATE %s", err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.only != "" {
				for _, r := range got {
					if !strings.HasPrefix(r.content, tc.only) {
						t.Errorf("row %q is not %q...", r.content, tc.only)
					}
				}
				if len(got) == 0 {
					t.Error("no rows")
				}
			} else if tc.want != nil || tc.first == "" {
				if c := knContents(got); !slices.Equal(c, tc.want) {
					t.Errorf("rows %q, want %q", c, tc.want)
				}
			}
			if tc.first != "" && (len(got) == 0 || got[0].content != tc.first) {
				t.Errorf("first row %v, want %q", got, tc.first)
			}
			for i := 1; i < len(got); i++ {
				if got[i].score > got[i-1].score {
					t.Errorf("rows not best first: %v", got)
				}
			}
		})
	}

	// The service sees every user; a user among 300 rows of another still gets theirs.
	var n int
	if err := knAs(t, conn, service, func(tx pgx.Tx) error {
		rows, err := knQuery(t, tx, `select * from public.match_memories($1::extensions.vector, 1000)`, q)
		n = len(rows)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n != 305 {
		t.Errorf("service sees %d unexpired memories, want 305", n)
	}

	// Safe definitions: invoker's rights and an empty search_path, executable by the API roles
	// that sign in, not by anon or PUBLIC.
	rows, err := conn.Query(ctx, `
		select p.proname::text, p.prosecdef, coalesce(p.proconfig, '{}'),
		       has_function_privilege('anon', p.oid, 'execute'),
		       has_function_privilege('authenticated', p.oid, 'execute'),
		       has_function_privilege('service_role', p.oid, 'execute')
		from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		where n.nspname = 'public' and p.proname in ('match_memories', 'match_knowledge', 'hybrid_match_memories')`)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	var definer, anon, authn, svc bool
	var config []string
	found := 0
	if _, err := pgx.ForEachRow(rows, []any{&name, &definer, &config, &anon, &authn, &svc}, func() error {
		found++
		if definer || !slices.Contains(config, `search_path=""`) || anon || !authn || !svc {
			t.Errorf("%s: security definer %v, config %v, execute anon %v authenticated %v service_role %v",
				name, definer, config, anon, authn, svc)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if found != 3 {
		t.Errorf("found %d match functions, want 3", found)
	}
}

// The knowledge base is the tenant's: its users read it and cannot write it; anon cannot even
// read it; a user of another tenant sees none of it.
func TestKnowledgeRowLevelSecurity(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := t.Context()
	conn := storetest.Admin(t, db.URL)
	if _, err := conn.Exec(ctx, `insert into agentmem.knowledge_chunks (tenant_id, source, chunk_index, content)
		values ('t1', 'a', 0, 'one'), ('t1', 'a', 1, 'two'), ('t2', 'b', 0, 'three'), ('', 'c', 0, 'four')`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tenant string
		want   int
	}{{"t1", 2}, {"t2", 1}, {"", 1}, {"t3", 0}} {
		t.Run(tc.tenant, func(t *testing.T) {
			var n, foreign int
			err := knAs(t, conn, knCaller{role: "authenticated", user: uuid.New(), tenant: tc.tenant}, func(tx pgx.Tx) error {
				if err := tx.QueryRow(ctx, `select count(*) from agentmem.knowledge_chunks`).Scan(&n); err != nil {
					return err
				}
				return tx.QueryRow(ctx, `select count(*) from agentmem.knowledge_chunks where tenant_id <> $1`, tc.tenant).Scan(&foreign)
			})
			if err != nil || n != tc.want || foreign != 0 {
				t.Errorf("user of tenant %q sees %d chunks (%d foreign), want %d; error %v", tc.tenant, n, foreign, tc.want, err)
			}
		})
	}
	writes := []string{
		`insert into agentmem.knowledge_chunks (tenant_id, source, chunk_index, content) values ('t1', 'x', 0, 'mine')`,
		`update agentmem.knowledge_chunks set content = 'changed'`,
		`delete from agentmem.knowledge_chunks`,
	}
	for _, w := range writes {
		err := knAs(t, conn, knCaller{role: "authenticated", user: uuid.New(), tenant: "t1"}, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, w)
			return err
		})
		if knPgCode(err) != "42501" {
			t.Errorf("user %q: error %v, want permission denied", w, err)
		}
	}
	err := knAs(t, conn, knCaller{role: "anon", user: uuid.New(), tenant: "t1"}, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `select count(*) from agentmem.knowledge_chunks`)
		return err
	})
	if knPgCode(err) != "42501" {
		t.Errorf("anon read: error %v, want permission denied", err)
	}
	err = knAs(t, conn, knCaller{role: "service_role"}, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `select count(*) from agentmem.knowledge_chunks`).Scan(&n); err != nil || n != 4 {
			return fmt.Errorf("service sees %d chunks (%v), want 4", n, err)
		}
		_, err := tx.Exec(ctx, writes[0])
		return err
	})
	if err != nil {
		t.Errorf("service_role: %v", err)
	}
}
