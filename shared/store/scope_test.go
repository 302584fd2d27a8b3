package store

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/testdb"
)

// Both ways of running as a user, the transaction and the one-round-trip batch, must leave
// row-level security in charge: a query that forgets the owner filter still sees only the
// caller's rows, and nothing of the role or claims outlives the request on the connection.
func TestScopedReadsAndTransactionsRunUnderRLS(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	st, err := Open(ctx, Config{DatabaseURL: db.URL, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	a := memory.Scope{UserID: uuid.NewString(), Agent: memory.DefaultAgent}
	b := memory.Scope{UserID: uuid.NewString(), Agent: memory.DefaultAgent}
	for _, sc := range []memory.Scope{a, b, b} {
		if _, _, err := st.CommitTurn(ctx, CommitParams{Scope: sc, SessionID: uuid.New(), TTL: 3600e9,
			Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "hello"}}}); err != nil {
			t.Fatal(err)
		}
	}
	const unfiltered = `select count(*), current_user::text from agentmem.messages`

	var n int
	var role string
	if err := st.batchInScope(ctx, a, func(batch *pgx.Batch) {
		batch.Queue(unfiltered).QueryRow(func(row pgx.Row) error { return row.Scan(&n, &role) })
	}); err != nil {
		t.Fatal(err)
	}
	if n != 1 || role != CallerRole {
		t.Errorf("batch as A: %d rows as %s, want 1 as %s", n, role, CallerRole)
	}
	if err := st.inScope(ctx, b, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, unfiltered).Scan(&n, &role)
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2 || role != CallerRole {
		t.Errorf("transaction as B: %d rows as %s, want 2 as %s", n, role, CallerRole)
	}
	// The one pooled connection is back to its own role with no claims.
	var claims *string
	if err := st.pool.QueryRow(ctx, `select count(*), current_user::text,
		nullif(current_setting('request.jwt.claims', true), '') from agentmem.messages`).Scan(&n, &role, &claims); err != nil {
		t.Fatal(err)
	}
	if n != 3 || role == CallerRole || claims != nil {
		t.Errorf("after the requests: %d rows as %s with claims %v; the settings leaked", n, role, claims)
	}
}
