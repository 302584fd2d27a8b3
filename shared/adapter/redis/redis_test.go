package redis_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	goredis "github.com/redis/go-redis/v9"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/adapter/redis/redistest"
)

func newCache(t *testing.T, cfg redis.Config) *redis.Cache {
	t.Helper()
	c, err := redis.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func lookup(t *testing.T, c *redis.Cache, k adapter.CacheKey) adapter.CacheLookup {
	t.Helper()
	l, err := c.Lookup(context.Background(), k)
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	return l
}

func fill(t *testing.T, l adapter.CacheLookup, payload string) {
	t.Helper()
	if err := l.Fill(context.Background(), []byte(payload)); err != nil {
		t.Fatalf("fill: %v", err)
	}
}

// A window is served until a delivered job advances its session's or its user's generation,
// and a fill that arrives after such a job (it read the database before the change) is never
// served; syncSession changes nothing.
func TestWindowsFollowTheGenerations(t *testing.T) {
	t.Parallel()
	c := newCache(t, redis.Config{URL: redistest.URL(t)})
	ctx := context.Background()
	user, s1, s2 := uuid.New(), uuid.New(), uuid.New()
	k1 := adapter.CacheKey{UserID: user.String(), SessionID: s1, Shape: `["t","a",20]`}
	k1b := adapter.CacheKey{UserID: user.String(), SessionID: s1, Shape: `["t","a",50]`}
	k2 := adapter.CacheKey{UserID: user.String(), SessionID: s2, Shape: `["t","a",20]`}

	l := lookup(t, c, k1)
	if l.Payload != nil {
		t.Fatalf("a new key has a payload: %q", l.Payload)
	}
	fill(t, l, "window one")
	if got := lookup(t, c, k1).Payload; string(got) != "window one" {
		t.Fatalf("after the fill: %q", got)
	}
	if got := lookup(t, c, k1b).Payload; got != nil {
		t.Fatalf("another shape got the window: %q", got)
	}
	fill(t, lookup(t, c, k2), "window two")

	// syncSession changes nothing: both stay.
	if err := c.Deliver(ctx, adapter.Event{ID: uuid.New(), Type: adapter.SyncSession, UserID: user.String(), SessionID: &s1}); err != nil {
		t.Fatal(err)
	}
	if string(lookup(t, c, k1).Payload) != "window one" {
		t.Fatal("syncSession dropped a window")
	}

	// A turn committed in s1: its window goes, s2's stays.
	late := lookup(t, c, k1) // a reader that read the generations before the change...
	if err := c.Deliver(ctx, adapter.Event{ID: uuid.New(), Type: adapter.TurnCommitted, UserID: user.String(), SessionID: &s1}); err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, c, k1).Payload; got != nil {
		t.Fatalf("s1's window after its turn's job: %q", got)
	}
	if string(lookup(t, c, k2).Payload) != "window two" {
		t.Fatal("a turn of s1 dropped s2's window")
	}
	fill(t, late, "window read before the turn") // ...and fills after it
	if got := lookup(t, c, k1).Payload; got != nil {
		t.Fatalf("a fill that predates the change was served: %q", got)
	}
	fill(t, lookup(t, c, k1), "window one, again")
	if string(lookup(t, c, k1).Payload) != "window one, again" {
		t.Fatal("a fill after the change was not served")
	}

	// A change of the user (a memory, messages cleared, an erasure): every window goes.
	for _, typ := range []string{adapter.MemoryCreated, adapter.MessagesCleared, adapter.UserForgotten, "onSomethingNew"} {
		fill(t, lookup(t, c, k1), "w1")
		fill(t, lookup(t, c, k2), "w2")
		if err := c.Deliver(ctx, adapter.Event{ID: uuid.New(), Type: typ, UserID: user.String()}); err != nil {
			t.Fatal(err)
		}
		if lookup(t, c, k1).Payload != nil || lookup(t, c, k2).Payload != nil {
			t.Errorf("%s left a window", typ)
		}
	}
	// Another user's change leaves this user's windows alone.
	fill(t, lookup(t, c, k1), "w1")
	if err := c.Deliver(ctx, adapter.Event{ID: uuid.New(), Type: adapter.UserForgotten, UserID: uuid.NewString()}); err != nil {
		t.Fatal(err)
	}
	if string(lookup(t, c, k1).Payload) != "w1" {
		t.Error("another user's erasure dropped a window")
	}
}

