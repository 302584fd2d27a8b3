package store_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// A fold reads each pending message of its batch once, at a commit (the scope's) and at the
// sweep (every scope's): folding a user's 255 pending messages (below the threshold, so no
// commit folded them) among 3,000 rows of other users reads each of them by its key, or the
// table once, where a plan that took the batch for one row read the user's messages or the
// pending rows again for every row of it (255 x 255 entries). The counts come out as the
// messages' words: 255 documents, and nothing left pending.
func TestFoldReadsEachPendingMessageOnce(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	// The other users' rows first, and the statistics of the tables as they hold them: the user
	// is new to them, as a user whose messages arrived since the last analyze is.
	const others = `
with s as (
  insert into agentmem.sessions (id, user_id, agent, expires_at)
  select gen_random_uuid(), gen_random_uuid()::text, 'chat', now() + interval '1 day' from generate_series(1, 300)
  returning id, user_id
)
insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
select s.id, i, 'm' || i, s.user_id, 'chat', 'user', 'the harbour at dawn, note ' || i, 8, now() + interval '1 day'
from s, generate_series(1, 10) i`
	e.exec(t,
		sqlStep{others, nil},
		// the other users' messages were counted long ago: only the user's will wait
		sqlStep{`delete from agentmem.message_words_pending`, nil},
		sqlStep{`analyze agentmem.messages, agentmem.message_words_pending`, nil},
		sqlStep{userMessagesSQL, []any{user, 255}},
	)
	tables := []string{"agentmem.messages", "agentmem.message_words_pending"}
	for _, fold := range []struct{ name, sql string }{
		{"the scope's, at a commit", `select agentmem.fold_message_words($1, '', 'chat', 100000)`},
		{"every scope's, at the sweep", `select agentmem.fold_message_words(null, null, null, 100000 + 0 * length($1))`},
	} {
		t.Run(fold.name, func(t *testing.T) {
			tx, err := e.conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.Background()) //nolint:errcheck // each fold starts from the same pending rows
			before := make([]int64, len(tables))
			for i, table := range tables {
				before[i] = rowsRead(t, tx, table)
			}
			var folded int
			if err := tx.QueryRow(ctx, fold.sql, user).Scan(&folded); err != nil {
				t.Fatal(err)
			}
			if folded != 255 {
				t.Errorf("folded %d messages, want 255", folded)
			}
			for i, table := range tables {
				after := rowsRead(t, tx, table)
				// each of the 255 found by its key, or in a pass or two over the table or its
				// index (3,255 rows or entries, the deleted pending rows' among them): at most
				// 10,000, far below 255 x 255 (65,025); and at least once (a count that saw
				// nothing would pass an upper bound alone)
				if got := after - before[i]; got > 10_000 || got < 255 {
					t.Errorf("%s: the fold read %d index entries and rows, want 255 to 10,000", table, got)
				}
			}
			var docs, pending int64
			if err := tx.QueryRow(ctx, `select (select docs from agentmem.message_words where user_id = $1 and lexeme = ''),
				(select count(*) from agentmem.message_words_pending where user_id = $1)`, user).Scan(&docs, &pending); err != nil {
				t.Fatal(err)
			}
			if docs != 255 || pending != 0 {
				t.Errorf("after the fold: %d documents counted and %d pending, want 255 and 0", docs, pending)
			}
		})
	}
}

