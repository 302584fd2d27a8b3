package store

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/testdb"
)

// Deleting a user from auth.users while a transaction of that user is open (begun as every
// request's is, with the user's lock in shared mode) waits for it, then erases what it wrote
// too: a commit cannot slip a row in behind the erasure.
func TestAuthUserDeletionWaitsForTheUsersTransactions(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	st, err := Open(ctx, Config{DatabaseURL: db.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	connect := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, db.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	admin, deleter := connect(), connect()
	sc := memory.Scope{UserID: uuid.NewString(), Agent: memory.DefaultAgent}
	if _, err := admin.Exec(ctx, `insert into auth.users (id, aud, role) values ($1, 'authenticated', 'authenticated')`,
		sc.UserID); err != nil {
		t.Fatal(err)
	}
	deleterPID := deleter.PgConn().PID()

	deleted := make(chan error, 1)
	err = st.inScope(ctx, sc, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `insert into agentmem.user_memory (tenant_id, user_id, key, value)
			values ('', $1, 'city', '{"name": "Porto"}')`, sc.UserID); err != nil {
			return err
		}
		go func() {
			_, err := deleter.Exec(ctx, `delete from auth.users where id = $1`, sc.UserID)
			deleted <- err
		}()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			select {
			case err := <-deleted:
				t.Errorf("the deletion finished (error %v) while a transaction of the user was open", err)
				return nil
			default:
			}
			var waiting bool
			if err := admin.QueryRow(ctx, `select exists (select 1 from pg_stat_activity
				where pid = $1 and wait_event_type = 'Lock' and wait_event = 'advisory')`, deleterPID).Scan(&waiting); err != nil {
				return err
			}
			if waiting {
				return nil
			}
			if time.Now().After(deadline) {
				t.Error("the deletion never waited for the user's lock")
				return nil
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}
	if err := <-deleted; err != nil {
		t.Fatalf("delete from auth.users: %v", err)
	}
	var left int
	if err := admin.QueryRow(ctx, `select count(*) from agentmem.user_memory where user_id = $1`, sc.UserID).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d rows committed by the user's transaction survived the deletion", left)
	}
}