// A generation that disappears (evicted, expired, the server restarted) comes back with a
// random value: a window filled under the old one never matches again.
func TestLostGenerationsNeverMatch(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	c := newCache(t, redis.Config{URL: url})
	user, session := uuid.New(), uuid.New()
	k := adapter.CacheKey{UserID: user.String(), SessionID: session, Shape: "s"}
	fill(t, lookup(t, c, k), "window")
	opt, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	raw := goredis.NewClient(opt)
	defer raw.Close()
	ctx := context.Background()
	keys, err := raw.Keys(ctx, "agentmem:{"+user.String()+"}:*").Result()
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys of the user: %v %v, want two generations and a window", keys, err)
	}
	for _, gen := range []string{"agentmem:{" + user.String() + "}:u", "agentmem:{" + user.String() + "}:s:" + session.String()} {
		fill(t, lookup(t, c, k), "window")
		if err := raw.Del(ctx, gen).Err(); err != nil {
			t.Fatal(err)
		}
		if got := lookup(t, c, k).Payload; got != nil {
			t.Errorf("after %s went, the window was served: %q", gen, got)
		}
	}
	// Every key has a time to live: nothing stays forever.
	for _, key := range keys {
		if ttl, err := raw.PTTL(ctx, key).Result(); err != nil || ttl <= 0 {
			t.Errorf("%s: ttl %v %v", key, ttl, err)
		}
	}
}

// rediss:// speaks TLS and checks the server's certificate: against the test's own authority it
// works; with the system's roots it refuses the throwaway certificate.
func TestTLS(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{TLS: true})
	c := newCache(t, redis.Config{URL: srv.TLSURL(), TLS: srv.TLSConfig()})
	if !c.TLS() {
		t.Fatal("rediss:// did not ask for TLS")
	}
	user, session := uuid.New(), uuid.New()
	k := adapter.CacheKey{UserID: user.String(), SessionID: session, Shape: "s"}
	fill(t, lookup(t, c, k), "over TLS")
	if string(lookup(t, c, k).Payload) != "over TLS" {
		t.Fatal("no window over TLS")
	}
	if err := c.Deliver(context.Background(), adapter.Event{ID: uuid.New(), Type: adapter.SessionReset, UserID: user.String(), SessionID: &session}); err != nil {
		t.Fatal(err)
	}
	if lookup(t, c, k).Payload != nil {
		t.Fatal("the reset's job left the window over TLS")
	}

	untrusted := newCache(t, redis.Config{URL: srv.TLSURL(), TLS: &tls.Config{MinVersion: tls.VersionTLS12}, Timeout: time.Second})
	if _, err := untrusted.Lookup(context.Background(), k); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a certificate of an unknown authority: %v", err)
	}
	// The plain port of the same server is not TLS: redis:// there works without it.
	plain := newCache(t, redis.Config{URL: srv.URL()})
	if plain.TLS() {
		t.Error("redis:// asked for TLS")
	}
	if _, err := plain.Lookup(context.Background(), k); err != nil {
		t.Errorf("plain port: %v", err)
	}
}

