package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// replicaThinks are the pauses of the mixed phase between a client's commit and its read: none
// (the read follows the answer at once), and short ones, far shorter than a model's answer
// takes between a turn and the next get-context.
var replicaThinks = []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond}

// runReplica measures reads through a streaming read replica (cfg.ReplicaURL) of the bench
// server: get-context (W2's reads) and recall (W3's queries, hybrid) read back to back from the
// primary alone and from a store with the replica (DATABASE_READ_URL), with nothing written
// meanwhile; then clients that commit a turn and read their session's context with the
// position the commit gave, which the replica answers only once it has replayed it.
func runReplica(ctx context.Context, cfg Config, db *benchDB, ops *opsData, corpus *bench.Corpus) (*bench.Replica, error) {
	replicaDB, err := withDatabaseName(cfg.ReplicaURL, cfg.Database)
	if err != nil {
		return nil, err
	}
	cfg.logf("replica: waiting for the replica to replay the loaded data")
	if err := waitReplayed(ctx, db.url, replicaDB); err != nil {
		return nil, err
	}
	primary, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: poolSize})
	if err != nil {
		return nil, err
	}
	defer primary.Close()
	withReplica, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: poolSize, ReadURLs: []string{replicaDB}})
	if err != nil {
		return nil, err
	}
	defer withReplica.Close()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	direct := app.New(primary, log, app.Config{Embedder: bench.Embedder{}})
	replicated := app.New(withReplica, log, app.Config{Embedder: bench.Embedder{}})

	chat := auth.Principal{Role: auth.RoleUser, UserID: chatScope.UserID}
	readContext := func(a *app.App, ctx context.Context, i int) error {
		id := bench.SessionID(ops.reads[i%len(ops.reads)]).String()
		m := int64(contextMessages)
		out, err := a.GetContext(ctx, chat, app.GetContextInput{SessionID: &id, MaxMessages: &m})
		if err == nil && len(out.Messages) != contextMessages {
			err = fmt.Errorf("get-context gave %d messages, want %d", len(out.Messages), contextMessages)
		}
		return err
	}
	// The loop puts the replica in use within a check interval of the start.
	deadline := time.Now().Add(30 * time.Second)
	for withReplica.ReadStats().Replica == 0 {
		if err := readContext(replicated, ctx, 0); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the replica served no read within 30s: is %s a streaming replica of the bench server?", redactURL(cfg.ReplicaURL))
		}
		time.Sleep(20 * time.Millisecond)
	}

	out := &bench.Replica{}
	n := len(ops.reads)
	cfg.logf("replica: get-context of %d messages from the primary and through the replica, %d reads each, back to back", contextMessages, n)
	out.Context = replicaReads(ctx, withReplica, n, func(a int, ctx context.Context, i int) error {
		return readContext([]*app.App{direct, replicated}[a], ctx, i)
	})
	var queries []bench.Query
	if corpus != nil {
		queries = bench.GenerateQueries(bench.Stream(bench.StreamQueries), cfg.Sizes.Queries, corpus)
	}
	if len(queries) > 0 {
		cfg.logf("replica: recall (hybrid) from the primary and through the replica, %d queries each, back to back", len(queries))
		out.Recall = replicaReads(ctx, withReplica, len(queries), func(a int, ctx context.Context, i int) error {
			q := queries[i]
			k, mode := int64(recallK), memory.ModeHybrid
			pr := auth.Principal{Role: auth.RoleUser, UserID: bench.UserID(q.User).String()}
			res, err := []*app.App{direct, replicated}[a].Recall(ctx, pr, app.RecallInput{Query: &q.Text, K: &k, Mode: &mode})
			if err == nil && len(res.Results) == 0 {
				err = fmt.Errorf("recall found nothing for user %d", q.User)
			}
			return err
		})
	}
	turns := max(cfg.Sizes.Turns/2, cfg.Sizes.Clients)
	for _, think := range replicaThinks {
		cfg.logf("replica: %d clients commit %d turns and read their context with the position, %s between", cfg.Sizes.Clients, turns, think)
		out.Mixed = append(out.Mixed, replicaMixed(ctx, replicated, withReplica, cfg.Sizes.Clients, turns, think))
	}
	return out, nil
}

