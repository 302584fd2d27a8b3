package store_test

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/store"
)

// Named prepared statements only where no transaction pooler listens by default: any other
// port, a pooler's own among them, gets statements sent unnamed, which every pooler takes.
func TestQueryExecModeByPort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		port uint16
		want pgx.QueryExecMode
	}{
		{5432, pgx.QueryExecModeCacheStatement},
		{54322, pgx.QueryExecModeCacheStatement},
		{6543, pgx.QueryExecModeCacheDescribe},
		{6432, pgx.QueryExecModeCacheDescribe},
		{6599, pgx.QueryExecModeCacheDescribe},
		{15432, pgx.QueryExecModeCacheDescribe},
	} {
		t.Run(fmt.Sprint(tc.port), func(t *testing.T) {
			if got := store.QueryExecMode(tc.port); got != tc.want {
				t.Errorf("port %d: %v, want %v", tc.port, got, tc.want)
			}
		})
	}
}
