package httpapi_test

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
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/testdb"
)

// The fault test's settings, all set by scripts/fault.sh (make fault).
const (
	// envFaultCtl is the script the test runs to restart PostgreSQL and kill PgBouncer.
	envFaultCtl = "AGENTMEM_FAULT_CTL"
	// envFaultDB is the superuser URL of the private server the script started.
	envFaultDB = "AGENTMEM_FAULT_DATABASE_URL"
	// envFaultPooler is the same server behind the script's own PgBouncer.
	envFaultPooler = "AGENTMEM_FAULT_POOLER_URL"
)

// The load's bounds: faultClients clients, half through the pooler and half direct, each
// committing turns one after the other until the fault schedule ends, and never more than
// faultMaxRequests requests each.
const (
	faultClients     = 8
	faultMaxRequests = 1200
	faultPace        = 50 * time.Millisecond
	// faultDrain bounds the time the clients have, after the last fault, to get their last turn
	// acknowledged.
	faultDrain = 60 * time.Second
)

// faultStep is one step of the fault schedule: a command of the control script, then a pause
// under load.
type faultStep struct {
	name  string
	args  []string
	after time.Duration
}

var faultSchedule = []faultStep{
	{"warm up", nil, 3 * time.Second},
	{"fast restart", []string{"pg-restart", "fast"}, 4 * time.Second},
	{"pooler kill -9", []string{"pooler-kill"}, 1500 * time.Millisecond},
	{"pooler start", []string{"pooler-start"}, 4 * time.Second},
	{"immediate restart", []string{"pg-restart", "immediate"}, 4 * time.Second},
	{"pooler kill -9 again", []string{"pooler-kill"}, 500 * time.Millisecond},
	{"fast restart, pooler down", []string{"pg-restart", "fast"}, 500 * time.Millisecond},
	{"pooler start again", []string{"pooler-start"}, 4 * time.Second},
}

// faultTally counts the answers of one kind of request.
type faultTally struct {
	requests, ok, replayed, unavailable, noRetryAfter, internal, other, transport int
	// causes holds a few bodies of the answers that were neither success nor 503.
	causes []string
}

func (a *faultTally) add(b faultTally) {
	a.requests += b.requests
	a.ok += b.ok
	a.replayed += b.replayed
	a.unavailable += b.unavailable
	a.noRetryAfter += b.noRetryAfter
	a.internal += b.internal
	a.other += b.other
	a.transport += b.transport
	a.causes = append(a.causes, b.causes...)
}

// faultAck is one acknowledged turn: the seqs the answer gave its two messages.
type faultAck struct {
	turn int
	seqs []int64
}

// faultClient is one client of the load, with its ledger of acknowledged turns.
type faultClient struct {
	n        int
	via      string
	base     string
	token    string
	session  uuid.UUID
	commits  faultTally
	reads    faultTally
	acks     []faultAck
	pending  int // a turn sent but never acknowledged, or -1
	requests int
}

func faultContent(client, turn int, role string) string {
	return fmt.Sprintf("client %d turn %d %s", client, turn, role)
}