// replicaReads runs n reads on each side, read(0, ...) from the primary and read(1, ...)
// through the replica, back to back in alternating order.
func replicaReads(ctx context.Context, st *store.Store, n int, read func(side int, ctx context.Context, i int) error) *bench.ReplicaReads {
	for i := range min(n, 20) { // warm both sides
		read(0, ctx, i) //nolint:errcheck // measured below
		read(1, ctx, i) //nolint:errcheck
	}
	before := st.ReadStats()
	lat := [2][]time.Duration{}
	errs := [2]int{}
	first := [2]string{}
	var elapsed [2]time.Duration
	for i := range n {
		for j := range 2 {
			side := (i + j) % 2
			t0 := time.Now()
			err := read(side, ctx, i)
			d := time.Since(t0)
			elapsed[side] += d
			if err != nil {
				errs[side]++
				if first[side] == "" {
					first[side] = err.Error()
				}
				continue
			}
			lat[side] = append(lat[side], d)
		}
	}
	after := st.ReadStats()
	r := &bench.ReplicaReads{Reads: n, Primary: phase(1, n, errs[0], first[0], elapsed[0], lat[0]),
		Replica: phase(1, n, errs[1], first[1], elapsed[1], lat[1])}
	r.ReplicaShare = share(after.Replica-before.Replica, after.Primary-before.Primary)
	if p, q := r.Primary.Latency.P50MS, r.Replica.Latency.P50MS; q > 0 {
		r.P50Ratio = q / p
	}
	return r
}

// replicaMixed runs clients, each a user of its own with a session of its own, that commit
// turns (turns in all) and, think after each answer, read the session's context with the
// position the commit gave, as a client sending Agentmem-Position does.
func replicaMixed(ctx context.Context, a *app.App, st *store.Store, clients, turns int, think time.Duration) bench.ReplicaMixed {
	before := st.ReadStats()
	var mu sync.Mutex
	var commits, reads []time.Duration
	out := bench.ReplicaMixed{Clients: clients, Turns: turns, ThinkMS: float64(think.Microseconds()) / 1000}
	var commitErrs, readErrs int
	var firstCommit, firstRead string
	fail := func(n *int, first *string, err error) {
		mu.Lock()
		defer mu.Unlock()
		*n++
		if *first == "" {
			*first = err.Error()
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := auth.Principal{Role: auth.RoleUser, UserID: uuid.NewString()}
			session := uuid.NewString()
			for t := c; t < turns && ctx.Err() == nil; t += clients {
				answer := fmt.Sprintf("answer %d", t)
				raw := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
				user, assistant := memory.RoleUser, memory.RoleAssistant
				wctx := store.NoteWrites(ctx)
				t0 := time.Now()
				_, err := a.CommitTurn(wctx, pr, app.CommitTurnInput{SessionID: &session, Messages: []app.MessageInput{
					{Role: &user, Content: raw(fmt.Sprintf("question %d", t))}, {Role: &assistant, Content: raw(answer)}}})
				var pos store.Position
				var ok bool
				if err == nil {
					pos, ok, err = a.WritePosition(wctx)
				}
				d := time.Since(t0)
				if err != nil {
					fail(&commitErrs, &firstCommit, err)
					continue
				}
				mu.Lock()
				commits = append(commits, d)
				mu.Unlock()
				time.Sleep(think)
				rctx := ctx
				if ok {
					rctx = store.ReadAfter(ctx, pos)
				}
				m := int64(4)
				t0 = time.Now()
				got, err := a.GetContext(rctx, pr, app.GetContextInput{SessionID: &session, MaxMessages: &m})
				d = time.Since(t0)
				if err != nil {
					fail(&readErrs, &firstRead, err)
					continue
				}
				mu.Lock()
				reads = append(reads, d)
				if n := len(got.Messages); n == 0 || got.Messages[n-1].Content != answer {
					out.Stale++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	after := st.ReadStats()
	out.Commit = phase(clients, turns, commitErrs, firstCommit, elapsed, commits)
	out.Read = phase(clients, turns, readErrs, firstRead, elapsed, reads)
	out.ReplicaShare = share(after.Replica-before.Replica, after.Primary-before.Primary)
	out.Checks = after.Checks - before.Checks
	return out
}

func share(replica, primary int64) float64 {
	if replica+primary == 0 {
		return 0
	}
	return float64(replica) / float64(replica+primary)
}

// withDatabaseName is raw with its database replaced by name.
func withDatabaseName(raw, name string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("replica url: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// waitReplayed waits until the replica has replayed what the primary holds now.
func waitReplayed(ctx context.Context, primaryURL, replicaURL string) error {
	pc, err := pgx.Connect(ctx, primaryURL)
	if err != nil {
		return err
	}
	var target string
	err = pc.QueryRow(ctx, `select pg_current_wal_insert_lsn()::text`).Scan(&target)
	pc.Close(ctx)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		rc, err := pgx.Connect(ctx, replicaURL)
		if err == nil {
			var done bool
			err = rc.QueryRow(ctx, `select pg_last_wal_replay_lsn() >= $1::pg_lsn`, target).Scan(&done)
			rc.Close(ctx)
			if err == nil && done {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replica did not replay %s within 5 minutes (last: %v)", target, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
