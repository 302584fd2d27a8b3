package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/store"
)

// benchRedisURL is the Redis the cache workload uses: AGENTMEM_BENCH_REDIS_URL, else the
// tests' (AGENTMEM_TEST_REDIS_URL), else the one scripts/redis.sh starts.
func benchRedisURL() string {
	for _, v := range []string{"AGENTMEM_BENCH_REDIS_URL", "AGENTMEM_TEST_REDIS_URL"} {
		if u := os.Getenv(v); u != "" {
			return u
		}
	}
	return "redis://127.0.0.1:6380"
}

// runCache measures get-context (W2's reads: the chat user's sessions, the last
// contextMessages messages) answered from the database and through the Redis adapter's cache,
// read after read back to back, each pair in alternating order, through the use case (the
// layer both paths share). The cache is filled by a first pass; no change is made meanwhile,
// so every cached read is a hit, which the server's keyspace misses confirm.
func runCache(ctx context.Context, cfg Config, db *benchDB, ops *opsData) (*bench.Cache, error) {
	url := benchRedisURL()
	st, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: poolSize,
		Adapters: []string{adapter.Redis}})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	out := &bench.Cache{}
	// W2's reads, and windows of 100 messages of the growth sessions long enough for them.
	w2 := make([]uuid.UUID, len(ops.reads))
	for i, s := range ops.reads {
		w2[i] = bench.SessionID(s)
	}
	var long []uuid.UUID
	for li, n := range cfg.Sizes.GrowthLengths {
		for j := 0; n >= cacheLongWindow && j < cfg.Sizes.GrowthPerLength; j++ {
			long = append(long, bench.GrowthSessionID(li*cfg.Sizes.GrowthPerLength+j))
		}
	}
	// The chat user reads every one of W2's sessions (hundreds) within REDIS_TTL: the bounds of
	// what one user holds are raised to hold them all, so that every measured read is a hit.
	rc, err := redis.New(redis.Config{URL: url, UserWindows: len(w2) + len(long), UserBytes: 1 << 30})
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	c := &countingCache{Cache: rc}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	cached := app.New(st, log, app.Config{Embedder: bench.Embedder{}, Adapters: map[string]adapter.Adapter{adapter.Redis: c}})
	direct := app.New(st, log, app.Config{Embedder: bench.Embedder{}})
	for _, sh := range []struct {
		sessions []uuid.UUID
		messages int
	}{{w2, contextMessages}, {long, cacheLongWindow}} {
		if len(sh.sessions) == 0 {
			continue
		}
		cfg.logf("cache: get-context of %d messages from the database and from Redis (%s), %d reads each, back to back",
			sh.messages, redactURL(url), len(ops.reads))
		r, err := cacheShape(ctx, cached, direct, c, sh.sessions, sh.messages, len(ops.reads))
		if err != nil {
			return nil, err
		}
		out.Windows = append(out.Windows, r)
	}
	return out, nil
}

// cacheLongWindow is the long window the cache workload reads besides W2's.
const cacheLongWindow = 100

// cacheShape reads n windows of the last messages messages of sessions (round-robin) from the
// database and through the cache, back to back.
func cacheShape(ctx context.Context, cached, direct *app.App, c *countingCache, sessions []uuid.UUID, messages, n int) (bench.CacheWindow, error) {
	u := auth.Principal{Role: auth.RoleUser, UserID: chatScope.UserID}
	read := func(a *app.App, session uuid.UUID) error {
		id := session.String()
		m := int64(messages)
		out, err := a.GetContext(ctx, u, app.GetContextInput{SessionID: &id, MaxMessages: &m})
		if err == nil && len(out.Messages) != messages {
			err = fmt.Errorf("get-context gave %d messages, want %d", len(out.Messages), messages)
		}
		return err
	}
	for _, s := range sessions { // fill the cache, warm both paths
		if err := read(cached, s); err != nil {
			return bench.CacheWindow{}, fmt.Errorf("fill: %w", err)
		}
		if err := read(direct, s); err != nil {
			return bench.CacheWindow{}, err
		}
	}
	missesBefore := c.fills.Load()
	var fromDB, fromCache []time.Duration
	dbErrs, cacheErrs := 0, 0
	dbFirst, cacheFirst := "", ""
	start := time.Now()
	for i := range n {
		s := sessions[i%len(sessions)]
		order := []*app.App{direct, cached}
		if i%2 == 1 {
			order = []*app.App{cached, direct}
		}
		for _, a := range order {
			t0 := time.Now()
			err := read(a, s)
			d := time.Since(t0)
			switch {
			case err != nil && a == direct:
				dbErrs++
				dbFirst = cmp.Or(dbFirst, err.Error())
			case err != nil:
				cacheErrs++
				cacheFirst = cmp.Or(cacheFirst, err.Error())
			case a == direct:
				fromDB = append(fromDB, d)
			default:
				fromCache = append(fromCache, d)
			}
		}
	}
	elapsed := time.Since(start)
	missesAfter := c.fills.Load()
	w := bench.CacheWindow{Messages: messages, Sessions: len(sessions), Reads: n,
		Database: phase(1, n, dbErrs, dbFirst, elapsed, fromDB), Cached: phase(1, n, cacheErrs, cacheFirst, elapsed, fromCache),
		Misses: int(missesAfter - missesBefore)}
	if w.Cached.Latency.P50MS > 0 {
		w.P50Speedup = w.Database.Latency.P50MS / w.Cached.Latency.P50MS
	}
	if w.Cached.Latency.P99MS > 0 {
		w.P99Speedup = w.Database.Latency.P99MS / w.Cached.Latency.P99MS
	}
	return w, nil
}

// countingCache is the Redis adapter, counting the reads it did not answer: every one fills
// the cache (a look-up without a window, or with one the use case refused).
type countingCache struct {
	*redis.Cache
	fills atomic.Int64
}

// Lookup is the adapter's, with a Fill that counts.
func (c *countingCache) Lookup(ctx context.Context, key adapter.CacheKey) (adapter.CacheLookup, error) {
	l, err := c.Cache.Lookup(ctx, key)
	if fill := l.Fill; fill != nil {
		l.Fill = func(ctx context.Context, payload []byte) error {
			c.fills.Add(1)
			return fill(ctx, payload)
		}
	}
	return l, err
}

// redactURL leaves a URL's password out of the log.
func redactURL(u string) string {
	if at := strings.LastIndex(u, "@"); at >= 0 {
		if i := strings.Index(u, "://"); i >= 0 {
			return u[:i+3] + "…" + u[at:]
		}
	}
	return u
}