// Edits of a scope's messages and commits that fold its words never deadlock: both take the
// scope's word counts in lexeme order, the row of totals first (an edit took them in
// its update's plan order, and held a word's count while waiting for the totals a fold held: a
// third to a half of the edits failed so, under pgbench, against a fold that holds the totals
// from its look on). Five connections commit new sessions of three messages into one scope
// (each looks, and folds past the threshold) while a sixth edits two of its messages at a time,
// for two seconds and 300 commits at least; nothing fails, commits fold, and the counts are exact.
func TestEditsAndFoldsOfAScopeNeverDeadlock(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	// the scope's words counted once, and the counts' statistics taken: a small table, which an
	// update's plan reads in its physical order
	e.exec(t,
		sqlStep{pendingUserMessagesSQL, []any{user, 300, "chat"}},
		foldScope(user),
		sqlStep{`analyze agentmem.message_words`, nil},
	)
	const commit = `
with s as (insert into agentmem.sessions (id, user_id, agent, expires_at)
  values (gen_random_uuid(), $1, 'chat', now() + interval '1 day') returning id, user_id)
insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
select s.id, i, 'm' || i, s.user_id, 'chat', 'user', 'word' || ($2::int + i) || ' other' || (i * $2::int) || ' harbour', 5,
  now() + interval '1 day'
from s, generate_series(1, 3) i`
	const edit = `
update agentmem.messages set content = 'edited word' || $2::int || ' zebra'
where (session_id, seq) in (select session_id, seq from agentmem.messages where user_id = $1 order by random() limit 2)`
	deadline := time.Now().Add(2 * time.Second)
	giveUp := deadline.Add(time.Minute) // commits that all fail end the test, not hang it
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []error
	var commits, edits int
	var committed atomic.Int64
	for w := range 6 {
		conn := storetest.Admin(t, e.url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// two seconds, and at least 300 commits: enough for folds (one in about 86), however
			// slow the machine
			for i := 0; (time.Now().Before(deadline) || committed.Load() < 300) && time.Now().Before(giveUp); i++ {
				sql := commit
				if w == 5 {
					sql = edit
				}
				_, err := conn.Exec(ctx, sql, user, (i*7+w)%40)
				mu.Lock()
				if err != nil {
					failures = append(failures, err)
				} else if w == 5 {
					edits++
				} else {
					commits++
					committed.Add(1)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range failures[:min(len(failures), 3)] {
		t.Errorf("a commit or an edit failed: %v", err)
	}
	if len(failures) > 0 || commits == 0 || edits == 0 {
		t.Fatalf("%d commits and %d edits done, %d failed", commits, edits, len(failures))
	}
	// the setup counted 300 messages: more, and a commit folded
	var folded int64
	if err := e.conn.QueryRow(ctx, `select coalesce((select docs from agentmem.message_words where user_id = $1 and lexeme = ''), 0)`, user).Scan(&folded); err != nil {
		t.Fatal(err)
	}
	if folded <= 300 {
		t.Errorf("no fold in %d commits: %d messages counted", commits, folded)
	}
	noWordDrift(t, e, "edits beside folds")
}

// pendingUserMessagesSQL stores $2 messages of user $1 and agent $3 in sessions of 30, numbered 2
// to 31: none is a place where a commit looks at its scope's pending words (the 1st, 33rd... of
// a session), so all of them wait, whatever their number.
const pendingUserMessagesSQL = `
with s as (
  insert into agentmem.sessions (id, user_id, agent, expires_at)
  select gen_random_uuid(), $1, $3, now() + interval '1 day' from generate_series(1, ($2::int + 29) / 30)
  returning id, user_id, agent
),
n as (select s.id, s.user_id, s.agent, row_number() over () as k from s)
insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
select n.id, i, 'm' || i, n.user_id, n.agent, 'user', 'the harbour at dawn, note ' || i, 8, now() + interval '1 day'
from n, generate_series(2, 31) i
where (n.k - 1) * 30 + i - 1 <= $2::int`

// lookSQL stores the first message of a new session of user $1: a commit of it looks at the
// scope's pending words, and folds them past the threshold.
const lookSQL = `
with s as (
  insert into agentmem.sessions (id, user_id, agent, expires_at)
  values (gen_random_uuid(), $1, 'chat', now() + interval '1 day')
  returning id, user_id
)
insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
select s.id, 1, 'first', s.user_id, 'chat', 'user', 'the harbour at noon', 5, now() + interval '1 day' from s`

// A commit's look at its scope's pending words, and the fold that follows, read the pending
// table through its primary key's index, bounded by the whole scope: the table churns and keeps
// the size of its largest backlog, and a plan chosen from its statistics (a few live rows, many
// pages) scanned all of it, at one commit in 16 (45 ms for 270 live rows in 5,600 pages). Here
// the table holds the leftovers of a fold of 3,000 other users' messages, 300 of the user's
// pending ones, and 3,000 more of the user's with ten other agents, its statistics taken then;
// the look finds the 300 and the fold counts them, neither scans the table, and neither reads the
// other agents' rows (an index bounded by the user alone would give all 3,300 to a filter).
func TestLookAndFoldReadPendingWordsThroughTheirIndex(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	e.exec(t,
		sqlStep{`insert into agentmem.sessions (id, user_id, agent, expires_at)
		  select gen_random_uuid(), gen_random_uuid()::text, 'chat', now() + interval '1 day' from generate_series(1, 300)`, nil},
		sqlStep{`insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
		  select s.id, i, 'm' || i, s.user_id, 'chat', 'user', 'the harbour at dawn, note ' || i, 8, now() + interval '1 day'
		  from agentmem.sessions s, generate_series(2, 11) i where s.user_id <> $1`, []any{user}},
		foldEveryScope,
		sqlStep{pendingUserMessagesSQL, []any{user, 300, "chat"}},
	)
	for k := range 10 {
		e.exec(t, sqlStep{pendingUserMessagesSQL, []any{user, 300, fmt.Sprintf("agent-%d", k)}})
	}
	e.exec(t, sqlStep{`analyze agentmem.message_words_pending`, nil})
	tx, err := e.conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // nothing to keep
	// sequential scans of the pending table (of its partitions, when partitioned by user), and
	// scans of its indexes, so far in the transaction
	scans := func() (seq, index int64) {
		t.Helper()
		if err := tx.QueryRow(ctx, `select
			coalesce(sum(pg_stat_get_xact_numscans(r.relid)), 0)::bigint,
			coalesce((select sum(pg_stat_get_xact_numscans(i.indexrelid)) from pg_index i
			          where i.indrelid in (select $1::regclass union select relid from pg_partition_tree($1::regclass))), 0)::bigint
			from (select $1::regclass as relid union select relid from pg_partition_tree($1::regclass)) r`,
			"agentmem.message_words_pending").Scan(&seq, &index); err != nil {
			t.Fatal(err)
		}
		return seq, index
	}
	seq0, index0 := scans()
	read0 := rowsRead(t, tx, "agentmem.message_words_pending")
	if _, err := tx.Exec(ctx, lookSQL, user); err != nil {
		t.Fatal(err)
	}
	seq1, index1 := scans()
	// the look's 256 entries and the fold's 300, and the deleted rows' entries among them: far
	// fewer than the user's 3,300
	if read := rowsRead(t, tx, "agentmem.message_words_pending") - read0; read > 1500 || read < 256 {
		t.Errorf("the look and the fold read %d entries and rows of the pending table, want 256 to 1,500", read)
	}
	var pending, docs int64
	if err := tx.QueryRow(ctx, `select (select count(*) from agentmem.message_words_pending where user_id = $1 and agent = 'chat'),
		(select docs from agentmem.message_words where user_id = $1 and agent = 'chat' and lexeme = '')`, user).Scan(&pending, &docs); err != nil {
		t.Fatal(err)
	}
	if pending != 0 || docs != 301 {
		t.Fatalf("after the look: %d messages pending and %d counted, want the 301 counted", pending, docs)
	}
	if seq1 != seq0 {
		t.Errorf("the look and the fold scanned the pending table %d times, want none", seq1-seq0)
	}
	if index1 == index0 {
		t.Error("the look and the fold read no index of the pending table")
	}
}

// A commit that finds its scope past the threshold while another commit is folding that scope
// leaves the fold to it: it neither folds nor waits for the word counts the fold holds. Here
// the user's words were counted once, and 300 more messages wait; one transaction stores a
// message that looks and folds them, and before it ends, another stores a message that looks
// too, and is done at once (it would wait for the first to end, to add the word "harbour" to
// the counts the first one holds locked). Once both end, the counts are exact, and the
// second's message waits for the next fold (the sweep's, here).
func TestACommitLeavesItsScopesFoldToTheCommitFoldingIt(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	e.exec(t,
		sqlStep{pendingUserMessagesSQL, []any{user, 300, "chat"}},
		foldScope(user),
		sqlStep{pendingUserMessagesSQL, []any{user, 300, "chat"}},
	)
	folding, err := e.conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer folding.Rollback(context.Background()) //nolint:errcheck // committed below
	if _, err := folding.Exec(ctx, lookSQL, user); err != nil {
		t.Fatal(err)
	}
	if held := pendingOf(t, folding, user); held != 0 {
		t.Fatalf("the first look left %d messages pending, want it to fold them all", held)
	}
	other := storetest.Admin(t, e.url)
	second, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Rollback(context.Background()) //nolint:errcheck // committed below
	// a wait for the first transaction's locks fails the statement instead of hanging the test
	if _, err := second.Exec(ctx, `set local lock_timeout = '5s'`); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Exec(ctx, lookSQL, user); err != nil {
		t.Fatalf("a look while another commit folds the scope: %v", err)
	}
	if err := folding.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if pending := pendingOf(t, e.conn, user); pending != 1 {
		t.Errorf("%d messages pending after both commits, want the second's one", pending)
	}
	noWordDrift(t, e, "two looks at once")
	// what the second left is counted by the next fold of the scope: here the sweep's
	if _, err := e.st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if pending := pendingOf(t, e.conn, user); pending != 0 {
		t.Errorf("%d messages pending after a sweep, want none", pending)
	}
	noWordDrift(t, e, "the sweep after two looks")
}

// sqlStep is a statement and its arguments (rankEnv.exec).
type sqlStep struct {
	sql  string
	args []any
}

// foldScope folds the pending words of user's scope of agent chat, as a commit past the
// threshold does; foldEveryScope folds every scope's, as the sweep does.
func foldScope(user string) sqlStep {
	return sqlStep{`select agentmem.fold_message_words($1, '', 'chat', 100000)`, []any{user}}
}

var foldEveryScope = sqlStep{`select agentmem.fold_message_words(null, null, null, 100000)`, nil}

// pendingOf is how many of user's messages wait for their words to be counted, as q (a
// connection or a transaction) sees them.
func pendingOf(t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, user string) int64 {
	t.Helper()
	var n int64
	if err := q.QueryRow(t.Context(), `select count(*) from agentmem.message_words_pending where user_id = $1`, user).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// exec runs steps in turn on e's superuser connection.
func (e *rankEnv) exec(t *testing.T, steps ...sqlStep) {
	t.Helper()
	for _, st := range steps {
		if _, err := e.conn.Exec(t.Context(), st.sql, st.args...); err != nil {
			t.Fatal(err)
		}
	}
}

// rowsRead is how many entries the indexes of table (and of its partitions, when partitioned by
// user) gave and rows its scans read, so far in tx's transaction. (pg_partition_tree answers
// nothing for a table that is not partitioned: the table is named as well.)
func rowsRead(t *testing.T, tx pgx.Tx, table string) int64 {
	t.Helper()
	var n int64
	if err := tx.QueryRow(t.Context(), `select coalesce(sum(pg_stat_get_xact_tuples_returned(r.relid)), 0)::bigint
		from (select i.indexrelid as relid from pg_index i
		      where i.indrelid in (select $1::regclass union select relid from pg_partition_tree($1::regclass))
		      union all (select $1::regclass union select relid from pg_partition_tree($1::regclass))) r`, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// BM25's statistics read a user's pending messages (those whose words are not yet counted) by
// their keys: for a user of 1,600 messages, 100 of them pending, in a table whose statistics
// count 10,000 users (so that a plan for any user expects a handful of rows), they read about
// the 100, where a join read all 1,600 of the user's messages by the owner index to hash them.
func TestWordStatsReadPendingMessagesByKey(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	e.exec(t,
		sqlStep{userMessagesSQL, []any{user, 1500}}, // counted at once (above the fold threshold)
		sqlStep{userMessagesSQL, []any{user, 100}},  // pending
		sqlStep{`alter table agentmem.messages alter column user_id set (n_distinct = 10000)`, nil},
		sqlStep{`analyze agentmem.messages, agentmem.message_words_pending`, nil},
	)
	if pending := pendingOf(t, e.conn, user); pending != 100 {
		t.Fatalf("%d messages pending, want 100", pending)
	}
	err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user}, func(tx pgx.Tx) error {
		before := rowsRead(t, tx, "agentmem.messages")
		var docs float64
		if err := tx.QueryRow(ctx, `select docs from agentmem.message_word_stats($1, '', 'chat', array['harbour'])`, user).Scan(&docs); err != nil {
			return err
		}
		if docs != 1600 {
			t.Errorf("the statistics count %v messages, want 1600", docs)
		}
		// the 100 pending by their keys, and the user's expired ones (none); at least the 100
		if got := rowsRead(t, tx, "agentmem.messages") - before; got > 400 || got < 100 {
			t.Errorf("the statistics read %d index entries and rows of messages, want 100 to 400", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BM25's statistics are the scope's live messages' words, whether they are counted, pending or
// counted and expired but not yet swept: the number of messages, their average length, and how
// many hold each of the question's words (a word asked twice, and a word none holds, among
// them), as the messages themselves say. Here 300 counted messages, 60 pending, and 25 of the
// counted and 14 of the pending expired, of words in turn.
func TestWordStatsAreTheLiveMessagesWords(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	const words = `
with s as (
  insert into agentmem.sessions (id, user_id, agent, expires_at)
  values (gen_random_uuid(), $1, 'chat', now() + interval '1 day')
  returning id, user_id
)
insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
select s.id, i, 'm' || i, s.user_id, 'chat', 'user',
  (array['harbour','lantern','meadow','copper','orchard'])[1 + i % 5] || ' ' ||
  (array['velvet','walnut','zebra'])[1 + i % 3] || repeat(' ibis', i % 4), 4, now() + interval '1 day'
from s, generate_series(1, $2::int) i`
	e.exec(t,
		sqlStep{words, []any{user, 300}},
		foldScope(user),
		sqlStep{pendingUserMessagesSQL, []any{user, 60, "chat"}},
		sqlStep{`update agentmem.messages set expires_at = now() - interval '1 second'
		  where user_id = $1 and ((seq <= 25 and id like 'm%' and content not like 'the harbour%')
		    or (content like 'the harbour%' and seq <= 8))`, []any{user}},
	)
	var pending, expired int
	if err := e.conn.QueryRow(ctx, `select (select count(*) from agentmem.message_words_pending where user_id = $1),
		(select count(*) from agentmem.messages where user_id = $1 and expires_at <= now())`, user).Scan(&pending, &expired); err != nil {
		t.Fatal(err)
	}
	if pending != 60 || expired != 39 {
		t.Fatalf("%d messages pending and %d expired, want 60 and 39", pending, expired)
	}
	terms := []string{"harbour", "ibi", "zebra", "dawn", "harbour", "kayak"}
	err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user}, func(tx pgx.Tx) error {
		var docs, avgdl float64
		var dfs []float64
		if err := tx.QueryRow(ctx, `select docs, avgdl, dfs from agentmem.message_word_stats($1, '', 'chat', $2)`, user, terms).Scan(&docs, &avgdl, &dfs); err != nil {
			return err
		}
		var wantDocs, wantAvg float64
		var wantDfs []float64
		if err := tx.QueryRow(ctx, `select count(*)::float8, greatest(avg(length(fts)), 1)::float8,
			array(select count(m.*) filter (where t.term = any(tsvector_to_array(m.fts)))::float8
			      from unnest($2::text[]) with ordinality t(term, k)
			      left join agentmem.messages m on m.user_id = $1 and m.expires_at > now()
			      group by t.k order by t.k)
			from agentmem.messages where user_id = $1 and expires_at > now()`, user, terms).Scan(&wantDocs, &wantAvg, &wantDfs); err != nil {
			return err
		}
		if docs != wantDocs || math.Abs(avgdl-wantAvg) > 1e-9 || fmt.Sprint(dfs) != fmt.Sprint(wantDfs) {
			t.Errorf("statistics: %v messages of %v words on average, %v holding %v; the messages say %v, %v and %v",
				docs, avgdl, dfs, terms, wantDocs, wantAvg, wantDfs)
		}
		if wantDocs != 321 || wantDfs[0] == 0 || wantDfs[1] == 0 || wantDfs[5] != 0 {
			t.Errorf("the messages: %v live, %v holding %v, want 321 and each word but the last held", wantDocs, wantDfs, terms)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BM25 over a scope's messages reads each match once: the full-text index's matches come with
// what scoring reads of them. For a word in all of a user's 600 messages, scoring them took the
// index's 600 entries, then read each message again by its key (600 more entries). The reads of
// the word statistics BM25 starts with (an index-only pass over the user's messages for those
// expired) are counted apart and left out.
func TestMessageBM25ReadsEachMatchOnce(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	if _, err := e.conn.Exec(ctx, userMessagesSQL, user, 600); err != nil {
		t.Fatal(err)
	}
	err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user}, func(tx pgx.Tx) error {
		// the statistics alone first: BM25 reads them again, as it starts
		start := rowsRead(t, tx, "agentmem.messages")
		if _, err := tx.Exec(ctx, `select * from agentmem.message_word_stats($1, '', 'chat', array['harbour'])`, user); err != nil {
			return err
		}
		stats := rowsRead(t, tx, "agentmem.messages") - start
		before := start + stats
		var hits int
		if err := tx.QueryRow(ctx, `select count(*) from agentmem.message_bm25_hits($1, '', 'chat', '{}', '', '', null, null,
			array['harbour'], 20, true, 0)`, user).Scan(&hits); err != nil {
			return err
		}
		if hits != 20 {
			t.Errorf("BM25 answered %d messages, want 20", hits)
		}
		if got := rowsRead(t, tx, "agentmem.messages") - before - stats; got < 600 || got >= 900 {
			t.Errorf("BM25 read %d index entries and rows of messages for 600 matches (and %d for its statistics), want 600 to 900",
				got, stats)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Recall reads its results' rows by their keys, whatever the planner expects of the user's size:
// a recall over a user's messages reads none of the user's 1,500 memories, and one over their
// memories reads each result's row once beside what ranking reads (two passes over the user's
// index entries: the scope's size, and BM25's count of it). On their generic plans, which
// expect a user of average size (the table's statistics here count 10,000 users), both joined
// the results to all of the user's memories, a third pass (1,500 for messages alone, 4,500 for
// memories); for a user of 100,000, a million rows a recall, spilled to disk.
func TestRecallReadsItsResultsByTheirKeys(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	texts, meta := rankFacts(1500)
	e.seed(t, uuid.MustParse(user), "chat", texts, meta)
	e.exec(t,
		sqlStep{userMessagesSQL, []any{user, 40}},
		sqlStep{`alter table agentmem.memories alter column user_id set (n_distinct = 10000)`, nil},
		sqlStep{`alter table agentmem.messages alter column user_id set (n_distinct = 10000)`, nil},
		sqlStep{`analyze agentmem.memories, agentmem.messages`, nil},
	)
	recall := func(fn, source string) string {
		args := `p_query => $2, query_embedding => null, query_model => '', p_user_id => $1, p_tenant_id => '',
			p_agent => '', p_filter => '{}', p_mode => 'text', candidates => 20, text_weight => 1, vector_weight => 1,
			rrf_k => 60, min_score => -1, p_k => 10, exact_limit => 1, with_vectors => false`
		if fn == "recall_sources" {
			args = "p_source => '" + source + "', " + args
		}
		return `select count(*) from agentmem.` + fn + `(` + args + `)`
	}
	for _, c := range []struct {
		name, sql, query string
		max              int64
	}{
		// the messages' harbour: no memory is a candidate, none is read
		{"messages", recall("recall_sources", "messages"), "harbour", 0},
		// ranking's two passes over the 1,500, then the 10 results by their keys
		{"memories", recall("recall_memories", ""), "tea", 2*1500 + 100},
		{"all", recall("recall_sources", "all"), "tea harbour", 2*1500 + 100},
	} {
		err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user}, func(tx pgx.Tx) error {
			before := rowsRead(t, tx, "agentmem.memories")
			var hits int
			if err := tx.QueryRow(ctx, c.sql, user, c.query).Scan(&hits); err != nil {
				return err
			}
			if hits != 10 {
				t.Errorf("%s: recall answered %d results, want 10", c.name, hits)
			}
			if got := rowsRead(t, tx, "agentmem.memories") - before; got > c.max {
				t.Errorf("%s: recall read %d index entries and rows of memories, want at most %d", c.name, got, c.max)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}

// userMessagesSQL gives user $1 a new session of $2 messages.
const userMessagesSQL = `
with s as (
  insert into agentmem.sessions (id, user_id, agent, expires_at)
  values (gen_random_uuid(), $1, 'chat', now() + interval '1 day')
  returning id, user_id
)
insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
select s.id, i, 'm' || i, s.user_id, 'chat', 'user', 'the harbour at dawn, note ' || i, 8, now() + interval '1 day'
from s, generate_series(1, $2::int) i`

// Above the exact limit, a user's nearest memories come from the model's HNSW index, not from
// reading and sorting all of the user's memories. Row-level security's condition on memories is
// an OR (the user's own rows or the tenant's shared ones), which the planner multiplied with the
// search's own condition on the user: for a user of 1,500 memories among 4,500, in a table whose
// statistics count 10,000 users, it expected a handful of rows and chose the sort, reading all
// 1,500; for a user of 100,000, 91 ms a recall. The index reads about its search's width (151).
func TestLargeScopesNearestMemoriesComeFromTheIndex(t *testing.T) {
	t.Parallel()
	if testdb.UserPartitions(t) > 1 {
		// the user's 1,500 are then most of their partition, which the planner rightly scans
		t.Skip("a plan of one table: the user's rows are most of their partition")
	}
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	texts, meta := rankFacts(1500)
	e.seed(t, uuid.MustParse(user), "chat", texts, meta)
	for range 30 { // other users' memories, 3,000: the user's own are then worth the index
		e.seed(t, uuid.New(), "chat", texts[:100], meta[:100])
	}
	for _, sql := range []string{
		`alter table agentmem.memories alter column user_id set (n_distinct = 10000)`,
		`analyze agentmem.memories`,
	} {
		if _, err := e.conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	var query, model string
	if err := e.conn.QueryRow(ctx, `select embedding::text, embedding_model from agentmem.memories
		where user_id = $1 and content = $2`, user, texts[7]).Scan(&query, &model); err != nil {
		t.Fatal(err)
	}
	err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user}, func(tx pgx.Tx) error {
		before := rowsRead(t, tx, "agentmem.memories")
		var first string
		var hits int
		if err := tx.QueryRow(ctx, `select (array_agg(content order by score desc))[1], count(*)
			from agentmem.recall_memories(p_query => '', query_embedding => $2::extensions.vector, query_model => $3,
			  p_user_id => $1, p_tenant_id => '', p_agent => '', p_filter => '{}', p_mode => 'vector', candidates => 20,
			  text_weight => 1, vector_weight => 1, rrf_k => 60, min_score => -1, p_k => 10, exact_limit => 1,
			  with_vectors => false)`, user, query, model).Scan(&first, &hits); err != nil {
			return err
		}
		if hits != 10 || first != texts[7] {
			t.Errorf("recall answered %d results, the first %q; want 10, the first %q", hits, first, texts[7])
		}
		// the exact limit's one entry, the index's search (ef_search 100, and what its iterative
		// scan adds), the 10 results by their keys
		if got := rowsRead(t, tx, "agentmem.memories") - before; got > 500 {
			t.Errorf("a vector recall read %d index entries and rows of memories, want at most 500 (the user has 1,500)", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// public.hybrid_match_memories reads its results by their whole key, the user and the id:
// partitioned by user, no index has the id alone, and a join on it read every memory of every
// user (migration join_hybrid_matches_by_their_whole_key). The plan auto_explain logs looks
// each result up with both.
func TestHybridMatchReadsItsResultsByTheirWholeKey(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	user := uuid.New()
	e.seed(t, user, "", []string{rankFact(1), rankFact(2), rankFact(3)}, []string{`{}`, `{}`, `{}`})
	for range 4 {
		e.seed(t, uuid.New(), "", []string{rankFact(1), rankFact(2)}, []string{`{}`, `{}`})
	}
	q := pgvector.NewVector(embedding.Hash{}.Vector(rankFact(1))).String()
	plans, got := explain(t, e.url, `select m.content from public.hybrid_match_memories($1, $2::extensions.vector, 10,
		filter_user_id => $3, filter_tenant_id => '', query_model => $4) m`, rankFact(1), q, user.String(), embedding.HashModel)
	if len(got) != 3 || got[0] != rankFact(1) {
		t.Errorf("hybrid_match_memories answered %q, want the user's 3 memories, %q first", got, rankFact(1))
	}
	byKey := false
	for line := range strings.Lines(plans) {
		l := strings.TrimSpace(line)
		byKey = byKey || strings.HasPrefix(l, "Index Cond:") && strings.Contains(l, "user_id = COALESCE(") &&
			strings.Contains(l, "id = COALESCE(")
	}
	if !byKey {
		t.Errorf("no result of hybrid_match_memories is read by its user and id:\n%s", plans)
	}
}

// rankFacts are the first n of rankFact's texts, each with the metadata {}.
func rankFacts(n int) (texts, metadata []string) {
	texts, metadata = make([]string, n), make([]string, n)
	for i := range texts {
		texts[i], metadata[i] = rankFact(i), `{}`
	}
	return texts, metadata
}
