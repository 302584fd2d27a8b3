package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/adapter/redis/redistest"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/redact"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// BenchmarkContextCache reads get-context (the last 20 of 40 messages) through the use case:
// from the database (no cache), and through the Redis cache (AGENTMEM_TEST_REDIS_URL), a hit
// (the check and the look-up at the same time, then the decode) or a miss (the database's
// read and the fill after them).
func BenchmarkContextCache(b *testing.B) {
	e := storetest.New(b, storetest.MaxConns(4), storetest.Adapters(adapter.Redis))
	cache, err := redis.New(redis.Config{URL: redistest.URL(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cache.Close() })
	red, err := redact.New("a-salt-of-more-than-sixteen-bytes")
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	counted := &fillCounter{Cache: cache}
	cached := app.New(e.Store, log, app.Config{Adapters: map[string]adapter.Adapter{adapter.Redis: counted}, Redactor: red,
		CacheSettle: app.DefaultCacheSettle})
	direct := app.New(e.Store, log, app.Config{})
	ctx := context.Background()
	u := auth.Principal{Role: auth.RoleUser, UserID: uuid.NewString()}
	session := uuid.NewString()
	for i := range 20 {
		_, err := cached.CommitTurn(ctx, u, app.CommitTurnInput{SessionID: &session, Messages: []app.MessageInput{
			{Role: ptr("user"), Content: json.RawMessage(fmt.Sprintf(`"Question %d: what should I pack for a week of hiking in the Alps in May?"`, i))},
			{Role: ptr("assistant"), Content: json.RawMessage(fmt.Sprintf(`"Answer %d: layers, a rain shell, broken-in boots, a warm hat and sun cream."`, i))}}})
		if err != nil {
			b.Fatal(err)
		}
	}
	if _, err := cached.ProcessJobs(ctx, auth.Principal{Role: auth.RoleService}, app.ProcessJobsInput{}); err != nil {
		b.Fatal(err)
	}
	time.Sleep(app.DefaultCacheSettle + 100*time.Millisecond)
	in := app.GetContextInput{SessionID: &session}
	read := func(b *testing.B, a *app.App, in app.GetContextInput) {
		out, err := a.GetContext(ctx, u, in)
		if err != nil || len(out.Messages) != 20 {
			b.Fatalf("%d messages, %v", len(out.Messages), err)
		}
	}
	read(b, cached, in) // fills the cache
	b.Run("database", func(b *testing.B) {
		for b.Loop() {
			read(b, direct, in)
		}
	})
	b.Run("hit", func(b *testing.B) {
		before := counted.fills.Load()
		for b.Loop() {
			read(b, cached, in)
		}
		if n := counted.fills.Load() - before; n != 0 {
			b.Fatalf("%d reads were not hits", n)
		}
	})
	b.Run("miss", func(b *testing.B) {
		// Every read a shape of its own (a since before the session): never cached yet.
		since := time.Now().Add(-time.Hour)
		i := 0
		for b.Loop() {
			i++
			s := since.Add(time.Duration(i) * time.Microsecond).Format(time.RFC3339Nano)
			read(b, cached, app.GetContextInput{SessionID: &session, Since: &s})
		}
	})
}

// fillCounter is the Redis adapter, counting the windows filled: every read the cache did not
// answer fills it.
type fillCounter struct {
	*redis.Cache
	fills atomic.Int64
}

// Lookup is the adapter's, with a Fill that counts.
func (c *fillCounter) Lookup(ctx context.Context, key adapter.CacheKey) (adapter.CacheLookup, error) {
	l, err := c.Cache.Lookup(ctx, key)
	if fill := l.Fill; fill != nil {
		l.Fill = func(ctx context.Context, payload []byte) error {
			c.fills.Add(1)
			return fill(ctx, payload)
		}
	}
	return l, err
}
