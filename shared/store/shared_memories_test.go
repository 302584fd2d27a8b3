package store_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// sharedFixture writes, as the superuser, one shared memory (user ”) of tenant $1 whose
// content is $2, and returns its id.
const sharedFixture = `insert into agentmem.memories (tenant_id, user_id, agent, content, content_key, embedding,
	embedding_model, expires_at)
	values ($1, '', '', $2, md5($2), $3::extensions.vector, $4, now() + interval '1 day') returning id`

// Shared memories under row-level security alone, as an attacker reaches the database: with
// the project's anon key and their own token through PostgREST (role authenticated), and, for a
// flaw in the functions, under the functions' role with their own claims. Each user reads the
// shared memories of their own tenant (a user without a tenant those written without one) and
// no other tenant's; a request that names no user reads none; and no user can write one in any
// way: insert, turn their own memory into one, change, take or delete one, nor store one through
// store_memories. The table is unchanged after every attempt.
func TestSharedMemoriesRowLevelSecurity(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := t.Context()
	conn := storetest.Admin(t, db.URL)
	model := embedding.Hash{}.Model()

	shared := map[string]uuid.UUID{} // tenant -> its shared memory
	for _, tenant := range []string{"A", "B", ""} {
		var id uuid.UUID
		text := "Office closes at noon on Fridays for tenant " + tenant
		if err := conn.QueryRow(ctx, sharedFixture, tenant, text, knVec(text), model).Scan(&id); err != nil {
			t.Fatal(err)
		}
		shared[tenant] = id
	}
	alice, bob, carol := owner{"A", "auth0|alice"}, owner{"B", "user_2bob"}, owner{"", uuid.NewString()}
	for _, o := range []owner{alice, bob, carol} {
		if _, err := conn.Exec(ctx, `insert into agentmem.memories (tenant_id, user_id, agent, content, content_key,
			embedding, embedding_model, expires_at)
			values ($1, $2, '', 'Office hours suit me', md5($2), $3::extensions.vector, $4, now() + interval '1 day')`,
			o.tenant, o.user, knVec("Office hours suit me"), model); err != nil {
			t.Fatal(err)
		}
	}
	digest := func() string {
		t.Helper()
		var d string
		if err := conn.QueryRow(ctx, `select md5(string_agg(m::text, ',' order by m.id)) from agentmem.memories m`).Scan(&d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	before := digest()

	// ids runs q as role with claims and collects the ids it returns.
	ids := func(role string, claims map[string]any, q string, args ...any) ([]uuid.UUID, error) {
		var out []uuid.UUID
		err := asRole(t, conn, role, claims, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, q, args...)
			if err != nil {
				return err
			}
			out, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
			return err
		})
		return out, err
	}

	roles := []string{"authenticated", store.CallerRole}
	for _, role := range roles {
		for _, c := range []struct {
			viewer owner
			tenant string
		}{{alice, "A"}, {bob, "B"}, {carol, ""}} {
			got, err := ids(role, userClaims(c.viewer), `select id from agentmem.memories where user_id = ''`)
			if err != nil || len(got) != 1 || got[0] != shared[c.tenant] {
				t.Errorf("%s as %v: shared memories %v, error %v; want only its tenant's %s", role, c.viewer, got, err, shared[c.tenant])
			}
			// Naming another tenant's (or the tenant-less) shared memory outright finds nothing.
			for tenant, id := range shared {
				if tenant == c.tenant {
					continue
				}
				got, err := ids(role, userClaims(c.viewer), `select id from agentmem.memories where id = $1 or tenant_id = $2`, id, tenant)
				if err != nil || len(got) != 0 {
					t.Errorf("%s as %v reading tenant %q's shared memory: %v, error %v", role, c.viewer, tenant, got, err)
				}
			}
		}
		// Claims that name no user read no shared memory, not even those of no tenant.
		for _, claims := range []map[string]any{nil, {"role": "authenticated"}, {"role": "authenticated", "app_metadata": map[string]any{"tenant_id": "A"}}} {
			got, err := ids(role, claims, `select id from agentmem.memories`)
			if err != nil || len(got) != 0 {
				t.Errorf("%s with claims %v: %v, error %v; want nothing", role, claims, got, err)
			}
		}
	}

	// Supabase clients' search RPCs rank what row-level security shows: the user's own and
	// their tenant's shared memory, never another tenant's.
	for _, rpc := range []string{
		"select id from public.match_memories($1::extensions.vector, 100)",
		"select id from public.hybrid_match_memories('office noon fridays', $1::extensions.vector, 100)",
	} {
		got, err := ids("authenticated", userClaims(alice), rpc, knVec("office closes at noon"))
		if err != nil || len(got) != 2 || !slices.Contains(got, shared["A"]) || slices.Contains(got, shared["B"]) || slices.Contains(got, shared[""]) {
			t.Errorf("%s as %v: %v, error %v; want alice's own and tenant A's shared", rpc, alice, got, err)
		}
	}

	// Recall's functions under the functions' role: another tenant's shared memories are not
	// found however the arguments name them (its tenant, the shared owner, with_shared).
	for _, exact := range []bool{true, false} {
		q := `select id from agentmem.recall_memories(p_query => 'office noon fridays', query_embedding => $1::extensions.vector,
			query_model => $2, p_user_id => $3, p_tenant_id => $4, p_agent => '', p_filter => '{}', p_mode => 'hybrid',
			candidates => 20, text_weight => 1, vector_weight => 1, rrf_k => 50, min_score => -1, p_k => 10,
			exact_limit => case when $5 then 2000 else 1 end, with_vectors => false, with_shared => true)`
		for _, target := range []owner{{"B", ""}, {"B", bob.user}, {"", ""}} {
			got, err := ids(store.CallerRole, userClaims(alice), q, knVec("office noon fridays"), model, target.user, target.tenant, exact)
			if err != nil || len(got) != 0 {
				t.Errorf("recall_memories (exact %v) as %v for %v: %v, error %v; want nothing", exact, alice, target, got, err)
			}
		}
		got, err := ids(store.CallerRole, userClaims(alice), q, knVec("office noon fridays"), model, alice.user, alice.tenant, exact)
		if err != nil || len(got) != 2 || !slices.Contains(got, shared["A"]) {
			t.Errorf("recall_memories (exact %v) as %v for itself: %v, error %v; want its own and tenant A's shared", exact, alice, got, err)
		}
	}

	// Writes. The client role holds no write privilege at all; the functions' role under a
	// user's claims is refused by row-level security (42501) for new rows and finds no shared
	// row to change or delete.
	insertShared := `insert into agentmem.memories (tenant_id, user_id, agent, content, content_key, expires_at)
		values ($1, '', '', 'Planted fact', 'planted', now() + interval '1 day')`
	for _, role := range roles {
		for _, a := range []struct {
			name string
			sql  string
			args []any
		}{
			{"insert a shared memory of its tenant", insertShared, []any{alice.tenant}},
			{"insert a shared memory of another tenant", insertShared, []any{"B"}},
			{"insert a shared memory of no tenant", insertShared, []any{""}},
			{"turn its own memory into a shared one", `update agentmem.memories set user_id = '' where user_id = $1`, []any{alice.user}},
			{"store one through store_memories", `select * from agentmem.store_memories(p_tenant_id => $1, p_user_id => '',
				p_agent => '', p_session_id => null, p_contents => array['Planted fact'], p_keys => array['planted'],
				p_metadata => array['{}'], p_embeddings => array[null]::text[], p_model => 'm', p_ttl_seconds => 3600,
				min_similarity => 0.95)`, []any{alice.tenant}},
		} {
			err := asRole(t, conn, role, userClaims(alice), func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, a.sql, a.args...)
				return err
			})
			if pgCode(err) != "42501" {
				t.Errorf("%s as %s: error %v, want 42501", a.name, role, err)
			}
		}
		for _, a := range []struct {
			name string
			sql  string
		}{
			{"change its tenant's shared memory", `update agentmem.memories set content = 'Planted fact' where id = $1`},
			{"take its tenant's shared memory", `update agentmem.memories set user_id = $2 where id = $1`},
			{"move its tenant's shared memory to another tenant", `update agentmem.memories set tenant_id = 'B' where id = $1`},
			{"delete its tenant's shared memory", `delete from agentmem.memories where id = $1`},
			{"delete every shared memory", `delete from agentmem.memories where user_id = '' or $1::uuid is null`},
		} {
			var n int64
			err := asRole(t, conn, role, userClaims(alice), func(tx pgx.Tx) error {
				args := []any{shared["A"]}
				if a.name == "take its tenant's shared memory" {
					args = append(args, alice.user)
				}
				tag, err := tx.Exec(ctx, a.sql, args...)
				n = tag.RowsAffected()
				return err
			})
			want := "" // the functions' role: no error, no row
			if role == "authenticated" {
				want = "42501"
			}
			if pgCode(err) != want || n != 0 || (want == "" && err != nil) {
				t.Errorf("%s as %s: %d rows, error %v; want none and code %q", a.name, role, n, err, want)
			}
		}
	}
	if after := digest(); after != before {
		t.Error("agentmem.memories changed under the attempts")
	}
	// The check above proves something: the same statements under the shared scope's claims
	// (sub '', the functions' own for a service caller) do write, in the tenant of the claims.
	err := asRole(t, conn, store.CallerRole, userClaims(owner{"A", memory.SharedUserID}), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertShared, "A"); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `delete from agentmem.memories where id = $1`, shared["A"])
		if err == nil && tag.RowsAffected() != 1 {
			return errors.New("the shared scope deleted no row")
		}
		if _, err := tx.Exec(ctx, insertShared, "B"); pgCode(err) != "42501" {
			return errors.New("the shared scope of A wrote a shared memory of B: " + errString(err))
		}
		return nil
	})
	if err != nil {
		t.Errorf("the shared scope's own writes: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// sharedEnv is a store with shared memories of tenants A and B and of no tenant, and users of
// each with memories of their own.
type sharedEnv struct {
	st                 *store.Store
	conn               *pgx.Conn
	alice, amy, bob    memory.Scope // alice and amy of tenant A, bob of B
	carol              memory.Scope // no tenant
	sharedA, sharedB   uuid.UUID
	sharedNone, aliceM uuid.UUID
}

func newSharedEnv(t *testing.T) *sharedEnv {
	t.Helper()
	e := storetest.New(t, storetest.MaxConns(2))
	s := &sharedEnv{st: e.Store, conn: e.Admin(t),
		alice: memory.Scope{TenantID: "A", UserID: "auth0|alice", Agent: memory.DefaultAgent},
		amy:   memory.Scope{TenantID: "A", UserID: "user_2amy", Agent: memory.DefaultAgent},
		bob:   memory.Scope{TenantID: "B", UserID: uuid.NewString(), Agent: memory.DefaultAgent},
		carol: memory.Scope{UserID: uuid.NewString(), Agent: memory.DefaultAgent}}
	s.sharedA = storetest.Memory(t, s.st, memory.SharedScope("A", memory.DefaultAgent), "The support line opens at nine", nil).ID
	s.sharedB = storetest.Memory(t, s.st, memory.SharedScope("B", memory.DefaultAgent), "The support line opens at ten", nil).ID
	s.sharedNone = storetest.Memory(t, s.st, memory.SharedScope("", memory.DefaultAgent), "The support line opens at eight", nil).ID
	s.aliceM = storetest.Memory(t, s.st, s.alice, "Alice calls the support line often", nil).ID
	storetest.Memory(t, s.st, s.amy, "Amy calls the support line at night", nil)
	storetest.Memory(t, s.st, s.bob, "Bob calls the support line weekly", nil)
	storetest.Memory(t, s.st, s.carol, "Carol calls the support line rarely", nil)
	return s
}

// recall is what sc recalls for "support line opens", with or without the shared memories, of
// source: ids (memories as ids, messages as "message") and whether each is marked shared.
func (s *sharedEnv) recall(t *testing.T, sc memory.Scope, source string, withShared bool) map[string]bool {
	t.Helper()
	q := "support line opens"
	v := storetest.HashLiteral(q)
	hits, err := s.st.Recall(context.Background(), store.RecallParams{Scope: sc, Source: source, Query: q, K: 20,
		QueryVector: &v, Model: embedding.Hash{}.Model(), IncludeShared: withShared})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, h := range hits {
		if h.Source == memory.HitMessage {
			if h.Shared {
				t.Errorf("message %s marked shared", h.ID)
			}
			out["message"] = false
			continue
		}
		out[h.ID] = h.Shared
	}
	return out
}

func (s *sharedEnv) own(t *testing.T, sc memory.Scope) []string {
	t.Helper()
	page, err := s.st.ListMemories(context.Background(), store.ListMemoriesParams{Scope: sc, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range page.Items {
		out = append(out, m.ID.String())
	}
	sort.Strings(out)
	return out
}

// Recall and get-context give a user their own memories and their tenant's shared ones, the
// shared marked, in one ranking; never another tenant's shared memories, those of no tenant
// (for a user of a tenant), nor another user's. IncludeShared false leaves them out.
func TestRecallIncludesTheTenantsSharedMemories(t *testing.T) {
	t.Parallel()
	s := newSharedEnv(t)
	alicePage := s.own(t, s.alice)
	if len(alicePage) != 1 || alicePage[0] != s.aliceM.String() {
		t.Fatalf("alice's own memories: %v", alicePage)
	}
	for _, source := range []string{memory.SourceMemories, memory.SourceAll} {
		got := s.recall(t, s.alice, source, true)
		want := map[string]bool{s.aliceM.String(): false, s.sharedA.String(): true}
		if !maps.Equal(got, want) {
			t.Errorf("alice (tenant A) recalls %s: %v, want her own and A's shared %v", source, got, want)
		}
		if got := s.recall(t, s.alice, source, false); !maps.Equal(got, map[string]bool{s.aliceM.String(): false}) {
			t.Errorf("alice without shared, %s: %v, want her own only", source, got)
		}
		if got := s.recall(t, s.bob, source, true); len(got) != 2 || !got[s.sharedB.String()] {
			t.Errorf("bob (tenant B) recalls %s: %v, want his own and B's shared %s", source, got, s.sharedB)
		}
		if got := s.recall(t, s.carol, source, true); len(got) != 2 || !got[s.sharedNone.String()] {
			t.Errorf("carol (no tenant) recalls %s: %v, want her own and the tenant-less shared %s", source, got, s.sharedNone)
		}
	}
	// Shared memories of another agent are left out as a user's would be; the agent-less scope
	// recalls every agent's.
	other := storetest.Memory(t, s.st, memory.SharedScope("A", "other-agent"), "The support line opens at noon for other agents", nil).ID
	if got := s.recall(t, s.alice, memory.SourceMemories, true); got[other.String()] || len(got) != 2 {
		t.Errorf("alice with agent default: %v, want no memory of other-agent", got)
	}
	every := s.alice
	every.Agent = ""
	if got := s.recall(t, every, memory.SourceMemories, true); !got[other.String()] || len(got) != 3 {
		t.Errorf("alice of every agent: %v, want other-agent's shared memory too", got)
	}

	// get-context's memories, the same way.
	ctx := context.Background()
	for _, withShared := range []bool{true, false} {
		q := "support line opens"
		v := storetest.HashLiteral(q)
		out, err := s.st.GetContext(ctx, store.ContextParams{Scope: s.alice, SessionID: uuid.New(), MaxMessages: 5,
			Query: q, RecallK: 10, QueryVector: &v, Model: embedding.Hash{}.Model(), IncludeShared: withShared})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, h := range out.Memories {
			got[h.ID] = h.Shared
		}
		want := map[string]bool{s.aliceM.String(): false}
		if withShared {
			want[s.sharedA.String()] = true
		}
		if !maps.Equal(got, want) {
			t.Errorf("get-context as alice, shared %v: %v, want %v", withShared, got, want)
		}
	}
}

// The memories of a shared scope are listed, read, changed and deleted within it: a tenant's
// shared memories only. A user reads (GetMemory) a shared memory of their tenant, marked shared,
// and is refused (forbidden) its change or deletion, which leaves it as it was; another tenant's
// is not found for them, as for another tenant's shared scope.
func TestSharedMemoriesAreWrittenInTheirScopeOnly(t *testing.T) {
	t.Parallel()
	s := newSharedEnv(t)
	ctx := context.Background()
	scopeA := memory.SharedScope("A", "")
	if got := s.own(t, scopeA); len(got) != 1 || got[0] != s.sharedA.String() {
		t.Errorf("tenant A's shared memories: %v, want %s", got, s.sharedA)
	}
	if got := s.own(t, memory.SharedScope("", "")); len(got) != 1 || got[0] != s.sharedNone.String() {
		t.Errorf("the tenant-less shared memories: %v, want %s", got, s.sharedNone)
	}
	m, err := s.st.GetMemory(ctx, s.alice, s.sharedA)
	if err != nil || !m.Shared || m.Content != "The support line opens at nine" {
		t.Errorf("alice reads A's shared memory: %+v, %v", m, err)
	}
	if m, err := s.st.GetMemory(ctx, s.alice, s.aliceM); err != nil || m.Shared {
		t.Errorf("alice reads her own: %+v, %v; want it, not shared", m, err)
	}
	for _, c := range []struct {
		name string
		sc   memory.Scope
		id   uuid.UUID
	}{{"alice, B's shared", s.alice, s.sharedB}, {"alice, the tenant-less shared", s.alice, s.sharedNone},
		{"carol, A's shared", s.carol, s.sharedA}, {"B's shared scope, A's", memory.SharedScope("B", ""), s.sharedA},
		{"A's shared scope, alice's own", scopeA, s.aliceM}} {
		if _, err := s.st.GetMemory(ctx, c.sc, c.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: get error %v, want not found", c.name, err)
		}
		content := "Changed"
		if _, err := s.st.UpdateMemory(ctx, store.UpdateMemoryParams{Scope: c.sc, ID: c.id, Content: &content}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: update error %v, want not found", c.name, err)
		}
		if err := s.st.DeleteMemory(ctx, c.sc, c.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: delete error %v, want not found", c.name, err)
		}
	}
	content := "The support line opens at seven"
	_, err = s.st.UpdateMemory(ctx, store.UpdateMemoryParams{Scope: s.alice, ID: s.sharedA, Content: &content})
	if !errors.Is(err, store.ErrSharedMemoryWrite) || !errors.Is(err, store.ErrForbidden) {
		t.Errorf("alice updates A's shared memory: %v, want forbidden", err)
	}
	if err := s.st.DeleteMemory(ctx, s.alice, s.sharedA); !errors.Is(err, store.ErrSharedMemoryWrite) || !errors.Is(err, store.ErrForbidden) {
		t.Errorf("alice deletes A's shared memory: %v, want forbidden", err)
	}
	if m, err := s.st.GetMemory(ctx, scopeA, s.sharedA); err != nil || m.Content != "The support line opens at nine" || !m.UpdatedAt.Equal(m.CreatedAt) {
		t.Errorf("A's shared memory after alice's attempts: %+v, %v; want it unchanged", m, err)
	}

	// In its own scope it changes and goes.
	m, err = s.st.UpdateMemory(ctx, store.UpdateMemoryParams{Scope: scopeA, ID: s.sharedA, Content: &content})
	if err != nil || m.Content != content || !m.Shared {
		t.Fatalf("A's shared scope updates its memory: %+v, %v", m, err)
	}
	if err := s.st.DeleteMemory(ctx, scopeA, s.sharedA); err != nil {
		t.Fatalf("A's shared scope deletes its memory: %v", err)
	}
	if got := s.recall(t, s.amy, memory.SourceMemories, true); got[s.sharedA.String()] || len(got) != 1 {
		t.Errorf("amy after the deletion: %v, want her own only", got)
	}
}

// A shared fact merges only with the shared memories of its tenant and agent: the same fact
// stored again for the tenant goes into its memory; a user's same fact, and the same fact of
// another tenant's shared scope, each keep a memory of their own.
func TestSharedMemoriesMergeWithinTheirScope(t *testing.T) {
	t.Parallel()
	s := newSharedEnv(t)
	again := storetest.Memory(t, s.st, memory.SharedScope("A", memory.DefaultAgent), "The support line opens at nine.", nil)
	if !again.Merged || again.ID != s.sharedA {
		t.Errorf("A's shared fact stored again: %+v, want merged into %s", again, s.sharedA)
	}
	if mine := storetest.Memory(t, s.st, s.alice, "The support line opens at nine", nil); mine.Merged || mine.ID == s.sharedA {
		t.Errorf("alice's same fact: %+v, want a memory of her own", mine)
	}
	if b := storetest.Memory(t, s.st, memory.SharedScope("B", memory.DefaultAgent), "The support line opens at nine", nil); b.Merged || b.ID == s.sharedA {
		t.Errorf("B's same shared fact: %+v, want a memory of its own", b)
	}
	var n int
	if err := s.conn.QueryRow(context.Background(), `select count(*) from agentmem.memories where content_key = $1`,
		store.ContentKey("The support line opens at nine")).Scan(&n); err != nil || n != 3 {
		t.Errorf("rows of the fact: %d, %v; want 3 (A's shared, alice's, B's shared)", n, err)
	}
}

// An erasure of a user, of every tenant or of one, as a service or as the user, leaves the
// shared memories; the shared memories' owner is no user to erase, through the store or the
// database's erase_user. They expire as any memory: an expired one is not recalled, and the
// sweep deletes it.
func TestSharedMemoriesOutliveErasuresAndExpire(t *testing.T) {
	t.Parallel()
	s := newSharedEnv(t)
	ctx := context.Background()
	count := func() int {
		t.Helper()
		var n int
		if err := s.conn.QueryRow(ctx, `select count(*) from agentmem.memories where user_id = ''`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count() != 3 {
		t.Fatalf("%d shared memories, want 3", count())
	}
	for _, p := range []store.ForgetParams{{UserID: s.alice.UserID, TenantID: "A", AsUser: true},
		{UserID: s.amy.UserID, AllTenants: true}, {UserID: s.carol.UserID, TenantID: ""}} {
		res, err := s.st.ForgetUser(ctx, p)
		if err != nil || res.Deleted["memories"] != 1 {
			t.Fatalf("forget %+v: %+v, %v; want the user's one memory", p, res, err)
		}
	}
	if _, err := s.st.ForgetUser(ctx, store.ForgetParams{UserID: memory.SharedUserID, AllTenants: true}); err == nil {
		t.Error("forget of the shared owner: no error")
	}
	var erased []byte
	if err := s.conn.QueryRow(ctx, `select agentmem.erase_user('')::text`).Scan(&erased); err != nil || string(erased) != "{}" {
		t.Errorf("erase_user(''): %s, %v; want nothing erased", erased, err)
	}
	if n := count(); n != 3 {
		t.Errorf("after the erasures: %d shared memories, want 3", n)
	}
	if got := s.recall(t, s.alice, memory.SourceMemories, true); !maps.Equal(got, map[string]bool{s.sharedA.String(): true}) {
		t.Errorf("alice after her erasure: %v, want A's shared memory alone", got)
	}

	if _, err := s.conn.Exec(ctx, `update agentmem.memories set expires_at = now() - interval '1 second' where id = $1`, s.sharedA); err != nil {
		t.Fatal(err)
	}
	if got := s.recall(t, s.amy, memory.SourceMemories, true); len(got) != 0 {
		t.Errorf("amy after A's shared memory expired: %v, want nothing", got)
	}
	if _, err := s.st.GetMemory(ctx, memory.SharedScope("A", ""), s.sharedA); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get of the expired shared memory: %v, want not found", err)
	}
	res, err := s.st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute)})
	if err != nil || res.Deleted.Memories != 1 {
		t.Errorf("sweep: %+v, %v; want the expired shared memory deleted", res, err)
	}
	if n := count(); n != 2 {
		t.Errorf("after the sweep: %d shared memories, want 2", n)
	}
}

// A scope that names no user and is not the shared scope runs nothing: a request whose user
// was lost on the way never reads or writes the shared memories as if it were their owner.
func TestAScopeWithoutAUserIsRefused(t *testing.T) {
	t.Parallel()
	s := newSharedEnv(t)
	ctx := context.Background()
	if _, err := s.st.ListMemories(ctx, store.ListMemoriesParams{Scope: memory.Scope{TenantID: "A"}, Limit: 10}); err == nil {
		t.Error("list with no user: no error")
	}
	if _, _, err := s.st.CreateMemory(ctx, store.CreateMemoryParams{Scope: memory.Scope{TenantID: "A", Agent: "default"},
		Content: "Planted", TTL: time.Hour}); err == nil {
		t.Error("create with no user: no error")
	}
	if err := s.st.DeleteMemory(ctx, memory.Scope{TenantID: "A"}, s.sharedA); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete with no user: %v, want an internal error", err)
	}
	bad := memory.SharedScope("A", "")
	bad.UserID = "auth0|alice"
	if _, err := s.st.ListMemories(ctx, store.ListMemoriesParams{Scope: bad, Limit: 10}); err == nil {
		t.Error("a shared scope naming a user: no error")
	}
	if got := s.own(t, memory.SharedScope("A", "")); len(got) != 1 {
		t.Errorf("A's shared memories after the refused calls: %v", got)
	}
}

// A change of a shared memory writes its jobs as any change of a memory does, under the shared
// owner: its events say shared, name no user and carry the memory; a user's memory's events
// do not say shared.
func TestSharedMemoryEventsSayShared(t *testing.T) {
	t.Parallel()
	e := storetest.New(t, storetest.MaxConns(2), storetest.Adapters(adapter.Webhook))
	ctx := context.Background()
	shared := storetest.Memory(t, e.Store, memory.SharedScope("A", ""), "The office is closed on Fridays", nil)
	own := storetest.Memory(t, e.Store, memory.Scope{TenantID: "A", UserID: "auth0|alice", Agent: memory.DefaultAgent}, "I work on Fridays", nil)
	claimed, _, err := e.Store.ClaimJobs(ctx, store.ClaimJobsParams{Limit: 10, Lease: time.Minute, MaxAttempts: 3})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d jobs, %v; want 2", len(claimed), err)
	}
	seen := map[uuid.UUID]bool{}
	for _, j := range claimed {
		evs, err := e.Store.LoadEvents(ctx, j)
		if err != nil || len(evs) != 1 || len(evs[0].Memories) != 1 {
			t.Fatalf("events of %+v: %+v, %v", j, evs, err)
		}
		ev := evs[0]
		id := ev.Memories[0].ID
		seen[id] = true
		switch id {
		case shared.ID:
			if !ev.Shared || ev.UserID != memory.SharedUserID || ev.TenantID == nil || *ev.TenantID != "A" || ev.Agent != nil {
				t.Errorf("the shared memory's event: %+v", ev)
			}
		case own.ID:
			if ev.Shared || ev.UserID != "auth0|alice" {
				t.Errorf("alice's memory's event: %+v", ev)
			}
		}
	}
	if !seen[shared.ID] || !seen[own.ID] {
		t.Errorf("events of %v, want both memories", seen)
	}
}
