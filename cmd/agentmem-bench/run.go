package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/store"
)

// poolSize is the connection pool of the store under test, as `agentmem serve` has it.
const poolSize = 16

// Run runs the workloads cfg asks for and writes the results into cfg.OutDir.
func Run(ctx context.Context, cfg Config) (*bench.Results, error) {
	started := time.Now()
	cfg.started = started
	sz := cfg.Sizes
	if len(sz.W6Functions) == 0 && cfg.runs("w6") {
		fns, err := listFunctions(cfg.Repo)
		if err != nil {
			return nil, err
		}
		sz.W6Functions = fns
		cfg.Sizes = sz
	}
	cfg.Runs = max(cfg.Runs, 1)
	if c, err := pgx.Connect(ctx, cfg.ServerURL); err == nil {
		cfg.serverCPU = newServerCPU(ctx, c).For(cfg.Database)
		c.Close(ctx)
	}
	res := &bench.Results{SchemaVersion: bench.SchemaVersion, Mode: cfg.Mode, StartedAt: started.UTC(), Sizes: sz, Notes: []string{}, Runs: cfg.Runs}

	// The peers' databases are loaded first (or found loaded), so that no load runs between
	// two measurements.
	var peers *harness
	var peerRuns []bench.PeerRun
	if cfg.Peers.Dir != "" && len(peersFor(cfg)) == 0 {
		res.Notes = append(res.Notes, "no peer ran: none of the workloads run compares with one (w1, w2, w2growth, w3)")
	} else if cfg.Peers.Dir != "" {
		var err error
		if peers, err = prepareHarness(ctx, cfg); err != nil {
			return nil, err
		}
		defer peers.drop()
		if err := peers.load(ctx); err != nil {
			return nil, err
		}
	}
	runPeers := func(run int) {
		if peers == nil || ctx.Err() != nil {
			return
		}
		pr, notes := peers.measure(ctx, run)
		peerRuns = append(peerRuns, pr)
		res.Notes = append(res.Notes, notes...)
	}

	cfg.logf("creating database %s", cfg.Database)
	db, err := createDatabase(ctx, cfg.ServerURL, cfg.Database, cfg.Partitions)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cfg.Keep {
			cfg.logf("kept database %s", cfg.Database)
			return
		}
		if err := db.drop(); err != nil {
			cfg.logf("drop database %s: %v", cfg.Database, err)
		}
	}()
	if res.Env, err = captureEnv(ctx, db, cfg.Repo); err != nil {
		return nil, err
	}
	res.Env.Connection = "directly (no pooler), pool of 16 connections"
	res.Env.UserPartitions = cfg.Partitions

	// The history workload's user is one among the chat data's, as a user is among others.
	needChat := cfg.runs("w1") || cfg.runs("w2") || cfg.runs("w2growth") || cfg.runs("w4") || cfg.runs("w5") || cfg.runs("w6") ||
		cfg.runs("history") || cfg.runs("outbox") || cfg.runs("cache") || cfg.runsReplica()
	if needChat {
		t := time.Now()
		if err := loadChat(ctx, db, sz); err != nil {
			return nil, err
		}
		cfg.logf("loaded %d chat sessions and %d growth sessions in %.1fs", sz.Sessions,
			len(sz.GrowthLengths)*sz.GrowthPerLength, time.Since(t).Seconds())
	}
	var corpus *bench.Corpus
	var memLoad float64
	if cfg.runs("w3") || cfg.runs("w6") || cfg.runs("w3sources") || cfg.runsReplica() {
		t := time.Now()
		corpus = bench.GenerateCorpus(bench.Stream(bench.StreamMemories), sz.Users, sz.MemoriesPerUser)
		if err := loadMemories(ctx, db, corpus, 0); err != nil {
			return nil, err
		}
		memLoad = time.Since(t).Seconds()
		cfg.logf("loaded %d memories across %d users in %.1fs", sz.Users*sz.MemoriesPerUser, sz.Users, memLoad)
	}

	st, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: poolSize})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	httpStore, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: poolSize})
	if err != nil {
		return nil, err
	}
	defer httpStore.Close()
	verifier, err := auth.NewVerifier(ctx, auth.Config{JWTSecret: config.LocalJWTSecret})
	if err != nil {
		return nil, err
	}
	// Every request is logged as in production, to nowhere: the encoding is part of the cost.
	logger := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv := httpapi.NewServer(app.New(httpStore, logger, app.Config{Embedder: bench.Embedder{}}), verifier, logger, httpapi.Config{})
	ts := httptest.NewServer(srv.Mux())
	defer ts.Close()

	if w := &res.Workloads; true {
		cfg.logf("floor: select 1 and an empty transaction")
		if w.Floor, err = runFloor(ctx, db, max(sz.Reads, 200)); err != nil {
			return nil, err
		}
	}
	targets := []target{newStoreTarget(st), newHTTPTarget(ts.URL, config.LocalJWTSecret, max(sz.W5Clients, sz.Clients))}
	ops := newOps(sz)
	w := &res.Workloads

	runCompared(ctx, cfg, targets, ops, corpus, memLoad, w, true)
	runPeers(1)
	res.RunLoadAvg = append(res.RunLoadAvg, loadAvg())
	for run := 2; run <= cfg.Runs && ctx.Err() == nil; run++ {
		cfg.logf("run %d of %d", run, cfg.Runs)
		var rw bench.Workloads
		runCompared(ctx, cfg, targets, ops, corpus, memLoad, &rw, false)
		res.Repeats = append(res.Repeats, rw)
		runPeers(run)
		res.RunLoadAvg = append(res.RunLoadAvg, loadAvg())
	}
	if peers != nil {
		res.Peers = peers.results(peerRuns)
	}
	if cfg.runs("w3sources") {
		kinds := cfg.SourcesVectors
		if len(kinds) == 0 {
			kinds = []string{bench.VectorsRandom, bench.VectorsClustered}
		}
		for i, kind := range kinds {
			cfg.logf("W3-sources (%s texts): loading a user's %d memories and %d messages, and %d messages of other users",
				kind, sz.SourcesRows, sz.SourcesRows, sz.SourcesRows)
			r, err := runSources(ctx, cfg, db, st, sz, kind, i > 0)
			if err != nil {
				return nil, err
			}
			if kind == bench.VectorsClustered {
				w.W3SourcesClustered = r
			} else {
				w.W3Sources = r
			}
		}
	}
	if cfg.runs("w3") && cfg.Large && sz.LargeUsers > sz.Users {
		t0 := time.Now()
		large := bench.GenerateCorpus(bench.Stream(bench.StreamMemories), sz.LargeUsers, sz.MemoriesPerUser)
		cfg.logf("loading %d more memories for W3 large", (sz.LargeUsers-sz.Users)*sz.MemoriesPerUser)
		if err := loadMemories(ctx, db, large, sz.Users); err != nil {
			return nil, err
		}
		load := time.Since(t0).Seconds()
		corpus = large
		w.W3Large = &bench.Levels[bench.W3]{}
		for _, t := range targets {
			cfg.logf("W3 recall large, %s", t.level())
			r := runW3(ctx, t, large, sz, false)
			r.LoadSeconds = load
			setLevel(w.W3Large, t.level(), &r)
		}
	}
	if cfg.runs("words") {
		cfg.logf("words: one user's %d messages among %d other users' messages and %d memories",
			sz.WordsMessages, wordsOtherMessages(sz), sz.WordsMessages)
		if w.Words, err = runWords(ctx, cfg, db, sz); err != nil {
			return nil, err
		}
	}
	if cfg.runs("quality") {
		cfg.logf("retrieval quality: %d copies of the labelled set, text, vector and hybrid modes (store)", max(sz.QualityCopies, 1))
		if w.Quality, err = runQuality(ctx, db, sz); err != nil {
			return nil, err
		}
	}
	if cfg.runs("w5") {
		cfg.logf("W5 end to end, %d clients for %.1fs", sz.W5Clients, sz.W5Seconds)
		r := runW5(ctx, targets[1].(*httpTarget), ops, sz)
		w.W5 = &r
	}
	if cfg.runs("w6") {
		cfg.logf("W6 start-up of %d functions and agentmem serve", len(sz.W6Functions))
		r, err := runW6(ctx, cfg, db, corpus)
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("W6 did not run: %v", err))
			cfg.logf("W6: %v", err)
		} else {
			w.W6 = r
		}
	}
	if cfg.runs("history") {
		cfg.logf("history: one user's %d messages across %d sessions", sz.HistoryMessages, sz.HistorySessions)
		r, err := runHistory(ctx, cfg, db, []historyLevel{storeHistory{st}, httpHistory{targets[1].(*httpTarget)}})
		if err != nil {
			return nil, err
		}
		w.History = r
	}
	if cfg.runs("outbox") {
		if w.Outbox, err = runOutbox(ctx, cfg, db, ops); err != nil {
			return nil, err
		}
	}
	if cfg.runs("cache") {
		if w.Cache, err = runCache(ctx, cfg, db, ops); err != nil {
			return nil, err
		}
	}
	if cfg.runsReplica() {
		if w.Replica, err = runReplica(ctx, cfg, db, ops, corpus); err != nil {
			return nil, err
		}
	}
	if cfg.runs("w4") {
		cfg.logf("W4 sweep: loading %d expired and %d live messages", sz.SweepExpired, sz.SweepLive)
		r, err := runW4(ctx, cfg, db, st, ops, sz)
		if err != nil {
			return nil, err
		}
		w.W4 = r
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res.Goals = bench.EvaluateGoals(res)
	res.Comparison = bench.EvaluateComparison(res)
	res.DurationS = time.Since(started).Seconds()
	if err := bench.Write(cfg.OutDir, res); err != nil {
		return nil, err
	}
	return res, nil
}

