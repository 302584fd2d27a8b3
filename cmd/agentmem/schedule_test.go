package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmem/agentmem/shared/testdb"
)

// addExpiredRows stores, for a new user, n expired sessions with one message each, n expired
// memories, one expired idempotency record, and one live memory; it returns the user.
func addExpiredRows(t *testing.T, conn *pgx.Conn, n int) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	user := uuid.New()
	if _, err := conn.Exec(ctx, `
		with s as (
		  insert into agentmem.sessions (id, tenant_id, user_id, agent, expires_at)
		  select gen_random_uuid(), 'acme', $1, 'a' || i, now() - interval '1 minute' from generate_series(1, $2::int) i
		  returning id, agent)
		insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
		  token_estimate, expires_at)
		select s.id, 1, gen_random_uuid(), 'acme', $1, s.agent, 'user', 'old', 1, now() - interval '1 minute' from s`,
		user, n); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `
		insert into agentmem.memories (tenant_id, user_id, agent, content, content_key, expires_at)
		select 'acme', $1::uuid, '', 'an old fact ' || i, 'old' || i, now() - interval '1 minute' from generate_series(1, $2::int) i
		union all
		select 'acme', $1::uuid, '', 'a live fact', 'live', now() + interval '1 hour'`, user, n); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `insert into agentmem.idempotency_keys (tenant_id, user_id, caller_role, function,
		key, request_hash, response_status, response_body, expires_at)
		values ('acme', $1, 'authenticated', 'commit-turn', 'k', '\x00', 201, '{}', now() - interval '1 minute')`,
		user); err != nil {
		t.Fatal(err)
	}
	return user
}

// rowsOf counts the user's rows: expired ones (sessions, messages, memories, idempotency
// records) and live memories.
func rowsOf(t *testing.T, conn *pgx.Conn, user uuid.UUID) (expired, live int) {
	t.Helper()
	if err := conn.QueryRow(context.Background(), `select
		(select count(*) from agentmem.sessions where user_id = $1 and expires_at <= now())
		+ (select count(*) from agentmem.messages where user_id = $1 and expires_at <= now())
		+ (select count(*) from agentmem.memories where user_id = $1 and expires_at <= now())
		+ (select count(*) from agentmem.idempotency_keys where user_id = $1 and expires_at <= now()),
		(select count(*) from agentmem.memories where user_id = $1 and expires_at > now())`, user).Scan(&expired, &live); err != nil {
		t.Fatal(err)
	}
	return expired, live
}

// agentmem.sweep_expired, what the pg_cron job runs, deletes expired rows in bounded batches,
// says when it left some, keeps live rows, refuses bad bounds, and is not for API users.
func TestSweepExpiredInTheDatabase(t *testing.T) {
	ctx := context.Background()
	conn := commandDB(t)
	user := addExpiredRows(t, conn, 3)

	t.Run("bounded", func(t *testing.T) {
		var out map[string]any
		if err := conn.QueryRow(ctx, "select agentmem.sweep_expired(1, 2)").Scan(&out); err != nil {
			t.Fatal(err)
		}
		if out["more"] != true {
			t.Errorf("sweep of 2 batches of 1 row over 3 expired rows per kind: %v, want more", out)
		}
		deleted := out["deleted"].(map[string]any)
		if deleted["messages"] != 2.0 || deleted["memories"] != 2.0 {
			t.Errorf("deleted %v, want 2 messages and 2 memories", deleted)
		}
	})
	t.Run("the rest", func(t *testing.T) {
		var out map[string]any
		if err := conn.QueryRow(ctx, "select agentmem.sweep_expired()").Scan(&out); err != nil {
			t.Fatal(err)
		}
		if out["more"] != false {
			t.Errorf("second sweep: %v, want no more", out)
		}
		if expired, live := rowsOf(t, conn, user); expired != 0 || live != 1 {
			t.Errorf("after the sweeps: %d expired rows, %d live memories; want 0 and 1", expired, live)
		}
	})
	t.Run("bad bounds", func(t *testing.T) {
		addExpiredRows(t, conn, 1)
		var pgErr *pgconn.PgError
		_, err := conn.Exec(ctx, "select agentmem.sweep_expired(0, 1)")
		if !errors.As(err, &pgErr) || pgErr.Code != "22023" {
			t.Errorf("sweep_expired(0, 1): %v, want 22023", err)
		}
	})
	for _, role := range []string{"anon", "authenticated"} {
		for _, call := range []string{"select agentmem.sweep_expired()", "select agentmem.schedule_sweep()", "select agentmem.unschedule_sweep()"} {
			t.Run(role+" "+call, func(t *testing.T) {
				tx, err := conn.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(ctx) //nolint:errcheck
				if _, err := tx.Exec(ctx, "set local role "+role); err != nil {
					t.Fatal(err)
				}
				var pgErr *pgconn.PgError
				if _, err = tx.Exec(ctx, call); !errors.As(err, &pgErr) || pgErr.Code != "42501" {
					t.Errorf("%v, want permission denied", err)
				}
			})
		}
	}
}