// TestFaultRestarts restarts PostgreSQL (fast and immediate) and kills PgBouncer with -9 under a
// bounded load of commit-turn and get-context requests, half through the pooler and half direct,
// through the real HTTP handler. Every failure must be a 503 with Retry-After, never a 500; the
// clients retry each turn with its Idempotency-Key until it is acknowledged, and afterwards every
// acknowledged turn is in its session exactly once, in order, and nothing else is.
//
// It needs servers it may break: scripts/fault.sh (make fault) starts a private PostgreSQL and
// PgBouncer and runs it; without them it is skipped.
func TestFaultRestarts(t *testing.T) {
	ctl, direct, pooled := os.Getenv(envFaultCtl), os.Getenv(envFaultDB), os.Getenv(envFaultPooler)
	if ctl == "" || direct == "" || pooled == "" {
		t.Skipf("the fault test restarts its own PostgreSQL and kills its own PgBouncer: run it with make fault (%s, %s and %s unset)",
			envFaultCtl, envFaultDB, envFaultPooler)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	dbName := "agentmem_fault"
	admin, err := pgx.Connect(ctx, direct)
	if err != nil {
		t.Fatalf("connect to the private server: %v", err)
	}
	if _, err := admin.Exec(ctx, "drop database if exists "+dbName+" with (force)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "create database "+dbName); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)
	if err := testdb.Migrate(ctx, testdb.URLOf(direct, dbName), true); err != nil {
		t.Fatalf("migrate: %v", err)
	}

	var logs faultLog
	bases := map[string]string{}
	for via, u := range map[string]string{"pooler": pooled, "direct": direct} {
		e := buildEnv(t, envConfig{url: testdb.URLOf(u, dbName), maxConns: 4, log: func(io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(&logs, nil)) },
			http: httpapi.Config{RequestTimeout: 5 * time.Second}})
		hs := httptest.NewServer(e.h)
		t.Cleanup(hs.Close)
		bases[via] = hs.URL
	}

	clients := make([]*faultClient, faultClients)
	for i := range clients {
		via := "pooler"
		if i%2 == 1 {
			via = "direct"
		}
		tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: uuid.NewString()})
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = &faultClient{n: i, via: via, base: bases[via], token: tok, session: uuid.New(), pending: -1}
	}

	// The schedule runs beside the load; done closes when it has ended.
	done := make(chan struct{})
	window := map[string]int{} // acknowledged turns per step, to show each step had load
	var windowMu sync.Mutex
	current := "warm up"
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(ctx, done, func() {
				windowMu.Lock()
				window[current]++
				windowMu.Unlock()
			})
		}()
	}
	var ctlErr error
	for _, step := range faultSchedule {
		windowMu.Lock()
		current = step.name
		windowMu.Unlock()
		if step.args != nil {
			if ctlErr = faultCtl(ctx, ctl, step.args...); ctlErr != nil {
				ctlErr = fmt.Errorf("%s: %w", step.name, ctlErr)
				break
			}
		}
		time.Sleep(step.after)
	}
	close(done)
	wg.Wait()
	if ctlErr != nil {
		t.Fatalf("fault schedule: %v", ctlErr)
	}

	// The ledger against what the database holds.
	check, err := pgx.Connect(ctx, testdb.URLOf(direct, dbName))
	if err != nil {
		t.Fatalf("connect to check: %v", err)
	}
	defer check.Close(ctx)
	var commits, reads faultTally
	acked, duplicates, losses, strays, misplaced := 0, 0, 0, 0, 0
	for _, c := range clients {
		commits.add(c.commits)
		reads.add(c.reads)
		acked += len(c.acks)
		if c.pending >= 0 {
			t.Errorf("client %d: turn %d was never acknowledged", c.n, c.pending)
		}
		rows, err := check.Query(ctx, `select seq, content from agentmem.messages where session_id = $1 order by seq`, c.session)
		if err != nil {
			t.Fatal(err)
		}
		type stored struct {
			Seq     int64
			Content string
		}
		got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[stored])
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, m := range got {
			seen[m.Content]++
		}
		want := map[string]bool{}
		for k, a := range c.acks {
			if a.turn != k {
				t.Errorf("client %d: acknowledgement %d is of turn %d", c.n, k, a.turn)
			}
			for j, role := range []string{"user", "assistant"} {
				content := faultContent(c.n, a.turn, role)
				want[content] = true
				switch n := seen[content]; {
				case n == 0:
					losses++
				case n > 1:
					duplicates += n - 1
				}
				// In order: the turn's messages where its answer said, one after the other.
				if seq := int64(2*k + j + 1); len(a.seqs) != 2 || a.seqs[j] != seq || len(got) <= 2*k+j ||
					got[2*k+j].Seq != seq || got[2*k+j].Content != content {
					misplaced++
				}
			}
		}
		for content := range seen {
			if !want[content] {
				strays++ // stored but never acknowledged: a half-done turn
			}
		}
		if len(got) != 2*len(c.acks) {
			t.Errorf("client %d (%s): %d messages stored for %d acknowledged turns", c.n, c.via, len(got), len(c.acks))
		}
	}

	t.Logf("fault schedule: %s", faultWindows(window))
	t.Logf("commit-turn: %d requests, %d acknowledged turns (%d replayed), %d x 503 (%d without Retry-After), %d x 500, %d other, %d transport errors",
		commits.requests, acked, commits.replayed, commits.unavailable, commits.noRetryAfter, commits.internal, commits.other, commits.transport)
	t.Logf("get-context: %d requests, %d ok, %d x 503 (%d without Retry-After), %d x 500, %d other, %d transport errors",
		reads.requests, reads.ok, reads.unavailable, reads.noRetryAfter, reads.internal, reads.other, reads.transport)
	t.Logf("ledger: %d acknowledged turns, %d duplicates, %d losses, %d out of place, %d stored unacknowledged",
		acked, duplicates, losses, misplaced, strays)

	for _, tl := range []struct {
		name string
		t    faultTally
	}{{"commit-turn", commits}, {"get-context", reads}} {
		t.Run(tl.name, func(t *testing.T) {
			if tl.t.internal > 0 || tl.t.other > 0 || tl.t.transport > 0 {
				t.Errorf("%s: %d x 500, %d other answers, %d transport errors; want none. First ones:\n%s\nserver errors:\n%s",
					tl.name, tl.t.internal, tl.t.other, tl.t.transport, strings.Join(first(tl.t.causes, 5), "\n"), logs.internalErrors(10))
			}
			if tl.t.noRetryAfter > 0 {
				t.Errorf("%s: %d answers 503 without Retry-After", tl.name, tl.t.noRetryAfter)
			}
		})
	}
	if duplicates+losses+misplaced+strays > 0 {
		t.Errorf("ledger: %d duplicates, %d losses, %d out of place, %d stored unacknowledged; want none",
			duplicates, losses, misplaced, strays)
	}
	if acked == 0 {
		t.Error("no turn was acknowledged")
	}
	for _, step := range faultSchedule {
		if window[step.name] == 0 && step.after >= time.Second {
			t.Errorf("no turn was acknowledged after %q: the step had no load, or the service never came back", step.name)
		}
	}
}

