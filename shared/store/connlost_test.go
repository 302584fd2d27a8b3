package store_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// relay is a TCP relay in front of the test server, standing for the network or a pooler between
// the service and PostgreSQL: cut closes every connection through it, as a pooler that dies or a
// server that restarts does, and refuse makes it close new ones at once.
type relay struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   []net.Conn
	refused bool
}

func newRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, target: target}
	t.Cleanup(func() {
		ln.Close()
		r.cut()
	})
	go r.serve()
	return r
}

func (r *relay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		refused := r.refused
		r.mu.Unlock()
		if refused {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", r.target)
		if err != nil {
			c.Close()
			continue
		}
		r.mu.Lock()
		r.conns = append(r.conns, c, s)
		r.mu.Unlock()
		go func() { io.Copy(s, c); s.Close() }() //nolint:errcheck
		go func() { io.Copy(c, s); c.Close() }() //nolint:errcheck
	}
}

// cut closes every connection through the relay.
func (r *relay) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

func (r *relay) refuse(on bool) {
	r.mu.Lock()
	r.refused = on
	r.mu.Unlock()
}

// url is u with its host replaced by the relay's address.
func (r *relay) url(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.Host = r.ln.Addr().String()
	return p.String()
}

// wantUnavailable fails unless err is unavailable (HTTP's policy gives it its Retry-After).
func wantUnavailable(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("%s: %v (%T), want unavailable", what, err, err)
	}
}

// A connection that breaks under the store (the pooler died, the server restarted, the network
// dropped it), idle or in the middle of a transaction, makes the request unavailable, never an
// internal error, and writes nothing: the retry with the same Idempotency-Key stores the turn
// once, in order.
func TestConnectionLostIsUnavailable(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: breaks connections under the store (fault injection)")
	}
	db := testdb.New(t)
	dbURL, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := storetest.Admin(t, db.URL)
	var checkMu sync.Mutex

	for _, tt := range []struct {
		name string
		// fail breaks the store's only connection (r is the relay it goes through) and calls op,
		// which must answer unavailable.
		fail func(t *testing.T, r *relay, sc memory.Scope, op func() error)
	}{
		{"idle connection cut", func(t *testing.T, r *relay, sc memory.Scope, op func() error) {
			r.cut()
			wantUnavailable(t, "after the cut", op())
		}},
		{"pooler down", func(t *testing.T, r *relay, sc memory.Scope, op func() error) {
			r.refuse(true)
			r.cut()
			wantUnavailable(t, "while refused", op())
			r.refuse(false)
		}},
		{"connection cut mid-transaction", func(t *testing.T, r *relay, sc memory.Scope, op func() error) {
			// The user's lock held elsewhere stops the request inside its transaction; the cut comes
			// while the store waits for the server's answer.
			holder, err := pgx.Connect(ctx, db.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close(ctx)
			tx, err := holder.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx) //nolint:errcheck
			if _, err := tx.Exec(ctx, `select pg_advisory_xact_lock(hashtextextended($1::text, 7216))`, sc.UserID); err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			go func() { errc <- op() }()
			for waiting := false; !waiting; {
				checkMu.Lock()
				err := check.QueryRow(ctx, `select exists(select 1 from pg_locks l join pg_stat_activity a using (pid)
					where l.locktype = 'advisory' and not l.granted and a.application_name = $1)`, t.Name()).Scan(&waiting)
				checkMu.Unlock()
				if err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-errc:
					t.Fatalf("the request ended before the cut: %v", err)
				case <-time.After(10 * time.Millisecond):
				}
			}
			r.cut()
			wantUnavailable(t, "cut mid-transaction", <-errc)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRelay(t, dbURL.Host)
			u, err := url.Parse(r.url(t, db.URL))
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("application_name", t.Name())
			u.RawQuery = q.Encode()
			// One connection, so the request after the cut takes the one that was cut.
			st := storetest.OpenURL(t, u.String(), storetest.MaxConns(1))
			sc := storetest.Scope(memory.DefaultAgent)
			sid := uuid.New()
			commit := func(n string) store.CommitParams {
				return store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour,
					Messages:    []memory.NewMessage{{Role: memory.RoleUser, Content: "turn " + n}, {Role: memory.RoleAssistant, Content: "answer " + n}},
					Idempotency: &store.Idempotency{CallerRole: "authenticated", Function: "commit-turn", Key: "k" + n, RequestHash: []byte(n)}}
			}
			if _, _, err := commitTurn(st, ctx, commit("1")); err != nil {
				t.Fatal(err)
			}
			tt.fail(t, r, sc, func() error { _, _, err := commitTurn(st, ctx, commit("2")); return err })
			wantWorks(t, st)
			tt.fail(t, r, sc, func() error {
				_, err := getContext(st, ctx, store.ContextParams{Scope: sc, SessionID: sid, MaxMessages: 10})
				return err
			})
			wantWorks(t, st)

			res, _, err := commitTurn(st, ctx, commit("2"))
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if len(res.Messages) != 2 || res.Messages[0].Seq != 3 || res.Messages[1].Seq != 4 {
				t.Errorf("retried turn stored at %+v, want seqs 3 and 4", res.Messages)
			}
			checkMu.Lock()
			rows, err := check.Query(ctx, `select content from agentmem.messages where session_id = $1 order by seq`, sid)
			var got []string
			if err == nil {
				got, err = pgx.CollectRows(rows, pgx.RowTo[string])
			}
			checkMu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"turn 1", "answer 1", "turn 2", "answer 2"}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("stored %q, want %q", got, want)
			}
		})
	}
}

// wantWorks waits until the store answers again: the pool drops the broken connection and makes
// a new one.
func wantWorks(t *testing.T, st *store.Store) {
	t.Helper()
	var err error
	for i := 0; i < 5; i++ {
		if err = st.Ping(context.Background()); err == nil {
			return
		}
		wantUnavailable(t, "ping", err)
	}
	t.Fatalf("the store does not answer again: %v", err)
}
