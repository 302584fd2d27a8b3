package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// rateEnv is a database with a store over it and a superuser connection to look at counters.
type rateEnv struct {
	t     *testing.T
	db    testdb.DB
	st    *store.Store
	admin *pgx.Conn
}

func newRateEnv(t *testing.T) *rateEnv {
	t.Helper()
	e := storetest.New(t, storetest.MaxConns(8))
	return &rateEnv{t: t, db: e.DB, st: e.Store, admin: e.Admin(t)}
}

func (e *rateEnv) take(p store.RequestSlotParams) store.RequestSlot {
	e.t.Helper()
	slot, err := e.st.TakeRequestSlot(context.Background(), p)
	if err != nil {
		e.t.Fatalf("TakeRequestSlot: %v", err)
	}
	return slot
}

// tat is the counter's theoretical arrival time, zero when it has no row.
func (e *rateEnv) tat(tenant string, user string) time.Time {
	e.t.Helper()
	var tat time.Time
	err := e.admin.QueryRow(context.Background(),
		`select tat from agentmem.request_rates where tenant_id = $1 and user_id = $2`, tenant, user).Scan(&tat)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return tat
}

func (e *rateEnv) rows() int {
	e.t.Helper()
	var n int
	if err := e.admin.QueryRow(context.Background(), `select count(*) from agentmem.request_rates`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// A limit of n lets a burst of n through, refuses the next with the time until the bucket has
// room again, and lets one more through once that time has passed (the clock is moved by
// moving the counter back, so the test waits for nothing).
func TestRequestSlotBurstThenRefill(t *testing.T) {
	t.Parallel()
	e := newRateEnv(t)
	p := store.RequestSlotParams{TenantID: "acme", UserID: uuid.NewString(), UserLimit: 2, Period: time.Minute}
	for i := range 2 {
		if s := e.take(p); !s.Taken {
			t.Fatalf("request %d of a burst of 2 refused: %+v", i+1, s)
		}
	}
	refused := e.take(p)
	// Two slots of 30 s each were taken just now: the first frees 30 s after the burst.
	if refused.Taken || refused.LimitedBy != "user" || refused.RetryAfter <= 20*time.Second || refused.RetryAfter > 30*time.Second {
		t.Fatalf("third request: %+v; want refused by the user's limit, with a retry in (20s, 30s]", refused)
	}
	before := e.tat("acme", p.UserID)
	if again := e.take(p); again.Taken {
		t.Fatal("a request right after a refused one was let through")
	}
	if after := e.tat("acme", p.UserID); !after.Equal(before) {
		t.Errorf("refused requests moved the counter from %v to %v", before, after)
	}
	if _, err := e.admin.Exec(context.Background(), `update agentmem.request_rates
		set tat = tat - make_interval(secs => $3::float8) where tenant_id = $1 and user_id = $2`,
		"acme", p.UserID, refused.RetryAfter.Seconds()); err != nil {
		t.Fatal(err)
	}
	if s := e.take(p); !s.Taken {
		t.Fatalf("after Retry-After has passed: %+v; want the request let through", s)
	}
	if s := e.take(p); s.Taken {
		t.Fatal("the freed slot was taken twice")
	}
	// Another user of the same tenant has a counter of their own.
	if s := e.take(store.RequestSlotParams{TenantID: "acme", UserID: uuid.NewString(), UserLimit: 2, Period: time.Minute}); !s.Taken {
		t.Fatalf("another user: %+v", s)
	}
	// The same user id in another tenant too: a user's counter is keyed by (tenant, user).
	if s := e.take(store.RequestSlotParams{TenantID: "globex", UserID: p.UserID, UserLimit: 2, Period: time.Minute}); !s.Taken {
		t.Fatalf("the same user in another tenant: %+v", s)
	}
}

// A request counts against its user and its tenant together or against neither: refused by
// one counter, it takes nothing from the other.
func TestRequestSlotAllOrNothing(t *testing.T) {
	t.Parallel()
	e := newRateEnv(t)
	nobody := uuid.Nil
	a, b := uuid.New(), uuid.New()
	pa := store.RequestSlotParams{TenantID: "acme", UserID: a.String(), UserLimit: 2, TenantLimit: 3, Period: time.Minute}
	pb := pa
	pb.UserID = b.String()
	for range 2 {
		if s := e.take(pa); !s.Taken {
			t.Fatalf("user a within both limits: %+v", s)
		}
	}
	tenantBefore := e.tat("acme", nobody.String())
	if s := e.take(pa); s.Taken || s.LimitedBy != "user" {
		t.Fatalf("user a over its own limit: %+v; want refused by the user's limit", s)
	}
	if after := e.tat("acme", nobody.String()); !after.Equal(tenantBefore) {
		t.Errorf("a request refused by the user's limit moved the tenant's counter from %v to %v", tenantBefore, after)
	}
	// The tenant has 1 slot left, not 0: b takes it, then the tenant is full.
	if s := e.take(pb); !s.Taken {
		t.Fatalf("user b, the tenant's third request: %+v", s)
	}
	userBefore := e.tat("acme", b.String())
	s := e.take(pb)
	if s.Taken || s.LimitedBy != "tenant" || s.RetryAfter <= 0 || s.RetryAfter > 20*time.Second {
		t.Fatalf("user b, the tenant's fourth request: %+v; want refused by the tenant's limit, retry in (0, 20s]", s)
	}
	if after := e.tat("acme", b.String()); !after.Equal(userBefore) {
		t.Errorf("a request refused by the tenant's limit moved the user's counter from %v to %v", userBefore, after)
	}
	// Other tenants and users without a tenant are not counted against acme.
	if s := e.take(store.RequestSlotParams{TenantID: "globex", UserID: b.String(), UserLimit: 2, TenantLimit: 3, Period: time.Minute}); !s.Taken {
		t.Fatalf("another tenant: %+v", s)
	}
	if s := e.take(store.RequestSlotParams{UserID: b.String(), UserLimit: 2, TenantLimit: 3, Period: time.Minute}); !s.Taken {
		t.Fatalf("no tenant: %+v", s)
	}
	if got := e.tat("", nobody.String()); !got.IsZero() {
		t.Errorf("the tenant-less users got a tenant counter: %v", got)
	}
}

// Without a limit nothing is counted and nothing is written.
func TestRequestSlotWithoutLimits(t *testing.T) {
	t.Parallel()
	e := newRateEnv(t)
	for _, p := range []store.RequestSlotParams{
		{TenantID: "acme", UserID: uuid.NewString(), Period: time.Minute},
		{TenantID: "", UserID: uuid.NewString(), TenantLimit: 1, Period: time.Minute},
		{TenantID: "acme", UserID: uuid.NewString(), UserLimit: 1, TenantLimit: 1},
	} {
		for range 3 {
			if s := e.take(p); !s.Taken {
				t.Fatalf("%+v: %+v", p, s)
			}
		}
	}
	if n := e.rows(); n != 0 {
		t.Errorf("%d counters written without a limit", n)
	}
}

// Containers share the counters: requests racing through two pools (two Lambda containers)
// take exactly the limit between them.
func TestRequestSlotsAcrossContainers(t *testing.T) {
	t.Parallel()
	e := newRateEnv(t)
	other := storetest.Open(t, e.db, storetest.MaxConns(8))
	stores := []*store.Store{e.st, other}
	const limit, racers = 5, 16
	p := store.RequestSlotParams{TenantID: "acme", UserID: uuid.NewString(), UserLimit: limit, TenantLimit: limit + 1, Period: time.Minute}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		taken   int
		refused int
		errs    []error
	)
	start := make(chan struct{})
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, err := stores[i%2].TakeRequestSlot(context.Background(), p)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case s.Taken:
				taken++
			default:
				refused++
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 || taken != limit || refused != racers-limit {
		t.Fatalf("%d taken, %d refused, errors %v; want %d and %d", taken, refused, errs, limit, racers-limit)
	}
}

// No client role can read, write or take slots: the table grants nothing to anon or
// authenticated and row-level security has no permissive policy, only one that denies them;
// only service_role executes the
// function (and may read and delete counters, for the sweep).
func TestRequestRatesAreClosedToClients(t *testing.T) {
	t.Parallel()
	e := newRateEnv(t)
	ctx := context.Background()
	var rls bool
	var policies int
	if err := e.admin.QueryRow(ctx, `select c.relrowsecurity,
		(select count(*) from pg_policies p where p.schemaname = 'agentmem' and p.tablename = 'request_rates'
		   and p.permissive = 'PERMISSIVE')
		from pg_class c where c.oid = 'agentmem.request_rates'::regclass`).Scan(&rls, &policies); err != nil {
		t.Fatal(err)
	}
	if !rls || policies != 0 {
		t.Errorf("row-level security %v with %d permissive policies; want on with none", rls, policies)
	}
	take := `select * from agentmem.take_request_slot('acme', gen_random_uuid()::text, 5, 5, 60000)`
	for _, tc := range []struct {
		role    string
		sql     string
		allowed bool
	}{
		{"anon", `select count(*) from agentmem.request_rates`, false},
		{"anon", `insert into agentmem.request_rates values ('acme', gen_random_uuid(), now())`, false},
		{"anon", take, false},
		{"authenticated", `select count(*) from agentmem.request_rates`, false},
		{"authenticated", `insert into agentmem.request_rates values ('acme', gen_random_uuid(), now())`, false},
		{"authenticated", `update agentmem.request_rates set tat = now()`, false},
		{"authenticated", `delete from agentmem.request_rates`, false},
		{"authenticated", take, false},
		{"service_role", `insert into agentmem.request_rates values ('acme', gen_random_uuid(), now())`, false},
		{"service_role", `update agentmem.request_rates set tat = now()`, false},
		{"service_role", take, true},
		{"service_role", `select count(*) from agentmem.request_rates`, true},
		{"service_role", `delete from agentmem.request_rates where tat <= now()`, true},
	} {
		t.Run(tc.role+" "+tc.sql, func(t *testing.T) {
			tx, err := e.admin.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx) //nolint:errcheck
			if _, err := tx.Exec(ctx, "set local role "+tc.role); err != nil {
				t.Fatal(err)
			}
			_, err = tx.Exec(ctx, tc.sql)
			var pgErr *pgconn.PgError
			switch {
			case tc.allowed && err != nil:
				t.Errorf("refused: %v", err)
			case !tc.allowed && (!errors.As(err, &pgErr) || pgErr.Code != "42501"):
				t.Errorf("error %v; want permission denied (42501)", err)
			}
		})
	}
}

// BenchmarkTakeRequestSlot measures one slot taken (one round trip) beside a bare round trip
// of the same pool (Ping), for a user's limit alone and with a tenant's.
func BenchmarkTakeRequestSlot(b *testing.B) {
	st := storetest.New(b, storetest.MaxConns(4)).Store
	ctx := context.Background()
	b.Run("ping", func(b *testing.B) {
		for range b.N {
			if err := st.Ping(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name   string
		tenant int
	}{{"user", 0}, {"user+tenant", 1_000_000}} {
		b.Run(tc.name, func(b *testing.B) {
			p := store.RequestSlotParams{TenantID: "acme-" + tc.name, UserID: uuid.NewString(), UserLimit: 1_000_000,
				TenantLimit: tc.tenant, Period: time.Minute}
			for range b.N {
				if s, err := st.TakeRequestSlot(ctx, p); err != nil || !s.Taken {
					b.Fatalf("%+v, %v", s, err)
				}
			}
		})
	}
}
