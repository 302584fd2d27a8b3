package store_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// clientReadOnlyFunctions are the only functions of the exposed schemas that a Supabase client
// (role authenticated) may call: the match RPCs for supabase-js and the helpers their select
// policies and hybrid search call. Each must read only (stable or immutable) and run
// with the caller's rights, so row-level security decides what it returns.
var clientReadOnlyFunctions = []string{
	"agentmem.any_words_query(text)",
	"agentmem.current_tenant()",
	"agentmem.rrf_score(bigint, bigint, double precision, double precision, integer)",
	"public.hybrid_match_memories(text, extensions.vector, integer, double precision, double precision, integer, text, text, text)",
	"public.match_knowledge(extensions.vector, integer, text, text)",
	"public.match_memories(extensions.vector, integer, text, text, text)",
}

// exposedSchemas are the schemas supabase/config.toml lets PostgREST serve.
func exposedSchemas(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../supabase/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^schemas\s*=\s*\[([^\]]*)\]`).FindSubmatch(b)
	if m == nil {
		t.Fatal("supabase/config.toml: no [api] schemas")
	}
	var out []string
	for _, s := range strings.Split(string(m[1]), ",") {
		if s = strings.Trim(strings.TrimSpace(s), `"`); s != "" {
			out = append(out, s)
		}
	}
	if !slices.Contains(out, "agentmem") {
		t.Fatalf("exposed schemas %v: the check below assumes agentmem is exposed, as a project may choose", out)
	}
	return out
}