// run commits turns until done closes (or the request bound is reached), retrying each turn
// with its Idempotency-Key until it is acknowledged, and reads the context after each.
func (c *faultClient) run(ctx context.Context, done <-chan struct{}, acked func()) {
	hc := &http.Client{Timeout: 30 * time.Second}
	var drain <-chan time.Time
	for turn := 0; ; turn++ {
		select {
		case <-done:
			return
		default:
		}
		if c.requests >= faultMaxRequests {
			return
		}
		body, _ := json.Marshal(map[string]any{"session_id": c.session.String(), "messages": []any{
			map[string]any{"role": "user", "content": faultContent(c.n, turn, "user")},
			map[string]any{"role": "assistant", "content": faultContent(c.n, turn, "assistant")},
		}})
		key := fmt.Sprintf("fault-%d-%d", c.n, turn)
		c.pending = turn
		for {
			if drain == nil {
				select {
				case <-done:
					drain = time.After(faultDrain)
				default:
				}
			}
			select {
			case <-drain:
				return // c.pending stays set: the turn was never acknowledged
			case <-ctx.Done():
				return
			default:
			}
			c.requests++
			status, h, raw, err := faultPost(ctx, hc, c.base+"/v1/commit-turn", c.token, key, body)
			wait := c.commits.record(status, h, raw, err)
			if status == http.StatusCreated {
				var res ctCommitResult
				if err := json.Unmarshal(raw, &res); err != nil {
					c.commits.causes = append(c.commits.causes, "decode: "+err.Error())
					c.commits.other++
				}
				seqs := make([]int64, len(res.Messages))
				for i, m := range res.Messages {
					seqs[i] = m.Seq
				}
				c.acks = append(c.acks, faultAck{turn: turn, seqs: seqs})
				c.pending = -1
				acked()
				break
			}
			time.Sleep(wait)
		}
		read, _ := json.Marshal(map[string]any{"session_id": c.session.String(), "query": "turn"})
		c.requests++
		status, h, raw, err := faultPost(ctx, hc, c.base+"/v1/get-context", c.token, "", read)
		c.reads.record(status, h, raw, err)
		time.Sleep(faultPace)
	}
}

// record counts one answer and says how long to wait before a retry: Retry-After for a 503.
func (a *faultTally) record(status int, h http.Header, raw []byte, err error) time.Duration {
	a.requests++
	switch {
	case err != nil:
		a.transport++
		a.causes = append(a.causes, err.Error())
		return 200 * time.Millisecond
	case status == http.StatusOK || status == http.StatusCreated:
		a.ok++
		if h.Get("Idempotent-Replayed") == "true" {
			a.replayed++
		}
		return 0
	case status == http.StatusServiceUnavailable:
		a.unavailable++
		ra, err := strconv.Atoi(h.Get("Retry-After"))
		var p struct {
			Code string `json:"code"`
		}
		if err != nil || ra < 1 || json.Unmarshal(raw, &p) != nil || p.Code != "unavailable" {
			a.noRetryAfter++
			return time.Second
		}
		return time.Duration(ra) * time.Second
	case status == http.StatusInternalServerError:
		a.internal++
	default:
		a.other++
	}
	a.causes = append(a.causes, fmt.Sprintf("%d %s", status, bytes.TrimSpace(raw)))
	return 200 * time.Millisecond
}

func faultPost(ctx context.Context, hc *http.Client, u, token, key string, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, raw, err
}

// faultCtl runs one command of the control script (scripts/fault.sh).
func faultCtl(ctx context.Context, ctl string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, ctl, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", ctl, strings.Join(args, " "), err, out)
	}
	return nil
}

func faultWindows(w map[string]int) string {
	parts := make([]string, 0, len(faultSchedule))
	for _, s := range faultSchedule {
		parts = append(parts, fmt.Sprintf("%s: %d turns", s.name, w[s.name]))
	}
	return strings.Join(parts, "; ")
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// faultLog keeps the servers' log lines, to show the errors behind the 500s of a failed run.
type faultLog struct{ syncBuffer }

// internalErrors lists the distinct errors of the requests answered 500, most frequent first.
func (l *faultLog) internalErrors(n int) string {
	counts := map[string]int{}
	for _, line := range strings.Split(l.String(), "\n") {
		var rec struct {
			Msg   string `json:"msg"`
			Code  string `json:"code"`
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "request failed" && rec.Code == "internal" {
			counts[rec.Error]++
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return counts[keys[a]] > counts[keys[b]] })
	var b strings.Builder
	for _, k := range first(keys, n) {
		fmt.Fprintf(&b, "  %d x %s\n", counts[k], k)
	}
	return b.String()
}
