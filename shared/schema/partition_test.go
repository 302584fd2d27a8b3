package schema_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/schema"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// populate writes rows of every user-owned table for a few users, as the store writes them.
func populate(t *testing.T, db testdb.DB) {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, db, storetest.Adapters(adapter.Redis))
	for i := range 6 {
		sc := memory.Scope{UserID: fmt.Sprintf("user-%d", i), TenantID: []string{"", "t1"}[i%2], Agent: "bot"}
		active, err := st.ActiveSession(ctx, store.ActiveSessionParams{Scope: sc, Mode: store.ModeResolve, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		for turn := range 3 {
			_, _, err := st.CommitTurn(ctx, store.CommitParams{Scope: sc, SessionID: active.SessionID, TTL: time.Hour,
				Messages:    storetest.Messages(4, fmt.Sprintf("user %d turn %d about tea", i, turn)),
				Memories:    []memory.NewMemory{{Content: fmt.Sprintf("Fact %d of user %d", turn, i)}},
				Idempotency: &store.Idempotency{CallerRole: "authenticated", Function: "commit-turn", Key: fmt.Sprint(turn), RequestHash: []byte{byte(turn)}}})
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.SaveSummary(ctx, store.SaveSummaryParams{Scope: sc, SessionID: active.SessionID, FromSeq: 1,
			ThroughSeq: 4, Messages: 4, Content: "They talked about tea.", Prompt: "p", Model: "m"}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.SetUserMemory(ctx, store.SetUserMemoryParams{Scope: sc, Key: "prefs", Value: []byte(`{"tea":"green"}`)}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.SetUserState(ctx, sc, "running"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.EditNotes(ctx, store.EditNotesParams{Scope: sc, Edit: memory.NotesEdit{Op: memory.NotesAppend, Content: "- likes tea"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.TakeRequestSlot(ctx, store.RequestSlotParams{TenantID: sc.TenantID, UserID: sc.UserID, UserLimit: 10,
			TenantLimit: 100, Period: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	// Shared memories of tenant t1 and of no tenant: rows of user ''.
	for _, tenant := range []string{"t1", ""} {
		storetest.Memory(t, st, memory.SharedScope(tenant, ""), "The office is closed on Fridays", nil)
		storetest.Memory(t, st, memory.SharedScope(tenant, "bot"), "Refunds take five days", nil)
	}
	// The sweep counts the messages' words; the next turn's wait to be counted.
	if _, err := st.Sweep(ctx, store.SweepParams{BatchSize: 1000, Deadline: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	storetest.Commit(t, st, memory.Scope{UserID: "user-0", Agent: "bot"}, uuid.New(), storetest.Messages(2, "more tea"))
	// The first messages of each session, archived as the history cap archives them.
	storetest.Exec(t, db.URL, `insert into agentmem.messages_archive (session_id, seq, id, tenant_id, user_id, agent, role,
		  content, token_estimate, created_at, expires_at)
		select session_id, seq, id, tenant_id, user_id, agent, role, content, token_estimate, created_at, expires_at
		from agentmem.messages where seq <= 2`)
}

// snapshot is every user-owned table's rows, as text in a stable order.
func snapshot(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, `select rel::text from agentmem.user_owned_tables()`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tb := range tables {
		var rows string
		if err := conn.QueryRow(ctx, `select coalesce(string_agg(r, E'\n' order by r), '') from (select to_jsonb(x)::text as r from `+
			tb+` x) s`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		out[tb] = rows
	}
	return out
}

// partitionHeader is the dump's heading of a partition's section (a table named <table>_p<n>).
var partitionHeader = regexp.MustCompile(`^Table agentmem\.[a-z_]+_p\d+\n`)

// withoutPartitions is a dump without the sections of the partitions, its indexes written as
// those of a table of one piece (a partitioned table's are ON ONLY it).
func withoutPartitions(dump string) string {
	var kept []string
	for _, section := range strings.Split(dump, "\n-- ") {
		if !partitionHeader.MatchString(section) {
			kept = append(kept, section)
		}
	}
	return strings.ReplaceAll(strings.Join(kept, "\n-- "), " ON ONLY agentmem.", " ON agentmem.")
}

// A populated database partitioned by user keeps every row, and every table keeps what the
// migrations gave it: the dump of the schema differs only where a key takes the user (primary
// keys, unique constraints and foreign keys, user_id in front), the storage options that went
// to the partitions, the indexes of sessions and jobs by id alone, and the trigger that keeps
// session ids unique across users.
// The shared memories (memory.SharedUserID) are in its partition, and a user of their tenant
// recalls them. The partitions are reached through their table only. A second call changes nothing,
// and another number of partitions is refused.
func TestPartitionByUserInPlace(t *testing.T) {
	t.Parallel()
	db := testdb.NewPartitioned(t, 1)
	populate(t, db)
	ctx := context.Background()
	conn := storetest.Admin(t, db.URL)
	before, beforeDump := snapshot(t, conn), dumpURL(t, db.URL)
	for tb, rows := range before {
		if rows == "" {
			t.Errorf("%s has no rows before the conversion: populate writes none", tb)
		}
	}

	n, err := schema.PartitionByUser(ctx, conn, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(before) {
		t.Errorf("converted %d tables, want the %d user-owned ones", n, len(before))
	}
	after := snapshot(t, conn)
	for tb, rows := range before {
		if after[tb] != rows {
			t.Errorf("%s: the rows changed in the conversion:\nbefore %.300s\nafter  %.300s", tb, rows, after[tb])
		}
	}

	// The schema, but for the partitions' own sections.
	got := withoutPartitions(dumpURL(t, db.URL))
	var removed, added []string
	gotLines, wantLines := strings.Split(got, "\n"), strings.Split(beforeDump, "\n")
	for _, l := range wantLines {
		if !slices.Contains(gotLines, l) {
			removed = append(removed, l)
		}
	}
	for _, l := range gotLines {
		if !slices.Contains(wantLines, l) {
			added = append(added, l)
		}
	}
	keyWithUser := regexp.MustCompile(`^  constraint \S+ (PRIMARY KEY \((user_id|owner)|UNIQUE \(user_id|FOREIGN KEY \(user_id, .*REFERENCES agentmem\.sessions\(user_id, )`)
	for _, l := range added {
		switch {
		case keyWithUser.MatchString(l):
		case strings.HasPrefix(l, "CREATE INDEX sessions_id_idx ON agentmem.sessions USING btree (id);"),
			strings.HasPrefix(l, "CREATE INDEX jobs_id_idx ON agentmem.jobs USING btree (id);"):
		case strings.HasPrefix(l, "CREATE TRIGGER sessions_keep_id_unique AFTER INSERT ON agentmem.sessions"):
		default:
			t.Errorf("the conversion added %q", l)
		}
	}
	for _, l := range removed {
		switch {
		case strings.HasPrefix(l, "  constraint ") && (strings.Contains(l, "PRIMARY KEY") || strings.Contains(l, "UNIQUE") ||
			strings.Contains(l, "FOREIGN KEY")):
		case strings.HasPrefix(l, "alter table agentmem.") && strings.Contains(l, " set ("):
		default:
			t.Errorf("the conversion removed %q", l)
		}
	}
	if len(added) == 0 {
		t.Error("the dump is the same after the conversion: no key took the user")
	}

	// Each table: 4 partitions by hash of its user, with the table's storage options, under
	// row-level security, with no privileges for anyone but the owner.
	rows, err := conn.Query(ctx, `
		select p.relname::text, count(*), bool_and(c.relrowsecurity),
		       bool_and(not exists (select 1 from aclexplode(c.relacl) a where a.grantee <> c.relowner))
		from agentmem.user_owned_tables() u
		join pg_class p on p.oid = u.rel
		join pg_inherits i on i.inhparent = p.oid
		join pg_class c on c.oid = i.inhrelid
		group by 1 order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	var parts int
	var rls, private bool
	seen := 0
	if _, err := pgx.ForEachRow(rows, []any{&name, &parts, &rls, &private}, func() error {
		seen++
		if parts != 4 || !rls || !private {
			t.Errorf("%s: %d partitions, row-level security %v, private %v", name, parts, rls, private)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if seen != len(before) {
		t.Errorf("%d tables have partitions, want %d", seen, len(before))
	}
	// The shared memories: all in the partition that hash of '' chooses, recalled by a user of t1.
	var sharedParts []string
	if err := conn.QueryRow(ctx, `
		select coalesce(array_agg(distinct m.tableoid::regclass::text), '{}') from agentmem.memories m
		join pg_class c on c.oid = m.tableoid
		where m.user_id = '' and satisfies_hash_partition('agentmem.memories'::regclass, 4,
		  (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'remainder (\d+)'))[1]::int, ''::text)`).Scan(&sharedParts); err != nil {
		t.Fatal(err)
	}
	var sharedRows int
	if err := conn.QueryRow(ctx, `select count(*) from agentmem.memories where user_id = ''`).Scan(&sharedRows); err != nil {
		t.Fatal(err)
	}
	if len(sharedParts) != 1 || sharedRows != 4 {
		t.Errorf("the 4 shared memories: %d rows, in partitions %v that hash of '' chooses; want 4 in one", sharedRows, sharedParts)
	}
	st := storetest.Open(t, db)
	hits, err := st.Recall(ctx, store.RecallParams{Scope: memory.Scope{UserID: "user-1", TenantID: "t1", Agent: "bot"},
		IncludeShared: true, Query: "office closed Fridays", Mode: memory.ModeText, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(hits, func(h memory.Hit) bool { return h.Shared && h.Content == "The office is closed on Fridays" }) {
		t.Errorf("a user of t1 recalls %v after the conversion, want the tenant's shared memory", hits)
	}

	var toast string
	if err := conn.QueryRow(ctx, `select array_to_string(reloptions, ',') from pg_class where relname = 'messages_p2'`).Scan(&toast); err != nil ||
		!strings.Contains(toast, "toast_tuple_target=8160") {
		t.Errorf("messages_p2's storage options: %q, %v; want those of messages", toast, err)
	}

	// Again: nothing to do. Another number: refused, nothing changed.
	if n, err := schema.PartitionByUser(ctx, conn, 4, 0); err != nil || n != 0 {
		t.Errorf("partitioning into 4 again: %d tables, %v; want 0, nil", n, err)
	}
	for _, other := range []int{1, 8} {
		if _, err := schema.PartitionByUser(ctx, conn, other, 0); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("partitioning into %d after 4: %v, want it refused", other, err)
		}
	}
	if again := snapshot(t, conn); fmt.Sprint(again) != fmt.Sprint(after) {
		t.Error("a refused conversion changed rows")
	}
}

// A database that is not partitioned stays as it is with one partition asked for, and a
// table that a later migration adds is converted by the next call.
func TestPartitionByUserConvertsLaterTables(t *testing.T) {
	t.Parallel()
	db := testdb.NewPartitioned(t, 1)
	ctx := context.Background()
	conn := storetest.Admin(t, db.URL)
	before := dumpURL(t, db.URL)
	if n, err := schema.PartitionByUser(ctx, conn, 1, 0); err != nil || n != 0 {
		t.Fatalf("one partition: %d tables, %v; want 0, nil", n, err)
	}
	if after := dumpURL(t, db.URL); after != before {
		t.Error("partitioning into 1 changed the schema")
	}
	if _, err := schema.PartitionByUser(ctx, conn, 4, 0); err != nil {
		t.Fatal(err)
	}
	// What a later migration may do: a table of users, with a foreign key to sessions, a
	// privilege and a policy.
	if _, err := conn.Exec(ctx, `
		create table agentmem.session_notes (
		  session_id uuid not null references agentmem.sessions (id) on delete cascade,
		  user_id text collate "C" not null,
		  note text not null,
		  primary key (session_id))`); err == nil {
		t.Fatal("a foreign key to sessions(id) alone was accepted on the partitioned layout")
	}
	if _, err := conn.Exec(ctx, `
		create table agentmem.session_notes (
		  user_id text collate "C" not null,
		  session_id uuid not null,
		  note text not null,
		  primary key (session_id),
		  constraint session_notes_session_fkey foreign key (user_id, session_id)
		    references agentmem.sessions (user_id, id) on delete cascade);
		alter table agentmem.session_notes enable row level security;
		create policy caller_owner on agentmem.session_notes for all to agentmem_caller
		  using (user_id = (select agentmem.current_user_id()));
		grant select on agentmem.session_notes to agentmem_caller`); err != nil {
		t.Fatal(err)
	}
	sid, user := uuid.New(), "user-1"
	if _, err := conn.Exec(ctx, `insert into agentmem.sessions (id, user_id, agent, expires_at) values ($1, $2, 'bot', now() + interval '1 hour');
		`, sid, user); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `insert into agentmem.session_notes values ($1, $2, 'hi')`, user, sid); err != nil {
		t.Fatal(err)
	}
	n, err := schema.PartitionByUser(ctx, conn, 4, 0)
	if err != nil || n != 1 {
		t.Fatalf("after a new table: %d tables converted, %v; want 1", n, err)
	}
	var pk, policies, grants string
	var parts, notes int
	if err := conn.QueryRow(ctx, `select pg_get_constraintdef(c.oid),
		  (select count(*) from pg_inherits where inhparent = 'agentmem.session_notes'::regclass),
		  (select string_agg(policyname, ',') from pg_policies where tablename = 'session_notes'),
		  (select string_agg(grantee || ':' || privilege_type, ',') from information_schema.role_table_grants
		   where table_name = 'session_notes' and grantee = 'agentmem_caller'),
		  (select count(*) from agentmem.session_notes where user_id = $1)
		from pg_constraint c where c.conrelid = 'agentmem.session_notes'::regclass and c.contype = 'p'`, user).
		Scan(&pk, &parts, &policies, &grants, &notes); err != nil {
		t.Fatal(err)
	}
	if pk != "PRIMARY KEY (user_id, session_id)" || parts != 4 || policies != "caller_owner" ||
		grants != "agentmem_caller:SELECT" || notes != 1 {
		t.Errorf("the later table: key %q, %d partitions, policies %q, grants %q, %d rows", pk, parts, policies, grants, notes)
	}
	// Its foreign key still cascades.
	if _, err := conn.Exec(ctx, `delete from agentmem.sessions where user_id = $1 and id = $2`, user, sid); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `select count(*) from agentmem.session_notes`).Scan(&notes); err != nil || notes != 0 {
		t.Errorf("after its session was deleted: %d notes, %v", notes, err)
	}
}
