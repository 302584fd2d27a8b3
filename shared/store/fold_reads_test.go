package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/store"
)

// A fold reads each pending message of its batch once: folding a user's 255 pending messages
// (below the threshold, so no commit folded them) among 3,000 rows of other users reads a few
// hundred index entries or rows of messages and of the pending rows, where a plan that took the batch
// for one row read the user's messages again for every row of it (255 x 255 entries). The
// counts come out as the messages' words: 255 documents, and nothing left pending.
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
	const users = `
with s as (
  insert into agentmem.sessions (id, user_id, agent, expires_at)
  values (gen_random_uuid(), $1, 'chat', now() + interval '1 day')
  returning id, user_id
)
insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
select s.id, i, 'm' || i, s.user_id, 'chat', 'user', 'the harbour at dawn, note ' || i, 8, now() + interval '1 day'
from s, generate_series(1, 255) i`
	for _, step := range []struct {
		sql  string
		args []any
	}{
		{others, nil},
		// the other users' messages were counted long ago: only the user's will wait
		{`delete from agentmem.message_words_pending`, nil},
		{`analyze agentmem.messages, agentmem.message_words_pending`, nil},
		{users, []any{user}},
	} {
		if _, err := e.conn.Exec(ctx, step.sql, step.args...); err != nil {
			t.Fatal(err)
		}
	}
	tables := []string{"agentmem.messages", "agentmem.message_words_pending"}
	err := pgx.BeginFunc(ctx, e.conn, func(tx pgx.Tx) error {
		before := make([]int64, len(tables))
		for i, table := range tables {
			before[i] = rowsRead(t, tx, table)
		}
		var folded int
		if err := tx.QueryRow(ctx, `select agentmem.fold_message_words($1, '', 'chat', 100000)`, user).Scan(&folded); err != nil {
			return err
		}
		if folded != 255 {
			t.Errorf("folded %d messages, want 255", folded)
		}
		for i, table := range tables {
			after := rowsRead(t, tx, table)
			// each of the 255 once, found by its key or in one pass over the user's entries (or,
			// partitioned by user into a few, over the user's partition), far below 255 x 255;
			// and at least once (a count that saw nothing would pass an upper bound alone)
			if got := after - before[i]; got > 2000 || got < 255 {
				t.Errorf("%s: the fold read %d index entries and rows, want 255 to 2,000", table, got)
			}
		}
		var docs, pending int64
		if err := tx.QueryRow(ctx, `select (select docs from agentmem.message_words where user_id = $1 and lexeme = ''),
			(select count(*) from agentmem.message_words_pending where user_id = $1)`, user).Scan(&docs, &pending); err != nil {
			return err
		}
		if docs != 255 || pending != 0 {
			t.Errorf("after the fold: %d documents counted and %d pending, want 255 and 0", docs, pending)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// rowsRead is how many entries the indexes of table (and of its partitions, when partitioned by
// user) gave and rows its scans read, so far in tx's transaction.
func rowsRead(t *testing.T, tx pgx.Tx, table string) int64 {
	t.Helper()
	var n int64
	if err := tx.QueryRow(t.Context(), `select coalesce(sum(pg_stat_get_xact_tuples_returned(r.relid)), 0)::bigint
		from (select i.indexrelid as relid from pg_index i
		      where i.indrelid in (select $1::regclass union select relid from pg_partition_tree($1::regclass))
		      union all select relid from pg_partition_tree($1::regclass)) r`, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