// runCompared runs the workloads the peers are compared on (W1, W2, W2-growth, W3, each at
// both levels) into w; the first run also measures W3's hybrid mode.
func runCompared(ctx context.Context, cfg Config, targets []target, ops *opsData, corpus *bench.Corpus, memLoad float64, w *bench.Workloads, first bool) {
	sz := cfg.Sizes
	if cfg.runs("w1") {
		w.W1 = &bench.Levels[bench.W1]{}
		for _, t := range targets {
			cfg.logf("W1 commit, %s", t.level())
			r := runW1(ctx, t, ops, sz, cfg.serverCPU)
			setLevel(w.W1, t.level(), &r)
		}
	}
	if cfg.runs("w2") {
		w.W2 = &bench.Levels[bench.W2]{}
		for _, t := range targets {
			cfg.logf("W2 context, %s", t.level())
			r := runW2(ctx, t, ops, sz)
			setLevel(w.W2, t.level(), &r)
		}
	}
	if cfg.runs("w2growth") {
		w.W2Growth = &bench.Levels[bench.W2Growth]{}
		for _, t := range targets {
			cfg.logf("W2-growth, %s", t.level())
			r := runGrowth(ctx, t, sz)
			setLevel(w.W2Growth, t.level(), &r)
		}
	}
	if cfg.runs("w3") {
		w.W3 = &bench.Levels[bench.W3]{}
		for _, t := range targets {
			cfg.logf("W3 recall, %s", t.level())
			r := runW3(ctx, t, corpus, sz, first && t.level() == "store")
			r.LoadSeconds = memLoad
			setLevel(w.W3, t.level(), &r)
		}
	}
}

func setLevel[T any](l *bench.Levels[T], level string, v *T) {
	if level == "store" {
		l.Store = v
	} else {
		l.HTTP = v
	}
}
