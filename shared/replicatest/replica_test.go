package replicatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/service"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/testdb"
)

// The test's settings, all set by scripts/replica.sh (make test-replica).
const (
	// envCtl is the script the test runs to pause, resume and kill the replica.
	envCtl = "AGENTMEM_REPLICA_CTL"
	// envPrimary is the superuser URL of the private primary the script started.
	envPrimary = "AGENTMEM_REPLICA_PRIMARY_URL"
	// envReplica is the superuser URL of its streaming replica.
	envReplica = "AGENTMEM_REPLICA_URL"
)

const (
	secret = "test-secret-with-at-least-32-characters-long"
	dbName = "agentmem_replica"
	// clients is the number of concurrent clients of each ledger.
	clients = 8
	// maxLag and checkInterval are the service's REPLICA_MAX_LAG and REPLICA_CHECK_INTERVAL.
	maxLag        = 2 * time.Second
	checkInterval = 100 * time.Millisecond
)

// TestReadReplicas runs the service with DATABASE_READ_URL against a primary and a real
// streaming replica of it, through the HTTP handler:
//
//   - answers to writes carry a position; a malformed one sent back is a 400 naming the header;
//   - a read served by the replica runs under row-level security as on the primary;
//   - with the replica's replay paused, clients that commit turns and read their sessions with
//     the position see every acknowledged turn in every read, while the replica itself lacks
//     some of them;
//   - with replay running, the same ledger is as exact, and some of its reads are served by the
//     replica;
//   - a client that sends no position sees its own writes through the same process;
//   - killing the replica (pg_ctl stop -m immediate) under the ledger costs no request;
//   - a read sent to a replica lost since its last check is answered by the primary, and the
//     replica is left out of the next reads.
//
// It needs servers it may pause and kill: scripts/replica.sh (make test-replica) starts them and
// runs it; without them it is skipped.
func TestReadReplicas(t *testing.T) {
	ctl, primaryURL, replicaURL := os.Getenv(envCtl), os.Getenv(envPrimary), os.Getenv(envReplica)
	if ctl == "" || primaryURL == "" || replicaURL == "" {
		t.Skipf("the read replica test pauses and kills its own streaming replica: run it with make test-replica, "+
			"which starts a primary and a replica (%s, %s and %s unset)", envCtl, envPrimary, envReplica)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	admin, err := pgx.Connect(ctx, primaryURL)
	if err != nil {
		t.Fatalf("connect to the primary: %v", err)
	}
	for _, q := range []string{"drop database if exists " + dbName + " with (force)", "create database " + dbName} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	admin.Close(ctx)
	primaryDB, replicaDB := testdb.URLOf(primaryURL, dbName), testdb.URLOf(replicaURL, dbName)
	if err := testdb.Migrate(ctx, primaryDB, true); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	waitReplayed(ctx, t, primaryDB, replicaDB)

	cfg, err := config.Load(func(k string) string {
		return map[string]string{
			"DATABASE_URL": primaryDB, "DATABASE_READ_URL": replicaDB, "SUPABASE_JWT_SECRET": secret,
			"REPLICA_MAX_LAG": maxLag.String(), "REPLICA_CHECK_INTERVAL": checkInterval.String(),
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	hs := httptest.NewServer(svc.Server.Mux())
	defer hs.Close()
	st := svc.Store
	waitInUse(ctx, t, hs.URL, st)

	t.Run("position", func(t *testing.T) {
		c := newClient(t, hs.URL, 0, true)
		if err := c.commit(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := store.ParsePosition(c.position); err != nil {
			t.Fatalf("commit-turn's %s = %q: %v", httpapi.PositionHeader, c.position, err)
		}
		for _, bad := range []string{"0/16B3748", "00000000016b374", "not a position at all", "FFFFFFFFFFFFFFFFF"} {
			c.position = bad
			status, _, body, err := c.post(ctx, "get-context", map[string]any{"session_id": c.session.String()}, "")
			if err != nil {
				t.Fatal(err)
			}
			if status != http.StatusBadRequest || !strings.Contains(string(body), httpapi.PositionHeader) ||
				!strings.Contains(string(body), `"invalid_request"`) {
				t.Errorf("%s: %q: %d %s; want 400 invalid_request naming the header", httpapi.PositionHeader, bad, status, body)
			}
		}
	})

	t.Run("row-level security", func(t *testing.T) {
		owner, other := newClient(t, hs.URL, 0, true), newClient(t, hs.URL, 1, true)
		if err := owner.commit(ctx, 0); err != nil {
			t.Fatal(err)
		}
		waitReplayed(ctx, t, primaryDB, replicaDB)
		before := st.ReadStats()
		owned := owner.readContext(ctx)
		other.position = owner.position
		otherSession := other.session
		other.session = owner.session // the owner's session, read by another user
		foreign := other.readContext(ctx)
		other.session = otherSession
		after := st.ReadStats()
		if owned.err != nil || foreign.err != nil {
			t.Fatalf("reads: %v, %v", owned.err, foreign.err)
		}
		if after.Replica-before.Replica != 2 || after.Retried != before.Retried {
			t.Fatalf("reads served by the replica: %d of 2 (retried on the primary: %d)", after.Replica-before.Replica,
				after.Retried-before.Retried)
		}
		if owned.messages != 2 || foreign.messages != 0 {
			t.Errorf("through the replica, the owner sees %d messages of the session and another user %d; want 2 and 0",
				owned.messages, foreign.messages)
		}
	})

	t.Run("replay paused", func(t *testing.T) {
		if err := control(ctx, ctl, "pause"); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := control(ctx, ctl, "resume"); err != nil {
				t.Fatal(err)
			}
		}()
		led := runLedger(ctx, t, hs.URL, st, 3*time.Second, true, nil)
		led.check(t)
		// The replica lags indeed: it lacks turns that every read above saw.
		var onReplica int64
		rc, err := pgx.Connect(ctx, replicaDB)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close(ctx)
		if err := rc.QueryRow(ctx, `select count(*) from agentmem.messages where session_id = any($1)`, led.sessions).Scan(&onReplica); err != nil {
			t.Fatal(err)
		}
		if onReplica >= int64(2*led.acks) {
			t.Errorf("the paused replica holds %d of the ledger's %d messages: the replay was not paused", onReplica, 2*led.acks)
		}
		t.Logf("the paused replica holds %d of the ledger's %d messages", onReplica, 2*led.acks)
	})

	t.Run("replay running", func(t *testing.T) {
		waitReplayed(ctx, t, primaryDB, replicaDB)
		waitInUse(ctx, t, hs.URL, st)
		led := runLedger(ctx, t, hs.URL, st, 3*time.Second, true, nil)
		led.check(t)
		if led.stats.Replica == 0 {
			t.Errorf("no read was served by the replica (%+v)", led.stats)
		}
	})

	t.Run("no position, same process", func(t *testing.T) {
		waitInUse(ctx, t, hs.URL, st)
		led := runLedger(ctx, t, hs.URL, st, 2*time.Second, false, nil)
		led.check(t)
	})

	t.Run("replica killed", func(t *testing.T) {
		waitInUse(ctx, t, hs.URL, st)
		var killErr error
		var killed time.Time
		led := runLedger(ctx, t, hs.URL, st, 4*time.Second, true, func() {
			time.Sleep(1500 * time.Millisecond)
			killErr = control(ctx, ctl, "kill")
			killed = time.Now()
		})
		if killErr != nil {
			t.Fatalf("kill the replica: %v", killErr)
		}
		led.check(t)
		if led.stats.Replica == 0 {
			t.Errorf("no read was served by the replica before it was killed (%+v)", led.stats)
		}
		if led.readsAfter(killed) == 0 {
			t.Errorf("no read was answered after the replica was killed")
		}
	})

	t.Run("replica lost between checks", func(t *testing.T) {
		if err := control(ctx, ctl, "start"); err != nil {
			t.Fatal(err)
		}
		c := newClient(t, hs.URL, 0, true)
		if err := c.commit(ctx, 0); err != nil {
			t.Fatal(err)
		}
		waitReplayed(ctx, t, primaryDB, replicaDB)
		// A store of its own, whose loop checks the replica once, at its start, and not again
		// within the test: the read below finds it usable and up to date.
		s2, err := store.Open(ctx, store.Config{DatabaseURL: primaryDB, ReadURLs: []string{replicaDB},
			ReplicaMaxLag: time.Hour, ReplicaCheckInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		read := func() (int, error) {
			out, err := s2.GetContext(store.MayReadReplica(ctx), store.ContextParams{
				Scope: memory.Scope{UserID: c.user, Agent: memory.DefaultAgent}, SessionID: c.session, MaxMessages: 20})
			return len(out.Messages), err
		}
		deadline := time.Now().Add(30 * time.Second)
		for s2.ReadStats().Replica == 0 {
			if n, err := read(); err != nil || n != 2 {
				t.Fatalf("read: %d messages, %v", n, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the replica was not in use after 30s (%+v)", s2.ReadStats())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := control(ctx, ctl, "kill"); err != nil {
			t.Fatal(err)
		}
		before := s2.ReadStats()
		for i := range 2 {
			n, err := read()
			if err != nil || n != 2 {
				t.Fatalf("read %d after the replica was lost: %d messages, %v; want 2 and no error", i+1, n, err)
			}
		}
		after := s2.ReadStats()
		if after.Retried-before.Retried != 1 || after.Primary-before.Primary != 2 || after.Replica != before.Replica {
			t.Errorf("reads after the loss: %d retried on the primary, %d answered by the primary, %d by the replica; want 1, 2 and 0",
				after.Retried-before.Retried, after.Primary-before.Primary, after.Replica-before.Replica)
		}
	})
}

// ledger is what the clients of one run saw.
type ledger struct {
	clients  []*client
	sessions []uuid.UUID
	acks     int
	reads    int
	stale    int
	errors   int
	problems []string
	stats    store.ReadStats
}

// runLedger runs clients for d: each commits a turn, then reads its session's context and
// history, again and again, sending the last position it was given when withPosition is set.
// during runs beside them.
func runLedger(ctx context.Context, t *testing.T, base string, st *store.Store, d time.Duration, withPosition bool, during func()) *ledger {
	t.Helper()
	before := st.ReadStats()
	led := &ledger{}
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for i := range clients {
		c := newClient(t, base, i, withPosition)
		led.clients = append(led.clients, c)
		led.sessions = append(led.sessions, c.session)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := 0; time.Now().Before(end) && turn < 90; turn++ {
				if err := c.commit(ctx, turn); err != nil {
					c.fail("commit-turn: %v", err)
					return
				}
				for _, r := range []readResult{c.readContext(ctx), c.readHistory(ctx)} {
					c.saw(r)
				}
			}
		}()
	}
	if during != nil {
		during()
	}
	wg.Wait()
	after := st.ReadStats()
	led.stats = store.ReadStats{Replica: after.Replica - before.Replica, Primary: after.Primary - before.Primary,
		Retried: after.Retried - before.Retried, Checks: after.Checks - before.Checks}
	for _, c := range led.clients {
		led.acks += c.acks
		led.reads += len(c.readTimes)
		led.stale += c.stale
		led.errors += c.errors
		led.problems = append(led.problems, c.problems...)
	}
	t.Logf("%d clients: %d turns acknowledged, %d reads (%d stale, %d failed); reads served by the replica %d, by the primary %d "+
		"(%d retried after the replica failed), %d direct replay checks",
		clients, led.acks, led.reads, led.stale, led.errors, led.stats.Replica, led.stats.Primary, led.stats.Retried, led.stats.Checks)
	return led
}

// check fails t for any stale read or failed request, and for a run without turns or reads.
func (l *ledger) check(t *testing.T) {
	t.Helper()
	if l.stale > 0 || l.errors > 0 {
		t.Errorf("%d stale reads and %d failed requests; want none. First ones:\n%s", l.stale, l.errors,
			strings.Join(l.problems[:min(len(l.problems), 8)], "\n"))
	}
	if l.acks < clients || l.reads < 2*clients {
		t.Errorf("%d turns acknowledged and %d reads: the ledger had no load", l.acks, l.reads)
	}
}

// readsAfter counts the reads answered after at.
func (l *ledger) readsAfter(at time.Time) int {
	n := 0
	for _, c := range l.clients {
		for _, rt := range c.readTimes {
			if rt.After(at) {
				n++
			}
		}
	}
	return n
}

// client is one user with one session and the ledger of its acknowledged turns.
type client struct {
	base, token string
	// user is the token's sub.
	user    string
	n       int
	session uuid.UUID
	// sendPosition sends position, the greatest position given to the client, with every
	// request.
	sendPosition bool
	position     string
	hc           *http.Client

	acks      int
	stale     int
	errors    int
	readTimes []time.Time
	problems  []string
}

func newClient(t *testing.T, base string, n int, sendPosition bool) *client {
	t.Helper()
	user := uuid.NewString()
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: user})
	if err != nil {
		t.Fatal(err)
	}
	return &client{base: base, token: tok, user: user, n: n, session: uuid.New(), sendPosition: sendPosition,
		hc: &http.Client{Timeout: 30 * time.Second}}
}

func content(client, turn int, role string) string {
	return fmt.Sprintf("client %d turn %d %s", client, turn, role)
}

func (c *client) fail(format string, a ...any) {
	c.errors++
	c.problems = append(c.problems, fmt.Sprintf("client %d: ", c.n)+fmt.Sprintf(format, a...))
}

// post sends one request and keeps the greatest position an answer gives.
func (c *client) post(ctx context.Context, fn string, body any, key string) (int, http.Header, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/"+fn, bytes.NewReader(b))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if c.sendPosition && c.position != "" {
		req.Header.Set(httpapi.PositionHeader, c.position)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if p := res.Header.Get(httpapi.PositionHeader); p != "" && p > c.position {
		c.position = p
	}
	return res.StatusCode, res.Header, data, err
}

// commit commits turn (two messages), retrying a 503 with the same Idempotency-Key.
func (c *client) commit(ctx context.Context, turn int) error {
	body := map[string]any{"session_id": c.session.String(), "messages": []any{
		map[string]any{"role": "user", "content": content(c.n, turn, "user")},
		map[string]any{"role": "assistant", "content": content(c.n, turn, "assistant")},
	}}
	key := fmt.Sprintf("replica-%s-%d", c.session, turn)
	for attempt := 0; ; attempt++ {
		status, hdr, data, err := c.post(ctx, "commit-turn", body, key)
		switch {
		case err != nil:
			return err
		case status == http.StatusCreated:
			if c.sendPosition && hdr.Get(httpapi.PositionHeader) == "" {
				return fmt.Errorf("turn %d: the answer carries no %s", turn, httpapi.PositionHeader)
			}
			c.acks = turn + 1
			return nil
		case status == http.StatusServiceUnavailable && attempt < 5:
			time.Sleep(100 * time.Millisecond)
		default:
			return fmt.Errorf("turn %d: %d %s", turn, status, data)
		}
	}
}

// readResult is one read of the client's session.
type readResult struct {
	fn       string
	messages int
	last     string
	err      error
}

// saw checks a read against the ledger: every acknowledged turn, and nothing else.
func (c *client) saw(r readResult) {
	if r.err != nil {
		c.fail("%s: %v", r.fn, r.err)
		return
	}
	c.readTimes = append(c.readTimes, time.Now())
	if want := content(c.n, c.acks-1, "assistant"); r.messages != 2*c.acks || r.last != want {
		c.stale++
		c.problems = append(c.problems, fmt.Sprintf("client %d: %s after %d turns: %d messages, the last %q",
			c.n, r.fn, c.acks, r.messages, r.last))
	}
}

// readContext reads the session's window (up to 500 messages, oldest first).
func (c *client) readContext(ctx context.Context) readResult {
	var out struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	r := readResult{fn: "get-context", err: c.read(ctx, "get-context",
		map[string]any{"session_id": c.session.String(), "max_messages": 500}, &out)}
	r.messages = len(out.Messages)
	if r.messages > 0 {
		r.last = out.Messages[r.messages-1].Content
	}
	return r
}

// readHistory reads the session's newest message and its count.
func (c *client) readHistory(ctx context.Context) readResult {
	var out struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		Total int `json:"total"`
	}
	r := readResult{fn: "sessions history", err: c.read(ctx, "sessions",
		map[string]any{"op": "history", "session_id": c.session.String(), "order": "newest", "limit": 1}, &out)}
	r.messages = out.Total
	if len(out.Messages) > 0 {
		r.last = out.Messages[0].Content
	}
	return r
}

// read posts body to fn and decodes a 200's answer into out.
func (c *client) read(ctx context.Context, fn string, body, out any) error {
	status, _, data, err := c.post(ctx, fn, body, "")
	switch {
	case err != nil:
		return err
	case status != http.StatusOK:
		return fmt.Errorf("%d %s", status, data)
	}
	return json.Unmarshal(data, out)
}

// waitInUse waits until a read that needs nothing is served by the replica: the service's loop
// has seen it healthy and within its lag.
func waitInUse(ctx context.Context, t *testing.T, base string, st *store.Store) {
	t.Helper()
	c := newClient(t, base, 99, false)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		before := st.ReadStats().Replica
		if r := c.readContext(ctx); r.err != nil {
			t.Fatalf("read: %v", r.err)
		}
		if st.ReadStats().Replica > before {
			return
		}
		time.Sleep(checkInterval)
	}
	t.Fatalf("the replica was not in use after 30s (%+v)", st.ReadStats())
}

// waitReplayed waits until the replica has replayed everything the primary holds now.
func waitReplayed(ctx context.Context, t *testing.T, primaryDB, replicaDB string) {
	t.Helper()
	pc, err := pgx.Connect(ctx, primaryDB)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	var target string
	if err := pc.QueryRow(ctx, `select pg_current_wal_insert_lsn()::text`).Scan(&target); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		rc, err := pgx.Connect(ctx, replicaDB)
		if err == nil {
			var done bool
			err = rc.QueryRow(ctx, `select pg_last_wal_replay_lsn() >= $1::pg_lsn`, target).Scan(&done)
			rc.Close(ctx)
			if err == nil && done {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the replica did not replay %s within 60s", target)
}

// control runs a command of scripts/replica.sh.
func control(ctx context.Context, ctl string, args ...string) error {
	out, err := exec.CommandContext(ctx, ctl, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", ctl, strings.Join(args, " "), err, out)
	}
	return nil
}