// A server that hangs or is gone fails a look-up within REDIS_TIMEOUT, and the cache then
// rests (Ready is false) rather than make the next requests wait; deliveries fail and are
// retried by the outbox. Once the server is back, everything works again; a restarted,
// empty server only misses.
func TestOutages(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	c := newCache(t, redis.Config{URL: srv.URL(), Timeout: 50 * time.Millisecond})
	ctx := context.Background()
	user, session := uuid.New(), uuid.New()
	k := adapter.CacheKey{UserID: user.String(), SessionID: session, Shape: "s"}
	fill(t, lookup(t, c, k), "before")
	ev := adapter.Event{ID: uuid.New(), Type: adapter.TurnCommitted, UserID: user.String(), SessionID: &session}

	srv.Pause()
	_, err := c.Lookup(ctx, k)
	if err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Fatalf("look-up on a paused server: %v", err)
	}
	if c.Ready() {
		t.Error("the cache is ready right after a failure")
	}
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = c.Deliver(dctx, ev)
	cancel()
	if err == nil {
		t.Error("a delivery to a paused server succeeded")
	}
	srv.Resume()
	waitReady(t, c)
	// The paused server kept its data: the window is there until the job is delivered.
	if string(lookup(t, c, k).Payload) != "before" {
		t.Fatal("the window is gone after the pause")
	}
	if err := c.Deliver(ctx, ev); err != nil {
		t.Fatalf("the retried delivery: %v", err)
	}
	if lookup(t, c, k).Payload != nil {
		t.Fatal("the window survived its job")
	}

	srv.Stop()
	if _, err := c.Lookup(ctx, k); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("look-up on a stopped server: %v", err)
	}
	if err := c.Deliver(ctx, ev); err == nil {
		t.Error("a delivery to a stopped server succeeded")
	}
	srv.Restart()
	waitReady(t, c)
	l := lookup(t, c, k)
	if l.Payload != nil {
		t.Fatal("an empty server had a window")
	}
	fill(t, l, "after")
	if string(lookup(t, c, k).Payload) != "after" {
		t.Fatal("no window after the restart")
	}
}

