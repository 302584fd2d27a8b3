package store

import "fmt"

// insertedSQL is what an upsert into agentmem.<table> (aliased alias) returns to say that it
// inserted its row rather than updated one; same is the condition, on alias p, that finds the
// row. On the migrations' layout it is xmax = 0, which a freshly inserted row has and an
// updated one has not. An insert through a partitioned parent (agentmem.partition_by_user)
// cannot return a system column, so there it is whether the statement's snapshot holds no such
// row: the same answer, but for a row another transaction inserted while the statement ran,
// which it counts as inserted.
func insertedSQL(alias, table, same string) string {
	return fmt.Sprintf(`case when %[1]s.tableoid = 'agentmem.%[2]s'::regclass then %[1]s.xmax = 0
		else not exists (select 1 from agentmem.%[2]s p where %[3]s) end`, alias, table, same)
}
