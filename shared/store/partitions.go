package store

import (
	"fmt"
	"strings"
)

// insertedSQL is what an upsert into agentmem.<table> (aliased alias) returns to say that it
// inserted its row rather than updated one; same is the condition, on alias p, that finds the
// row. On the migrations' layout it is xmax = 0, which a freshly inserted row has and an
// updated one has not. An insert through a partitioned parent (agentmem.partition_by_user)
// cannot return a system column, so there it is whether the statement's snapshot holds no such
// row. That alone would count as inserted a row another transaction inserted while the
// statement ran; so the upsert comes after upsertLockSQL for the row's key, in the same
// transaction: its snapshot, taken once the lock is held, holds the row of every upsert that
// held the lock before.
func insertedSQL(alias, table, same string) string {
	return fmt.Sprintf(`case when %[1]s.tableoid = 'agentmem.%[2]s'::regclass then %[1]s.xmax = 0
		else not exists (select 1 from agentmem.%[2]s p where %[3]s) end`, alias, table, same)
}

// upsertLockSQL takes, until the transaction ends, the lock of one row's key ($1, from
// upsertLockKey): a statement of its own, before the upsert, so that the upsert's snapshot comes
// after it (see insertedSQL). Upserts of one key wait on each other's row anyway; the lock adds
// no waiting between different keys.
const upsertLockSQL = `select pg_advisory_xact_lock(hashtextextended($1::text, 7217))`

// upsertLockKey is the key of upsertLockSQL for the row of agentmem.<table> with the key parts:
// each part prefixed with its length, so that no two keys run together.
func upsertLockKey(table string, parts ...string) string {
	var b strings.Builder
	b.WriteString(table)
	for _, p := range parts {
		fmt.Fprintf(&b, "/%d:%s", len(p), p)
	}
	return b.String()
}
