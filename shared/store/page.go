package store

import (
	"time"

	"github.com/google/uuid"
)

// Every listing (memories, sessions, jobs, a session's history, a user's history) reads one row
// more than its limit: the extra row says another page exists, and the page's last row is the
// key the next one continues after (exclusive).

// pageOf trims rows, read with a limit of limit + 1, to the page, and answers the key of the
// page's last row when a further row was read; nil on the last page.
func pageOf[R, K any](rows []R, limit int, key func(R) K) ([]R, *K) {
	if len(rows) <= limit {
		return rows, nil
	}
	rows = rows[:limit]
	k := key(rows[limit-1])
	return rows, &k
}

// afterArgs are the statement's arguments of a key ordered by (time, id): both nil (a first
// page) without one.
func afterArgs[K any](after *K, parts func(K) (time.Time, uuid.UUID)) (*time.Time, *uuid.UUID) {
	if after == nil {
		return nil, nil
	}
	t, id := parts(*after)
	return &t, &id
}
