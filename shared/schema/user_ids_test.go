package schema_test

import (
	"path"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/shared/schema"
)

// textUserIDs is the migration that makes user ids text.
const textUserIDs = "20261129400000_accept_any_user_id.sql"

// A database populated before user ids became text keeps every row, under the text of its UUID:
// the user still reads them under row-level security with the same token, the rate limiter's
// tenant-wide row becomes the empty id, and deleting the user in Supabase Auth still erases
// them through the auth.users trigger.
func TestTextUserIDsKeepExistingRows(t *testing.T) {
	t.Parallel()
	conn := emptyDatabase(t)
	ctx := t.Context()
	if err := schema.Bootstrap(ctx, conn); err != nil {
		t.Fatal(err)
	}
	migs, err := agentmem.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	apply := func(before bool) {
		t.Helper()
		for _, m := range migs {
			if (path.Base(m.Name) < textUserIDs) != before {
				continue
			}
			if _, err := conn.Exec(ctx, m.SQL, pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatalf("apply %s: %v", m.Name, err)
			}
		}
	}
	apply(true)

	user, session := uuid.New(), uuid.New()
	if _, err := conn.Exec(ctx, `
		insert into auth.users (id, aud, role, email) values ($1, 'authenticated', 'authenticated', 'a@example.com');
		insert into agentmem.sessions (id, tenant_id, user_id, agent, last_seq, expires_at)
		  values ($2, 't1', $1, 'default', 1, now() + interval '1 day');
		insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content, token_estimate, expires_at)
		  values ($2, 1, gen_random_uuid(), 't1', $1, 'default', 'user', 'hello', 1, now() + interval '1 day');
		insert into agentmem.memories (tenant_id, user_id, content, content_key, expires_at)
		  values ('t1', $1, 'likes tea', 'k', now() + interval '1 day');
		insert into agentmem.user_memory (tenant_id, user_id, key, value) values ('t1', $1, 'k', '{}');
		insert into agentmem.request_rates (tenant_id, user_id, tat)
		  values ('t1', '00000000-0000-0000-0000-000000000000', now()), ('t1', $1, now());
		insert into agentmem.cache_generations (owner, generation) values ($1, 1)`,
		pgx.QueryExecModeSimpleProtocol, user, session); err != nil {
		t.Fatal(err)
	}
	apply(false)

	for _, table := range []string{"sessions", "messages", "memories", "user_memory"} {
		if !exists(t, conn, `select 1 from agentmem.`+table+` where user_id = $1 and tenant_id = 't1'`, user.String()) {
			t.Errorf("agentmem.%s lost its row", table)
		}
	}
	if !exists(t, conn, `select 1 from agentmem.cache_generations where owner = $1`, user.String()) {
		t.Error("agentmem.cache_generations lost its row")
	}
	if !exists(t, conn, `select 1 from agentmem.request_rates where user_id = '' and tenant_id = 't1'`) ||
		exists(t, conn, `select 1 from agentmem.request_rates where user_id = '00000000-0000-0000-0000-000000000000'`) {
		t.Error("the tenant-wide rate row is not the empty user id")
	}

	// The user's own token, as PostgREST runs it, reads the rows.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	err = tx.QueryRow(ctx, `select set_config('role', 'authenticated', true),
		set_config('request.jwt.claims', $1, true)`, `{"sub":"`+user.String()+`","role":"authenticated","app_metadata":{"tenant_id":"t1"}}`).Scan(new(string), new(string))
	if err == nil {
		err = tx.QueryRow(ctx, `select count(*) from agentmem.messages`).Scan(&n)
	}
	_ = tx.Rollback(ctx)
	if err != nil || n != 1 {
		t.Fatalf("the user reads %d of their 1 message after the migration: %v", n, err)
	}

	if _, err := conn.Exec(ctx, `delete from auth.users where id = $1`, user); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"sessions", "messages", "memories", "user_memory"} {
		if exists(t, conn, `select 1 from agentmem.`+table+` where user_id = $1`, user.String()) {
			t.Errorf("agentmem.%s kept a row of the user Supabase Auth deleted", table)
		}
	}
}
