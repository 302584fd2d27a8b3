package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// The maintenance jobs act on every user's rows whatever login the service connects as: a
// login that owns no table, member of the API roles as on Supabase, sweeps every expired row
// (and counts them in a dry run) and embeds every pending one.
func TestMaintenanceAsALoginThatOwnsNoTable(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	admin := storetest.Admin(t, db.URL)

	b := make([]byte, 6)
	_, _ = rand.Read(b)
	login, password := "agentmem_login_"+hex.EncodeToString(b), hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "create role "+login+" login password '"+password+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), db.URL)
		if err != nil {
			t.Log(err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "drop role if exists "+login); err != nil {
			t.Logf("drop role %s: %v", login, err)
		}
	})
	if _, err := admin.Exec(ctx, "grant agentmem_caller, service_role to "+login); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(login, password)
	st := storetest.OpenURL(t, u.String()) // closed before the role is dropped

	// Expired rows of two users: a session with its message, a memory, an idempotency record;
	// and a live memory without a vector.
	for _, user := range []uuid.UUID{uuid.New(), uuid.New()} {
		if _, err := admin.Exec(ctx, `
			with s as (
			  insert into agentmem.sessions (id, tenant_id, user_id, agent, expires_at)
			  values (gen_random_uuid(), 'acme', $1, 'default', now() - interval '1 minute') returning id)
			insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
			  token_estimate, expires_at)
			select s.id, 1, gen_random_uuid(), 'acme', $1, 'default', 'user', 'old', 1, now() - interval '1 minute'
			from s`, user); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec(ctx, `insert into agentmem.memories (tenant_id, user_id, agent, content, content_key, expires_at)
			values ('acme', $1, '', 'an old fact', 'old', now() - interval '1 minute'),
			       ('acme', $1, '', 'a pending fact', 'pending', now() + interval '1 hour')`, user); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec(ctx, `insert into agentmem.idempotency_keys (tenant_id, user_id, caller_role, function,
			key, request_hash, response_status, response_body, expires_at)
			values ('acme', $1, 'authenticated', 'commit-turn', 'k', '\x00', 201, '{}', now() - interval '1 minute')`,
			user); err != nil {
			t.Fatal(err)
		}
	}
	// Rate counters: one whose bucket is full again (swept), one taken just now (kept), taken
	// by this login, which owns no table: as service_role, whatever the login.
	if _, err := admin.Exec(ctx, `insert into agentmem.request_rates (tenant_id, user_id, tat)
		values ('acme', gen_random_uuid(), now() - interval '1 second')`); err != nil {
		t.Fatal(err)
	}
	if slot, err := st.TakeRequestSlot(ctx, store.RequestSlotParams{TenantID: "acme", UserID: uuid.NewString(),
		UserLimit: 5, Period: time.Hour}); err != nil || !slot.Taken {
		t.Fatalf("TakeRequestSlot as a login that owns no table: %+v, %v", slot, err)
	}
	want := memory.SweepCounts{Messages: 2, Memories: 2, Sessions: 2, IdempotencyKeys: 2, RequestRates: 1}

	dry, err := st.Sweep(ctx, store.SweepParams{DryRun: true, BatchSize: 100, Deadline: time.Now().Add(time.Minute)})
	if err != nil || dry.Deleted != want {
		t.Errorf("dry run: %+v, %v; want %+v", dry.Deleted, err, want)
	}
	res, err := st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute)})
	if err != nil || res.Deleted != want || res.More {
		t.Errorf("sweep: %+v, %v; want %+v", res, err, want)
	}
	var left int
	if err := admin.QueryRow(ctx, `select (select count(*) from agentmem.messages) + (select count(*) from agentmem.sessions)
		+ (select count(*) from agentmem.memories where expires_at <= now())
		+ (select count(*) from agentmem.idempotency_keys)
		+ (select count(*) from agentmem.request_rates where tat <= now())
		+ (select 1 - count(*) from agentmem.request_rates where tat > now())`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d expired rows left after the sweep", left)
	}

	embedded, err := embedPending(st, ctx, 100)
	if err != nil || embedded.Memories != 2 || embedded.More {
		t.Errorf("EmbedPending: %+v, %v; want the 2 pending memories embedded", embedded, err)
	}
	var pending int
	if err := admin.QueryRow(ctx, `select count(*) from agentmem.memories where embedding is null`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Errorf("%d memories still pending", pending)
	}
}