// pgCronReady says whether pg_cron can run jobs on the server at url: installed and preloaded.
func pgCronReady(t *testing.T, url string) bool {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ok bool
	if err := conn.QueryRow(context.Background(), `select
		exists (select 1 from pg_available_extensions where name = 'pg_cron')
		and current_setting('shared_preload_libraries') ~ 'pg_cron'`).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// showsNoJob checks that `agentmem schedule --show` answers {"installed": false}, not null.
func showsNoJob(t *testing.T, when string) {
	t.Helper()
	out, err := stdoutOf(t, func() error { return schedule(context.Background(), []string{"--show"}) })
	if err != nil || strings.TrimSpace(out) != "{\n  \"installed\": false\n}" {
		t.Errorf("schedule --show %s: %q, %v; want {\"installed\": false}", when, out, err)
	}
}

// With no job installed (a database without the cron schema, whether or not the server offers
// pg_cron), --show says so in JSON rather than printing null.
func TestScheduleShowWithoutAJob(t *testing.T) {
	commandDB(t)
	showsNoJob(t, "in a database without a job")
}

// Without pg_cron, `agentmem schedule` says what to do and changes nothing; --show and
// --remove find no job.
func TestScheduleWithoutPgCron(t *testing.T) {
	if pgCronReady(t, testdb.ServerURL(t)) {
		t.Skip("this server runs pg_cron; TestScheduleWithPgCron covers it")
	}
	ctx := context.Background()
	conn := commandDB(t)
	err := schedule(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "pg_cron") {
		t.Fatalf("schedule without pg_cron: %v, want an error naming pg_cron", err)
	}
	var n int
	if err := conn.QueryRow(ctx, "select count(*) from pg_extension where extname = 'pg_cron'").Scan(&n); err != nil || n != 0 {
		t.Errorf("pg_cron extensions after a refused schedule: %d, %v", n, err)
	}
	if err := schedule(ctx, []string{"--remove"}); err != nil {
		t.Errorf("schedule --remove without pg_cron: %v", err)
	}
	showsNoJob(t, "without pg_cron")
	if err := schedule(ctx, []string{"--batch-size", "0"}); err == nil {
		t.Error("schedule --batch-size 0: no error")
	}
}

// With pg_cron, `agentmem schedule` installs a job that sweeps expired rows, replaces it when
// run again, and removes it with --remove. pg_cron runs jobs only in the database its
// cron.database_name names, so this test needs such a database, in which it may apply the
// migrations: AGENTMEM_TEST_CRON_DATABASE_URL (scripts/test-pg-cron.sh starts a private server
// with pg_cron and runs this test against it).
func TestScheduleWithPgCron(t *testing.T) {
	url := os.Getenv("AGENTMEM_TEST_CRON_DATABASE_URL")
	if url == "" {
		t.Skip("AGENTMEM_TEST_CRON_DATABASE_URL is not set (scripts/test-pg-cron.sh sets it)")
	}
	if !pgCronReady(t, url) {
		t.Fatalf("AGENTMEM_TEST_CRON_DATABASE_URL names a server without pg_cron preloaded")
	}
	ctx := context.Background()
	if err := testdb.Migrate(ctx, url, true); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DATABASE_URL", url)
	t.Setenv("LOG_LEVEL", "error")
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	user := addExpiredRows(t, conn, 3)

	if err := schedule(ctx, []string{"--cron", "1 seconds", "--batch-size", "2"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := schedule(context.Background(), []string{"--remove"}); err != nil {
			t.Error(err)
		}
	})
	if err := schedule(ctx, []string{"--cron", "1 seconds", "--batch-size", "2"}); err != nil {
		t.Fatalf("scheduling again: %v", err)
	}
	var jobs int
	var command string
	if err := conn.QueryRow(ctx, "select count(*), min(command) from cron.job where jobname = $1", sweepJobName).Scan(&jobs, &command); err != nil {
		t.Fatal(err)
	}
	if jobs != 1 || command != "select agentmem.sweep_expired(2, 20)" {
		t.Fatalf("after scheduling twice: %d jobs, command %q; want one running sweep_expired(2, 20)", jobs, command)
	}

	// Wait for pg_cron to run it (every second); give up after a minute.
	var status, message string
	for deadline := time.Now().Add(time.Minute); ; {
		err := conn.QueryRow(ctx, `select d.status, coalesce(d.return_message, '') from cron.job_run_details d
			join cron.job j using (jobid) where j.jobname = $1 and d.status in ('succeeded', 'failed')
			order by d.runid desc limit 1`, sweepJobName).Scan(&status, &message)
		if err == nil {
			break
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("pg_cron ran no sweep within a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if status != "succeeded" {
		t.Fatalf("the scheduled sweep %s: %s", status, message)
	}
	if expired, live := rowsOf(t, conn, user); expired != 0 || live != 1 {
		t.Errorf("after the scheduled sweep: %d expired rows, %d live memories; want 0 and 1", expired, live)
	}

	if err := schedule(ctx, []string{"--remove"}); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "select count(*) from cron.job where jobname = $1", sweepJobName).Scan(&jobs); err != nil || jobs != 0 {
		t.Errorf("after --remove: %d jobs, %v", jobs, err)
	}
	showsNoJob(t, "after --remove")
}