// waitReady waits out the rest after a failure.
func waitReady(t *testing.T, c *redis.Cache) {
	t.Helper()
	for i := 0; !c.Ready(); i++ {
		if i > 100 {
			t.Fatal("the cache never became ready again")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Errors name the failure, never the URL's password.
func TestErrorsHoldNoPassword(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{Password: "the-right-one"})
	c := newCache(t, redis.Config{URL: "redis://default:pw-of-redis@127.0.0.1:" + strings.TrimPrefix(srv.URL(), "redis://127.0.0.1:")})
	_, err := c.Lookup(context.Background(), adapter.CacheKey{UserID: uuid.NewString(), SessionID: uuid.New()})
	if err == nil || strings.Contains(err.Error(), "pw-of-redis") || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("a wrong password: %v", err)
	}
	good := newCache(t, redis.Config{URL: "redis://default:the-right-one@127.0.0.1:" + strings.TrimPrefix(srv.URL(), "redis://127.0.0.1:")})
	if _, err := good.Lookup(context.Background(), adapter.CacheKey{UserID: uuid.NewString(), SessionID: uuid.New()}); err != nil {
		t.Fatalf("the right password: %v", err)
	}
	if _, err := redis.New(redis.Config{URL: "http://pw-of-redis@h"}); err == nil || strings.Contains(err.Error(), "pw-of-redis") {
		t.Errorf("an http URL: %v", err)
	}
}

// rawClient is a plain client of url, to read what the adapter stored.
func rawClient(t *testing.T, url string) *goredis.Client {
	t.Helper()
	opt, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// stored is what Redis holds for a user: its keys, and every value of them that holds text.
func stored(t *testing.T, raw *goredis.Client, user uuid.UUID, text string) (keys, holding []string) {
	t.Helper()
	ctx := context.Background()
	keys, err := raw.Keys(ctx, "agentmem:{"+user.String()+"}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		var values []string
		if typ := raw.Type(ctx, k).Val(); typ == "hash" {
			values = raw.HVals(ctx, k).Val()
		} else {
			values = []string{raw.Get(ctx, k).Val()}
		}
		for _, v := range values {
			if strings.Contains(v, text) {
				holding = append(holding, k)
				break
			}
		}
	}
	return keys, holding
}

// A user's windows stay within REDIS_USER_WINDOWS and REDIS_USER_BYTES (here their defaults) whatever the shapes asked for: the
// oldest go first, a window larger than the whole budget is not stored, and the user's keys
// stay the user's generation, the session's and one hash.
func TestAUsersWindowsAreBounded(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	c := newCache(t, redis.Config{URL: url})
	raw := rawClient(t, url)
	user, session := uuid.New(), uuid.New()
	key := func(i int) adapter.CacheKey {
		return adapter.CacheKey{UserID: user.String(), SessionID: session, Shape: fmt.Sprintf(`["since",%d]`, i)}
	}
	n := redis.DefaultUserWindows + 8
	for i := range n {
		fill(t, lookup(t, c, key(i)), fmt.Sprintf("window %d", i))
	}
	for i := range n {
		got := lookup(t, c, key(i)).Payload
		if want := i >= n-redis.DefaultUserWindows; (got != nil) != want {
			t.Errorf("shape %d of %d cached %v, want %v", i, n, got != nil, want)
		}
	}
	if keys, _ := stored(t, raw, user, ""); len(keys) != 3 {
		t.Errorf("keys of the user: %v, want two generations and the windows", keys)
	}

	// Large windows: the bytes bound drops the oldest, the newest stays.
	big := strings.Repeat("b", redis.DefaultUserBytes/3)
	for i := range 4 {
		fill(t, lookup(t, c, key(100+i)), fmt.Sprintf("%d %s", i, big))
	}
	var sum int64
	for _, v := range raw.HGetAll(context.Background(), "agentmem:{"+user.String()+"}:w").Val() {
		sum += int64(len(v))
	}
	if sum > redis.DefaultUserBytes+1024 {
		t.Errorf("the user's windows hold %d bytes, more than %d", sum, redis.DefaultUserBytes)
	}
	if got := lookup(t, c, key(103)).Payload; !strings.HasPrefix(string(got), "3 ") {
		t.Error("the newest large window is not cached")
	}
	if lookup(t, c, key(100)).Payload != nil {
		t.Error("the oldest large window is still cached past the bound")
	}
	// Larger than the budget alone: not stored, and the shape's older window goes.
	fill(t, lookup(t, c, key(103)), strings.Repeat("h", redis.DefaultUserBytes+1))
	if got := lookup(t, c, key(103)).Payload; got != nil {
		t.Errorf("a window larger than the budget, or the one it replaced, is cached: %d bytes", len(got))
	}
}

// A window is not served REDIS_TTL after its fill, though the user's hash lives on while
// other windows are filled; the next fill drops it.
func TestWindowsExpireOneByOne(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	c := newCache(t, redis.Config{URL: url, TTL: time.Second})
	raw := rawClient(t, url)
	user, session := uuid.New(), uuid.New()
	old := adapter.CacheKey{UserID: user.String(), SessionID: session, Shape: "old"}
	fresh := adapter.CacheKey{UserID: user.String(), SessionID: session, Shape: "fresh"}
	fill(t, lookup(t, c, old), "old window")
	time.Sleep(700 * time.Millisecond)
	fill(t, lookup(t, c, fresh), "fresh window")
	time.Sleep(400 * time.Millisecond)
	if got := lookup(t, c, old).Payload; got != nil {
		t.Errorf("a window past REDIS_TTL was served: %q", got)
	}
	if string(lookup(t, c, fresh).Payload) != "fresh window" {
		t.Error("a window within REDIS_TTL was not served")
	}
	fill(t, lookup(t, c, adapter.CacheKey{UserID: user.String(), SessionID: session, Shape: "another"}), "another")
	if _, holding := stored(t, raw, user, "old window"); len(holding) != 0 {
		t.Errorf("a window past REDIS_TTL is still stored after a fill: %v", holding)
	}
}

// A delivery deletes the windows it makes stale, so deleted and erased content leaves Redis
// with it: a session's change its session's windows, a change of the user (an erasure) all of
// them, as DropUser does; a fill that read the database before the delivery stores nothing.
func TestDeliveriesDeleteStaleWindows(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	c := newCache(t, redis.Config{URL: url})
	raw := rawClient(t, url)
	ctx := context.Background()
	for _, erase := range []string{"delivery", "DropUser"} {
		t.Run(erase, func(t *testing.T) {
			user, s1, s2 := uuid.New(), uuid.New(), uuid.New()
			k1 := adapter.CacheKey{UserID: user.String(), SessionID: s1, Shape: "s"}
			k2 := adapter.CacheKey{UserID: user.String(), SessionID: s2, Shape: "s"}
			fill(t, lookup(t, c, k1), "secret of s1")
			fill(t, lookup(t, c, k2), "secret of s2")

			late := lookup(t, c, k1)
			if err := c.Deliver(ctx, adapter.Event{ID: uuid.New(), Type: adapter.MessageDeleted, UserID: user.String(), SessionID: &s1}); err != nil {
				t.Fatal(err)
			}
			fill(t, late, "secret of s1, read before the delete")
			if _, holding := stored(t, raw, user, "secret of s1"); len(holding) != 0 {
				t.Fatalf("s1's content after its delete's delivery: %v", holding)
			}
			if string(lookup(t, c, k2).Payload) != "secret of s2" {
				t.Fatal("a change of s1 dropped s2's window")
			}

			late = lookup(t, c, k2)
			if erase == "DropUser" {
				if err := c.DropUser(ctx, user.String()); err != nil {
					t.Fatal(err)
				}
			} else if err := c.Deliver(ctx, adapter.Event{ID: uuid.New(), Type: adapter.UserForgotten, UserID: user.String()}); err != nil {
				t.Fatal(err)
			}
			fill(t, late, "secret of s2, read before the erasure")
			if _, holding := stored(t, raw, user, "secret"); len(holding) != 0 {
				t.Fatalf("content after the erasure: %v", holding)
			}
		})
	}
}

// hashTag is the part of key Redis Cluster hashes: what lies between the first "{" and the
// first "}" after it, when that is not empty; else the whole key.
func hashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// User ids of any shape (third-party auth's, and ids with braces or glob characters) keep their
// windows apart: each user's keys share one non-empty hash tag of their own, and one user's
// erasure drops that user's windows only.
func TestUserIDsOfAnyShapeKeepTheirOwnKeys(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	c := newCache(t, redis.Config{URL: url})
	opt, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	raw := goredis.NewClient(opt)
	defer raw.Close()
	ctx := context.Background()
	suffix := uuid.NewString() // the Redis server is shared by parallel tests
	users := []string{"user_2abc" + suffix, "auth0|" + suffix, "}" + suffix, "a}b{" + suffix, "*" + suffix,
		"~" + suffix, "é " + suffix}
	session := uuid.New()
	tags := map[string]string{}
	for _, u := range users {
		k := adapter.CacheKey{UserID: u, SessionID: session, Shape: "s"}
		fill(t, lookup(t, c, k), "window of "+u)
		tag := redis.UserTag(u)
		if other, dup := tags[tag]; dup {
			t.Fatalf("users %q and %q share the tag %q", u, other, tag)
		}
		tags[tag] = u
		keys, err := raw.Keys(ctx, "agentmem:{"+tag+"}:*").Result()
		if err != nil || len(keys) != 3 {
			t.Fatalf("keys of %q: %v %v, want two generations and a window", u, keys, err)
		}
		for _, key := range keys {
			if got := hashTag(key); got != tag {
				t.Errorf("key %q of %q hashes on %q, want %q", key, u, got, tag)
			}
		}
	}
	if err := c.Deliver(ctx, adapter.Event{ID: uuid.New(), Type: adapter.UserForgotten, UserID: users[2]}); err != nil {
		t.Fatal(err)
	}
	for i, u := range users {
		got := lookup(t, c, adapter.CacheKey{UserID: u, SessionID: session, Shape: "s"}).Payload
		if i == 2 && got != nil {
			t.Errorf("the erased user's window stayed: %q", got)
		}
		if i != 2 && string(got) != "window of "+u {
			t.Errorf("%q's window after another user's erasure: %q", u, got)
		}
	}
}