// On tables partitioned by user, each partition numbers its own rows: the sweep, the service's
// and the database's own (agentmem.sweep_expired), deletes the expired rows and none of the
// live rows that sit at the same place in other partitions.
func TestSweepOfPartitionedTablesKeepsLiveRows(t *testing.T) {
	t.Parallel()
	for _, sweeper := range []string{"store", "sweep_expired"} {
		t.Run(sweeper, func(t *testing.T) {
			t.Parallel()
			db := testdb.NewPartitioned(t, 4)
			ctx := context.Background()
			admin := storetest.Admin(t, db.URL)
			// The expired rows first: each is the first row of its partition, as is each of
			// the live rows of the users that follow in the other partitions.
			if _, err := admin.Exec(ctx, `
				insert into agentmem.sessions (id, user_id, agent, expires_at)
				values ('00000000-0000-0000-0000-000000000001', 'gone', 'bot', now() + interval '1 hour');
				insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
				values ('00000000-0000-0000-0000-000000000001', 1, 'm', 'gone', 'bot', 'user', 'old', 1, now() - interval '1 minute');
				insert into agentmem.idempotency_keys (user_id, caller_role, function, key, request_hash, response_status,
				  response_body, expires_at)
				values ('gone', 'authenticated', 'commit-turn', 'k', '\x00', 201, '{}', now() - interval '1 minute');
				insert into agentmem.sessions (id, user_id, agent, expires_at)
				select gen_random_uuid(), 'live-' || i, 'bot', now() + interval '1 hour' from generate_series(1, 16) i;
				insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
				select s.id, 1, 'm', s.user_id, 'bot', 'user', 'new', 1, now() + interval '1 hour'
				from agentmem.sessions s where s.user_id like 'live-%';
				insert into agentmem.idempotency_keys (user_id, caller_role, function, key, request_hash, response_status,
				  response_body, expires_at)
				select 'live-' || i, 'authenticated', 'commit-turn', 'k', '\x00', 201, '{}', now() + interval '1 hour'
				from generate_series(1, 16) i`); err != nil {
				t.Fatal(err)
			}
			var places int
			if err := admin.QueryRow(ctx, `select count(distinct tableoid) from agentmem.messages where ctid = '(0,1)'`).Scan(&places); err != nil || places < 2 {
				t.Fatalf("rows at (0,1) in %d partitions (%v): the test needs them in several", places, err)
			}
			if sweeper == "store" {
				st := storetest.Open(t, db)
				if _, err := st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute)}); err != nil {
					t.Fatal(err)
				}
			} else if _, err := admin.Exec(ctx, `select agentmem.sweep_expired()`); err != nil {
				t.Fatal(err)
			}
			var messages, keys, gone int
			if err := admin.QueryRow(ctx, `select
				(select count(*) from agentmem.messages where user_id like 'live-%'),
				(select count(*) from agentmem.idempotency_keys where user_id like 'live-%'),
				(select count(*) from agentmem.messages where user_id = 'gone')
				  + (select count(*) from agentmem.idempotency_keys where user_id = 'gone')`).Scan(&messages, &keys, &gone); err != nil {
				t.Fatal(err)
			}
			if messages != 16 || keys != 16 || gone != 0 {
				t.Errorf("after the sweep: %d of 16 live messages, %d of 16 live idempotency records, %d expired rows left",
					messages, keys, gone)
			}
		})
	}
}

// On tables partitioned by user, the sweep re-stamps the rows of another default retention
// and leaves alone those at the same place in other partitions (here rows of an expiry of
// their own, which have no default retention to re-stamp from).
func TestRestampOfPartitionedTablesKeepsOtherRows(t *testing.T) {
	t.Parallel()
	db := testdb.NewPartitioned(t, 4)
	ctx := t.Context()
	admin := storetest.Admin(t, db.URL)
	if _, err := admin.Exec(ctx, `
		insert into agentmem.sessions (id, user_id, agent, expires_at)
		values ('00000000-0000-0000-0000-000000000001', 'stamped', 'bot', now() + interval '1 day');
		insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at,
		  default_retention)
		values ('00000000-0000-0000-0000-000000000001', 1, 'm', 'stamped', 'bot', 'user', 'old', 1,
		  now() + interval '1 hour', interval '1 hour');
		insert into agentmem.sessions (id, user_id, agent, expires_at)
		select gen_random_uuid(), 'own-' || i, 'bot', now() + interval '1 day' from generate_series(1, 16) i;
		insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
		select s.id, 1, 'm', s.user_id, 'bot', 'user', 'new', 1, now() + interval '3 hours'
		from agentmem.sessions s where s.user_id like 'own-%'`); err != nil {
		t.Fatal(err)
	}
	var places int
	if err := admin.QueryRow(ctx, `select count(distinct tableoid) from agentmem.messages where ctid = '(0,1)'`).Scan(&places); err != nil || places < 2 {
		t.Fatalf("rows at (0,1) in %d partitions (%v): the test needs them in several", places, err)
	}
	st := storetest.Open(t, db)
	if _, err := st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute),
		DefaultRetention: 2 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	var restamped, kept int
	if err := admin.QueryRow(ctx, `select
		(select count(*) from agentmem.messages where user_id = 'stamped' and default_retention = interval '2 hours'
		   and expires_at > now() + interval '110 minutes'),
		(select count(*) from agentmem.messages where user_id like 'own-%' and default_retention is null
		   and expires_at > now() + interval '170 minutes')`).Scan(&restamped, &kept); err != nil {
		t.Fatal(err)
	}
	if restamped != 1 || kept != 16 {
		t.Errorf("after the sweep: %d of 1 message re-stamped, %d of 16 messages of their own expiry kept", restamped, kept)
	}
}