// What a signed-in Supabase user can do with the project's anon key and their access token,
// through PostgREST or supabase-js, run here exactly as PostgREST runs it: role authenticated
// and the user's claims set for the transaction. They may read their own rows and nothing else
// of anyone; they may write nothing, not even their own rows, so every limit the functions
// enforce holds; and no error tells them whether another user's session exists.
func TestClientRolesCannotWrite(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := t.Context()
	conn := storetest.Admin(t, db.URL)

	// The victim's data, written by the store as the functions write it, and the attacker's own.
	st := storetest.Open(t, db, storetest.MaxConns(2))
	attacker, victim := owner{"t1", "user_2attacker"}, owner{"t1", "auth0|victim"}
	victimSession := uuid.New()
	for _, o := range []struct {
		owner
		session uuid.UUID
	}{{victim, victimSession}, {attacker, uuid.New()}} {
		sc := memory.Scope{TenantID: o.tenant, UserID: o.user, Agent: memory.DefaultAgent}
		if _, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: o.session, TTL: time.Hour,
			Messages:    []memory.NewMessage{{Role: memory.RoleUser, Content: "hello"}},
			Memories:    []memory.NewMemory{{Content: "likes tea"}},
			Idempotency: &store.Idempotency{CallerRole: "service_role", Function: "commit-turn", Key: "k", RequestHash: []byte("h")},
		}); err != nil {
			t.Fatal(err)
		}
	}
	tables := rlsTables(t, conn)
	for _, tb := range tables {
		for _, o := range []owner{attacker, victim} {
			if _, err := conn.Exec(ctx, rlsFixtures[tb.name], rlsArgs(tb, o)...); err != nil {
				t.Fatalf("fixture %s for %v: %v", tb.name, o, err)
			}
		}
	}
	snapshot := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, tb := range tables {
			var digest string
			if err := conn.QueryRow(ctx, "select coalesce(md5(string_agg(x::text, ',' order by x::text)), '') from agentmem."+
				pgx.Identifier{tb.name}.Sanitize()+" x").Scan(&digest); err != nil {
				t.Fatal(err)
			}
			out[tb.name] = digest
		}
		return out
	}
	before := snapshot()

	// Every write of every table, on the attacker's own rows, is refused to both client roles.
	for _, role := range []string{"authenticated", "anon"} {
		for _, tb := range tables {
			t.Run(role+"/"+tb.name, func(t *testing.T) {
				attempts := map[string]string{
					"insert own row": rlsFixtures[tb.name],
					"update own rows": "update agentmem." + tb.name + " set tenant_id = tenant_id where tenant_id = $1" +
						map[bool]string{true: " and user_id = $2", false: ""}[tb.perUser],
					"delete own rows": "delete from agentmem." + tb.name + " where tenant_id = $1" +
						map[bool]string{true: " and user_id = $2", false: ""}[tb.perUser],
					"truncate": "truncate agentmem." + tb.name,
				}
				for what, q := range attempts {
					args := rlsArgs(tb, attacker)
					if what == "truncate" {
						args = nil
					}
					err := asRole(t, conn, role, userClaims(attacker), func(tx pgx.Tx) error {
						_, err := tx.Exec(ctx, q, args...)
						return err
					})
					if pgCode(err) != "42501" {
						t.Errorf("%s: error %v, want permission denied (42501)", what, err)
					}
				}
			})
		}
	}

	// The attacks a review found, one by one.
	foreignMessage := `insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
		token_estimate, expires_at) values ($1, 2, gen_random_uuid(), $2, $3, 'default', 'user', 'x', 1, now() + interval '1 day')`
	attacks := []struct {
		name string
		sql  string
		args []any
	}{
		{"a message in the victim's session", foreignMessage, []any{victimSession, attacker.tenant, attacker.user}},
		{"a message in a session that does not exist", foreignMessage, []any{uuid.New(), attacker.tenant, attacker.user}},
		{"the victim's session made active for the attacker", `insert into agentmem.active_sessions (tenant_id, user_id, agent, session_id)
			values ($1, $2, 'other', $3)`, []any{attacker.tenant, attacker.user, victimSession}},
		{"a session with the victim's id", `insert into agentmem.sessions (id, tenant_id, user_id, agent, expires_at)
			values ($1, $2, $3, 'default', now() + interval '1 day')`, []any{victimSession, attacker.tenant, attacker.user}},
		{"an idempotency record in a service caller's name", `insert into agentmem.idempotency_keys (tenant_id, user_id,
			caller_role, function, key, request_hash, response_status, response_body, expires_at)
			values ($1, $2, 'service_role', 'commit-turn', 'next', '\x00', 201, '{}', now() + interval '1 day')`,
			[]any{victim.tenant, victim.user}},
		{"a memory past the size limit that never expires", `insert into agentmem.memories (tenant_id, user_id, agent, content,
			content_key, expires_at) values ($1, $2, '', repeat('x', 200000), 'k', 'infinity')`, []any{attacker.tenant, attacker.user}},
		{"a message far past the session's seq", `update agentmem.messages set seq = seq + 1000000 where user_id = $1`,
			[]any{attacker.user}},
		{"a job of the outbox, for any adapter", rlsFixtures["jobs"], []any{attacker.tenant, attacker.user}},
		{"the victim's jobs read", `select count(*) from agentmem.jobs where user_id = $1`, []any{victim.user}},
		{"a rolling summary of the victim's session", `insert into agentmem.session_summaries (session_id, tenant_id,
			user_id, agent, content, through_seq, prompt, model) values ($1, $2, $3, 'default', 'x', 1, 'summarise.v1', 'm')`,
			[]any{victimSession, attacker.tenant, attacker.user}},
		{"the attacker's own summary moved past its messages", `update agentmem.session_summaries set through_seq = 1000000
			where user_id = $1`, []any{attacker.user}},
	}
	var messages []string
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			err := asRole(t, conn, "authenticated", userClaims(attacker), func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, a.sql, a.args...)
				return err
			})
			if pgCode(err) != "42501" {
				t.Errorf("%s: error %v, want permission denied (42501)", a.name, err)
				return
			}
			if strings.HasPrefix(a.name, "a message in") {
				messages = append(messages, err.Error())
			}
		})
	}
	if len(messages) == 2 && messages[0] != messages[1] {
		t.Errorf("an existing foreign session and a missing one give different errors: %q, %q", messages[0], messages[1])
	}

	// Reading tells nothing of the victim either: not their session, not its seqs.
	for _, q := range []string{
		"select count(*) from agentmem.sessions where id = $1",
		"select count(*) from agentmem.messages where session_id = $1",
		"select count(*) from agentmem.active_sessions where session_id = $1",
		"select count(*) from agentmem.session_summaries where session_id = $1",
	} {
		var n int
		err := asRole(t, conn, "authenticated", userClaims(attacker), func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, q, victimSession).Scan(&n)
		})
		if err != nil || n != 0 {
			t.Errorf("%s as the attacker: %d rows, error %v", q, n, err)
		}
	}
	for _, rpc := range []string{
		"select count(*) from public.match_memories($1::extensions.vector, 100, $2::text)",
		"select count(*) from public.hybrid_match_memories('tea', $1::extensions.vector, 100, filter_user_id => $2::text)",
	} {
		var n int
		err := asRole(t, conn, "authenticated", userClaims(attacker), func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, rpc, knVec("tea"), victim.user).Scan(&n)
		})
		if err != nil || n != 0 {
			t.Errorf("%s for the victim, as the attacker: %d rows, error %v", rpc, n, err)
		}
	}

	after := snapshot()
	for _, tb := range tables {
		if before[tb.name] != after[tb.name] {
			t.Errorf("agentmem.%s changed under the client roles' attempts", tb.name)
		}
	}

	// The same, from the catalog, for whatever the schemas hold now or later: no client role
	// holds a write privilege on any table, column or sequence of schema agentmem; every table
	// has row-level security; and in every exposed schema the client roles may call only the
	// read-only functions above.
	rows, err := conn.Query(ctx, `
		select c.relname::text, c.relkind::text, r.rolname::text,
		       case when c.relkind = 'S'
		            then has_sequence_privilege(r.rolname, c.oid, 'usage, update')
		            else has_table_privilege(r.rolname, c.oid, 'insert, update, delete, truncate, references, trigger')
		                 or has_any_column_privilege(r.rolname, c.oid, 'insert, update, references') end,
		       c.relrowsecurity or c.relkind not in ('r', 'p')
		from pg_class c join pg_namespace n on n.oid = c.relnamespace
		cross join (values ('anon'), ('authenticated')) r(rolname)
		where n.nspname = 'agentmem' and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')`)
	if err != nil {
		t.Fatal(err)
	}
	var rel, kind, role string
	var writes, secured bool
	if _, err := pgx.ForEachRow(rows, []any{&rel, &kind, &role, &writes, &secured}, func() error {
		if writes {
			t.Errorf("%s may write agentmem.%s (relkind %s)", role, rel, kind)
		}
		if !secured {
			t.Errorf("agentmem.%s has no row-level security", rel)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// The functions' own role holds exactly what each table needs: the outbox's jobs it may only
	// insert (a change's transaction writes them; service_role reads, claims and deletes them),
	// whatever its claims; the shared knowledge it only reads; the rate counters and the
	// cache's generations not at all (security definer functions write them); the counts of
	// message words and the messages not yet counted it only reads (triggers of messages write
	// them), and the counts of memory words (triggers of memories write them); the history
	// archive it reads and deletes from (the sweep moves messages in); every other table it
	// reads and writes under row-level security. A table added without a row here fails.
	callerPrivileges := map[string]string{"jobs": "insert", "knowledge_chunks": "select", "request_rates": "",
		"cache_generations": "", "message_words": "select", "message_words_pending": "select",
		"memory_words": "select", "messages_archive": "select,delete"}
	rows, err = conn.Query(ctx, `
		select c.relname::text, concat_ws(',',
		  case when has_table_privilege($1, c.oid, 'select') then 'select' end,
		  case when has_table_privilege($1, c.oid, 'insert') then 'insert' end,
		  case when has_table_privilege($1, c.oid, 'update') then 'update' end,
		  case when has_table_privilege($1, c.oid, 'delete') then 'delete' end,
		  case when has_table_privilege($1, c.oid, 'truncate') then 'truncate' end,
		  case when has_table_privilege($1, c.oid, 'references') then 'references' end,
		  case when has_table_privilege($1, c.oid, 'trigger') then 'trigger' end)
		from pg_class c join pg_namespace n on n.oid = c.relnamespace
		-- a partition is reached through its table alone: it holds no privilege
		where n.nspname = 'agentmem' and c.relkind in ('r', 'p') and not c.relispartition`, store.CallerRole)
	if err != nil {
		t.Fatal(err)
	}
	var privs string
	if _, err := pgx.ForEachRow(rows, []any{&rel, &privs}, func() error {
		want, ok := callerPrivileges[rel]
		if !ok {
			want = "select,insert,update,delete"
		}
		if privs != want {
			t.Errorf("%s holds %q on agentmem.%s, want %q", store.CallerRole, privs, rel, want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// And under the victim's own claims it cannot read, change or delete the victim's jobs.
	for _, q := range []string{
		"select count(*) from agentmem.jobs where user_id = $1",
		"update agentmem.jobs set status = 'done' where user_id = $1",
		"delete from agentmem.jobs where user_id = $1",
	} {
		err := asRole(t, conn, store.CallerRole, userClaims(victim), func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, q, victim.user)
			return err
		})
		if pgCode(err) != "42501" {
			t.Errorf("%s as %s with the owner's claims: error %v, want permission denied", q, store.CallerRole, err)
		}
	}

	schemas := exposedSchemas(t)
	rows, err = conn.Query(ctx, `
		select n.nspname || '.' || p.proname || '(' || oidvectortypes(p.proargtypes) || ')', r.rolname::text,
		       p.prosecdef, p.provolatile::text
		from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		cross join (values ('anon'), ('authenticated')) r(rolname)
		where n.nspname = any($1::text[]) and has_function_privilege(r.rolname, p.oid, 'execute')
		order by 1, 2`, schemas)
	if err != nil {
		t.Fatal(err)
	}
	var fn, volatility string
	var definer bool
	callable := map[string]bool{}
	if _, err := pgx.ForEachRow(rows, []any{&fn, &role, &definer, &volatility}, func() error {
		callable[fn] = true
		switch {
		case role == "anon":
			t.Errorf("anon may call %s", fn)
		case !slices.Contains(clientReadOnlyFunctions, fn):
			t.Errorf("authenticated may call %s, which is not one of the client's read-only functions", fn)
		case definer || volatility == "v":
			t.Errorf("%s: security definer %v, volatility %s; a client's function must read only, with its rights", fn, definer, volatility)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, fn := range clientReadOnlyFunctions {
		if !callable[fn] {
			t.Errorf("%s is not callable by authenticated: supabase-js callers lost it", fn)
		}
	}
}

// definerFunctions are the only functions of schema agentmem that run with their owner's rights
// (security definer), each for a reason of its own; every other one runs with its caller's, so
// row-level security decides what it reads. A search function added as security definer would
// rank every user's rows: this list is where that shows.
var definerFunctions = []string{
	// Supabase Auth deletes a user as supabase_auth_admin: the trigger erases the user's rows.
	"agentmem.erase_deleted_auth_user()",
	// The scheduled sweep deletes every user's expired rows.
	"agentmem.sweep_expired(integer,integer)",
	// The rate-limit counters are closed to every client role.
	"agentmem.take_request_slot(text,text,integer,integer,integer,text)",
	// The get-context cache asks whether the request's user has unsettled jobs, which the
	// functions' role may not read.
	"agentmem.check_context_cache(text,text,uuid,text,integer)",
	// A job of the cache advances the user's generation of it, closed to every role but the
	// owner's.
	"agentmem.advance_cache_generation()",
	// The triggers of messages keep the counts of their words, closed to writes by every role
	// but the owner's, whoever inserts, deletes or rewrites the messages.
	"agentmem.count_message_words()",
	"agentmem.recount_message_words()",
	"agentmem.truncate_message_words()",
	// The sweep and the triggers count the pending messages of any scope into those counts.
	"agentmem.fold_message_words(text,text,text,integer)",
	// Row-level security keeps the full-text index from serving a search; the function checks
	// the scope is the caller's own and answers only which messages match.
	"agentmem.message_word_matches(text,text,text,tsquery)",
	// The same for memories: the caller's own, and their tenant's shared ones; and their count,
	// which row-level security would make a read of every row.
	"agentmem.memory_word_matches(text,text,text,text,tsquery)",
	"agentmem.memory_scope_count(text,text,text,text)",
	"agentmem.memory_scope_is_small(text,text,integer)",
	// Above the exact limit, the nearest of them through the HNSW index: row-level security's
	// condition on memories (the user's rows or the shared ones, an OR) made the planner expect
	// a handful of rows for any user and sort all of a large user's memories instead.
	"agentmem.memory_index_neighbours(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,extensions.vector,text,integer)",
	// The triggers of memories keep the counts of their words, closed to every role but the
	// owner's; the statistics BM25 reads of them are the caller's own scope's.
	"agentmem.count_memory_words()",
	"agentmem.recount_memory_words()",
	"agentmem.truncate_memory_words()",
	"agentmem.memory_word_stats(text,text,text,text,text[])",
	// On the partitioned layout a new session's id is looked for among every user's sessions,
	// so that it stays unique (agentmem.partition_by_user).
	"agentmem.keep_session_id_unique()",
}

// The functions recall and get-context rank with take the user to search as an argument, and
// still return only the caller's own rows: called as the functions' role with another user's
// claims (and the victim's id, tenant and words), each finds nothing, through the exact and the
// index paths; with the victim's own claims the same calls find the victim's rows. The client
// roles may not call them at all. And no function of schema agentmem runs with its owner's
// rights but those listed in definerFunctions.
func TestSearchFunctionsRankOnlyTheCallersRows(t *testing.T) {
	t.Parallel()
	e := storetest.New(t, storetest.MaxConns(2))
	ctx := t.Context()
	conn, st := e.Admin(t), e.Store
	attacker, victim := owner{"t1", "user_2attacker"}, owner{"t1", "auth0|victim"}
	for _, o := range []owner{victim, attacker} {
		sc := memory.Scope{TenantID: o.tenant, UserID: o.user, Agent: memory.DefaultAgent}
		if _, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: uuid.New(), TTL: time.Hour,
			Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "My zanzibar trip starts in May"},
				{Role: memory.RoleAssistant, Content: "Enjoy zanzibar in May"}},
			Memories: []memory.NewMemory{{Content: "Plans a zanzibar trip"}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	var h embedding.Hash
	q := pgvector.NewVector(h.Vector("zanzibar trip")).String()
	// the keys of the victim's rows, for the function that reads rows by the keys it is given
	var memoryKey, sessionKey string
	var seqKey int64
	if err := conn.QueryRow(ctx, `select (select id::text from agentmem.memories where user_id = $1),
		session_id::text, seq from agentmem.messages where user_id = $1 order by seq limit 1`, victim.user).Scan(&memoryKey, &sessionKey, &seqKey); err != nil {
		t.Fatal(err)
	}
	// Each call counts what it finds of the user and tenant it names ($1, $2), exactly ($4 a
	// large exact limit, or exact) or through the indexes.
	calls := map[string]string{
		"recall_text_arm": `select count(*) from agentmem.recall_text_arm('all', 'zanzibar trip ' || $3::text || $5, $1, $2,
			'', '{}', null, null, '', '', 20, case when $4 then 2000 else 1 end, 0.5, false)`,
		"recall_vector_arm": `select count(*) from agentmem.recall_vector_arm('all', $3::extensions.vector, $5, $1, $2,
			'', '{}', null, null, '', '', 20, case when $4 then 2000 else 1 end, false)`,
		// the victim's keys, as an arm would have found them
		"recall_fuse": fmt.Sprintf(`select count(*) from agentmem.recall_fuse('hybrid', $1, false, $3::extensions.vector, $5,
			1, 1, 50, -1, 0, 0, 0, 10, true, array['memory', 'message'], array['%[1]s', '%[2]s']::uuid[], array[0, %[3]d]::bigint[],
			array[1, 1]::float8[], array[1, 1]::float8[], array['memory', 'message'], array['%[1]s', '%[2]s']::uuid[],
			array[0, %[3]d]::bigint[], array[0.1, 0.1]::float8[])
			where ($4 or not $4) and $2::text is not null`, memoryKey, sessionKey, seqKey),
		"recall_sources": `select count(*) from agentmem.recall_sources(p_source => 'all', p_query => 'zanzibar trip',
			query_embedding => $3::extensions.vector, query_model => $5, p_user_id => $1, p_tenant_id => $2,
			p_agent => '', p_filter => '{}', p_mode => 'hybrid', candidates => 20, text_weight => 1,
			vector_weight => 1, rrf_k => 50, min_score => -1, p_k => 10, exact_limit => case when $4 then 2000 else 1 end,
			with_vectors => true)`,
		"recall_memories": `select count(*) from agentmem.recall_memories(p_query => 'zanzibar trip',
			query_embedding => $3::extensions.vector, query_model => $5, p_user_id => $1, p_tenant_id => $2,
			p_agent => '', p_filter => '{}', p_mode => 'hybrid', candidates => 20, text_weight => 1,
			vector_weight => 1, rrf_k => 50, min_score => -1, p_k => 10, exact_limit => case when $4 then 2000 else 1 end,
			with_vectors => true)`,
		"message_neighbours": `select count(*) from agentmem.message_neighbours($1, $2, '', '{}', '', '', null, null, $3::extensions.vector, $5, 10, $4)`,
		"memory_neighbours":  `select count(*) from agentmem.memory_neighbours($1, $2, '', '{}', null, null, $3::extensions.vector, $5, 10, $4)`,
		"memory_index_neighbours": `select count(*) from agentmem.memory_index_neighbours($1, $2, '', '{}', null, null, $3::extensions.vector, $5, 10)
			where $4 or not $4`,
		// the memories counted in the scope's statistics (the victim's one)
		"memory_word_stats": `select coalesce(sum(s.docs), 0)::int from agentmem.memory_word_stats($1, $2, '', $1,
			agentmem.query_terms('zanzibar ' || $3::text || $5)) s where $4 or not $4`,
		// each word weighing 1
		"memory_bm25_scored": `select count(*)
			from (select agentmem.query_terms('zanzibar ' || $3::text || $5) as terms) t,
			  agentmem.memory_bm25_scored($1, $2, '', $1, agentmem.terms_query(agentmem.query_terms('zanzibar')), t.terms,
			    array_fill(1::float8, array[cardinality(t.terms)]), 5, 10, 10)
			where $4 or not $4`,
		"message_bm25_hits": `select count(*) from agentmem.message_bm25_hits($1, $2, '', '{}', '', '', null, null,
			agentmem.query_terms('zanzibar ' || $3::text || $5), 10, $4, 0.5)`,
		"memory_bm25_hits": `select count(*) from agentmem.memory_bm25_hits($1, $2, '', '{}', null, null,
			agentmem.query_terms('zanzibar ' || $3::text || $5), 10, $4)`,
		// 1 when the scope it counts holds the victim's rows (2 messages, 1 memory).
		"message_scope_is_small": `select (not agentmem.message_scope_is_small($1, $2, case when $4 then 2 else 1 end))::int
			+ 0 * length($3::text || $5)`,
		// the same counts for a recall's lists: 1 or 2 when they see the victim's rows
		"recall_scope_exact": `select (not e.messages_exact)::int + (not e.own_exact)::int + 0 * length($3::text || $5)
			from agentmem.recall_scope_exact('all', $1, $2, '', '', case when $4 then 2 else 1 end, false) e`,
		"memory_scope_is_small": `select (not agentmem.memory_scope_is_small($1, $2, 1))::int + 0 * length($3::text || $5)
			+ 0 * ($4::boolean)::int`,
	}
	for name, sql := range calls {
		for _, exact := range []bool{true, false} {
			count := func(as owner) int {
				var n int
				if err := asRole(t, conn, store.CallerRole, userClaims(as), func(tx pgx.Tx) error {
					return tx.QueryRow(ctx, sql, victim.user, victim.tenant, q, exact, h.Model()).Scan(&n)
				}); err != nil {
					t.Fatalf("%s as %v: %v", name, as, err)
				}
				return n
			}
			if n := count(victim); n == 0 {
				t.Errorf("%s (exact %v) finds nothing of the victim's own rows: the check below proves nothing", name, exact)
			}
			if n := count(attacker); n != 0 {
				t.Errorf("%s (exact %v) as another user found %d of the victim's rows", name, exact, n)
			}
			for _, role := range []string{"authenticated", "anon"} {
				err := asRole(t, conn, role, userClaims(victim), func(tx pgx.Tx) error {
					_, err := tx.Exec(ctx, sql, victim.user, victim.tenant, q, exact, h.Model())
					return err
				})
				if pgCode(err) != "42501" {
					t.Errorf("%s as %s: %v, want permission denied", name, role, err)
				}
			}
		}
	}
	// the victim's keys read as the attacker's own, with the tenant's shared memories: nothing
	var stolen int
	if err := asRole(t, conn, store.CallerRole, userClaims(attacker), func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `select count(*) from agentmem.recall_fuse('text', $1, true, null, '', 1, 1, 50, -1, 0, 0, 0, 10,
			false, array['memory', 'message'], array[$2, $3]::uuid[], array[0, $4]::bigint[], array[2, 1]::float8[],
			array[1, 1]::float8[], null, null, null, null)`, attacker.user, memoryKey, sessionKey, seqKey).Scan(&stolen)
	}); err != nil || stolen != 0 {
		t.Errorf("recall_fuse of the victim's keys as the attacker's own: %d rows, %v", stolen, err)
	}

	rows, err := conn.Query(ctx, `
		select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		where n.nspname = 'agentmem' and p.prosecdef order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	definers, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range definers {
		if !slices.Contains(definerFunctions, fn) {
			t.Errorf("%s runs with its owner's rights, bypassing row-level security; it is not one of definerFunctions", fn)
		}
	}
	for _, fn := range definerFunctions {
		if !slices.Contains(definers, fn) {
			t.Errorf("%s is listed in definerFunctions but is not a security definer function of schema agentmem", fn)
		}
	}
}

// agentmem.store_memories without a session (a fact remembered without a turn) is called by
// the functions as agentmem_caller under row-level security, with the caller's rights: called
// straight in SQL with a user's claims, it stores for that user and tenant only, whatever user,
// tenant or agent its arguments name; the client roles may not call it at all.
func TestStoreMemoriesWithoutASessionStoresForTheCallerOnly(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := t.Context()
	conn := storetest.Admin(t, db.URL)
	attacker, victim := owner{"t1", "user_2attacker"}, owner{"t1", "auth0|victim"}
	if _, err := conn.Exec(ctx, rlsFixtures["memories"], victim.tenant, victim.user); err != nil {
		t.Fatal(err)
	}
	call := func(role string, claims owner, target owner) (merged bool, err error) {
		err = asRole(t, conn, role, userClaims(claims), func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `select merged from agentmem.store_memories(p_tenant_id => $1, p_user_id => $2,
				p_agent => 'default', p_session_id => null, p_contents => array['likes tea'], p_keys => array['k'],
				p_metadata => array['{}'], p_embeddings => array[null]::text[], p_model => 'm', p_ttl_seconds => 3600,
				min_similarity => 0.95)`, target.tenant, target.user).Scan(&merged)
		})
		return merged, err
	}
	var before string
	digest := `select coalesce(md5(string_agg(m::text, ',' order by m.id)), '') from agentmem.memories m`
	if err := conn.QueryRow(ctx, digest).Scan(&before); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, role string
		target     owner
	}{
		{"the victim's user", store.CallerRole, victim},
		{"the attacker's user in another tenant", store.CallerRole, owner{"t2", attacker.user}},
		{"the attacker's user without a tenant", store.CallerRole, owner{"", attacker.user}},
		{"as authenticated, its own", "authenticated", attacker},
		{"as anon, its own", "anon", attacker},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := call(c.role, attacker, c.target); pgCode(err) != "42501" {
				t.Errorf("%s: error %v, want 42501 (row-level security or no privilege)", c.name, err)
			}
		})
	}
	var after string
	if err := conn.QueryRow(ctx, digest).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Error("the refused calls changed agentmem.memories")
	}
	// For the caller itself it stores, and merges the fact stored again (each call above rolled
	// back; this one too, so both run in one transaction).
	err := asRole(t, conn, store.CallerRole, userClaims(attacker), func(tx pgx.Tx) error {
		for i, want := range []bool{false, true} {
			var merged bool
			if err := tx.QueryRow(ctx, `select merged from agentmem.store_memories(p_tenant_id => $1, p_user_id => $2,
				p_agent => 'default', p_session_id => null, p_contents => array['likes tea'], p_keys => array['k'],
				p_metadata => array['{}'], p_embeddings => array[null]::text[], p_model => 'm', p_ttl_seconds => 3600,
				min_similarity => 0.95)`, attacker.tenant, attacker.user).Scan(&merged); err != nil {
				return err
			}
			if merged != want {
				t.Errorf("call %d for the caller: merged %v, want %v", i, merged, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("for the caller itself: %v", err)
	}
}
