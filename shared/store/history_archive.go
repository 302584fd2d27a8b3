package store

import (
	"fmt"
	"strings"
)

// A history with IncludeArchived reads each statement of the live table again from
// agentmem.messages_archive, with the same columns, filters and limit, and merges the two in
// the page's order: the archive holds a session's older messages (seqs below the live ones,
// never the same message twice), so the merged page is the session's history as if nothing had
// moved. Statements are derived, not written twice, so that a filter added to the live
// statement holds for the archive too.

// archiveOf is q, a statement of agentmem.messages, reading agentmem.messages_archive instead.
func archiveOf(q string) string {
	const live, archive = "agentmem.messages\n", "agentmem.messages_archive\n"
	if !strings.Contains(q, live) {
		panic("store: a history statement does not read agentmem.messages")
	}
	return strings.Replace(q, live, archive, 1)
}

// direction is the SQL of an order.
func direction(newest bool) string {
	if newest {
		return "desc"
	}
	return "asc"
}

// historyWithArchive is a page statement of a session's history (historySQL, limit $5) over
// both tables.
func historyWithArchive(q string, newest bool) string {
	return fmt.Sprintf(`select * from ((%s) union all (%s)) m order by seq %s limit $5`, q, archiveOf(q), direction(newest))
}

// userHistoryWithArchive is a page statement of a user's history (userHistorySQL, limit $7)
// over both tables.
func userHistoryWithArchive(q string, newest bool) string {
	d := direction(newest)
	return fmt.Sprintf(`select * from ((%s) union all (%s)) m order by created_at %[3]s, session_id %[3]s, seq %[3]s limit $7`,
		q, archiveOf(q), d)
}

// countWithArchive is a count statement of a history over both tables.
func countWithArchive(q string) string {
	return fmt.Sprintf(`select (%s) + (%s)`, q, archiveOf(q))
}