// A batch still running when the sweep's time is up, here waiting for a lock, is cut short
// before the caller's own deadline: the sweep answers, in time, with more: true, and the cut
// batch deleted nothing (its transaction rolled back); the next sweep deletes the rows.
func TestSweepCutsABatchThatOutlastsItsTime(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	admin := storetest.Admin(t, db.URL)
	if _, err := admin.Exec(ctx, `
		insert into agentmem.sessions (id, user_id, agent, expires_at)
		values ('00000000-0000-0000-0000-000000000001', 'held', 'bot', now() + interval '1 hour');
		insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
		select '00000000-0000-0000-0000-000000000001', g, 'm' || g, 'held', 'bot', 'user', 'old', 1, now() - interval '1 minute'
		from generate_series(1, 3) g`); err != nil {
		t.Fatal(err)
	}
	// Another transaction holds the rows that deleting the messages must change (their words
	// waiting to be counted), so the sweep's first batch waits.
	holder := storetest.Admin(t, db.URL)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var held int
	if err := tx.QueryRow(ctx, `select count(*) from (select 1 from agentmem.message_words_pending
		where user_id = 'held' for update) x`).Scan(&held); err != nil || held != 3 {
		t.Fatalf("held %d pending rows (%v), want 3", held, err)
	}
	st := storetest.Open(t, db)
	callCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	end, _ := callCtx.Deadline()
	res, err := st.Sweep(callCtx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Second)})
	if err != nil {
		t.Fatalf("sweep with a batch cut short: %v", err)
	}
	if !time.Now().Before(end) {
		t.Error("the sweep answered after its caller's deadline")
	}
	if !res.More || res.Deleted.Messages != 0 {
		t.Errorf("sweep with a batch cut short: %+v, want more and no message deleted", res)
	}
	var left int
	if err := admin.QueryRow(ctx, `select count(*) from agentmem.messages where user_id = 'held'`).Scan(&left); err != nil || left != 3 {
		t.Fatalf("%d messages left (%v), want 3", left, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute)})
	if err != nil || res.More || res.Deleted.Messages != 3 {
		t.Errorf("the next sweep: %+v, %v; want the 3 messages deleted", res, err)
	}
}

// A sweep whose time is up before it starts deletes and re-stamps nothing, and says more only
// when rows are left to delete or to re-stamp: a sweep of nothing never asks for another.
func TestSweepOutOfTimeSaysWhatIsLeft(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	admin := storetest.Admin(t, db.URL)
	st := storetest.Open(t, db)
	over := func(retention time.Duration) memory.SweepResult {
		t.Helper()
		res, err := st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(-time.Second), DefaultRetention: retention})
		if err != nil {
			t.Fatal(err)
		}
		if res.Batches != 0 || res.Deleted != (memory.SweepCounts{}) || res.Restamped != (memory.RestampCounts{}) {
			t.Errorf("a sweep out of time changed rows: %+v", res)
		}
		return res
	}
	if res := over(0); res.More {
		t.Errorf("a sweep of nothing out of time says more: %+v", res)
	}
	// A live row stamped under a default retention of a day: nothing to delete, one to
	// re-stamp when the default is another.
	if _, err := admin.Exec(ctx, `
		insert into agentmem.sessions (id, user_id, agent, expires_at, default_retention)
		values ('00000000-0000-0000-0000-000000000002', 'kept', 'bot', now() + interval '1 day', interval '1 day')`); err != nil {
		t.Fatal(err)
	}
	if res := over(24 * time.Hour); res.More {
		t.Errorf("nothing to delete or re-stamp, yet more: %+v", res)
	}
	if res := over(48 * time.Hour); !res.More {
		t.Errorf("a row to re-stamp is left, yet no more: %+v", res)
	}
	if _, err := admin.Exec(ctx, `
		insert into agentmem.idempotency_keys (user_id, caller_role, function, key, request_hash, response_status,
		  response_body, expires_at)
		values ('gone', 'authenticated', 'commit-turn', 'k', '\x00', 201, '{}', now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	if res := over(24 * time.Hour); !res.More {
		t.Errorf("an expired row is left, yet no more: %+v", res)
	}
}
