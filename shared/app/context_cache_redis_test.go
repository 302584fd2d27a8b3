package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	goredis "github.com/redis/go-redis/v9"

	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/memory"
)

// raw is a plain client of the rig's Redis, to read and rewrite what the adapter stored.
func (r *cacheRig) raw() *goredis.Client {
	r.t.Helper()
	opt, err := goredis.ParseURL(r.redis.URL())
	if err != nil {
		r.t.Fatal(err)
	}
	c := goredis.NewClient(opt)
	r.t.Cleanup(func() { c.Close() })
	return c
}

// userKeys are the keys Redis holds for a user.
func userKeys(t *testing.T, c *goredis.Client, user string) []string {
	t.Helper()
	keys, err := c.Keys(context.Background(), "agentmem:{"+user+"}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// holding lists the keys of the whole server whose value holds text anywhere (a string, a
// hash's fields and values, a set's or a list's members).
func holding(t *testing.T, c *goredis.Client, text string) []string {
	t.Helper()
	ctx := context.Background()
	var found []string
	iter := c.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		typ, err := c.Type(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		var values []string
		switch typ {
		case "string":
			v, err := c.Get(ctx, key).Result()
			if err != nil && err != goredis.Nil {
				t.Fatal(err)
			}
			values = []string{v}
		case "hash":
			m, err := c.HGetAll(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			for f, v := range m {
				values = append(values, f, v)
			}
		case "set":
			values, err = c.SMembers(ctx, key).Result()
		case "zset":
			values, err = c.ZRange(ctx, key, 0, -1).Result()
		case "list":
			values, err = c.LRange(ctx, key, 0, -1).Result()
		case "none":
		default:
			t.Fatalf("key %s of type %s", key, typ)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if strings.Contains(v, text) {
				found = append(found, key)
				break
			}
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return found
}

// A Redis that comes back with older data (a snapshot restored, a replica that lagged behind)
// holds a window, and the generations it was filled under, from before an acknowledged turn:
// it is never served again, the rollback costs a miss.
func TestContextCacheServesNoWindowOfARolledBackRedis(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: waits out the cache's settle time after its deliveries")
	}
	r := newCacheRig(t)
	raw := r.raw()
	ctx := context.Background()
	u := user()
	session := uuid.NewString()
	in := app.GetContextInput{SessionID: &session}
	r.commit(u, session, "one")
	r.deliver()
	r.get(u, in)
	if !r.servedFromCache(u, in, session) {
		t.Fatal("not served from the cache")
	}

	// The snapshot: every key of the user, as DUMP gives it, with its time to live.
	type saved struct {
		dump string
		ttl  time.Duration
	}
	snapshot := map[string]saved{}
	for _, k := range userKeys(t, raw, u.UserID) {
		d, err := raw.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl, err := raw.PTTL(ctx, k).Result()
		if err != nil || ttl <= 0 {
			t.Fatalf("%s: ttl %v %v", k, ttl, err)
		}
		snapshot[k] = saved{d, ttl}
	}
	if len(snapshot) == 0 {
		t.Fatal("nothing cached for the user")
	}

	// A turn acknowledged and delivered; the next read fills the cache with it.
	r.commit(u, session, "two")
	r.deliver()
	if got := r.get(u, in); !hasText(got, "two") {
		t.Fatalf("after the turn: %v", texts(got))
	}
	if !r.servedFromCache(u, in, session) {
		t.Fatal("the window with the turn was not cached")
	}

	// Redis rolls back to the snapshot.
	for _, k := range userKeys(t, raw, u.UserID) {
		if err := raw.Del(ctx, k).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for k, s := range snapshot {
		if err := raw.RestoreReplace(ctx, k, s.ttl, s.dump).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// get compares with the database's answer: the window of "one" alone fails it.
	if got := r.get(u, in); !hasText(got, "two") || len(got.Messages) != 4 {
		t.Fatalf("after the rollback: %v", texts(got))
	}
	if !r.servedFromCache(u, in, session) {
		t.Fatal("not served from the cache again after the rollback's miss")
	}
}

// However many request shapes a user asks for (every since, max_messages and max_tokens is a
// window of its own), what Redis holds for them stays within REDIS_USER_WINDOWS windows and
// REDIS_USER_BYTES bytes (their defaults here), in a fixed number of keys; the latest windows stay cached.
func TestContextCacheBoundsWhatAUserHolds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: waits out the cache's settle time after its deliveries")
	}
	r := newCacheRig(t)
	raw := r.raw()
	ctx := context.Background()
	u := user()
	session := uuid.NewString()
	// A window of about 240 kB: 4 messages of 60,000 characters.
	big := strings.Repeat("x", 60_000)
	msgs := make([]app.MessageInput, 4)
	for i := range msgs {
		msgs[i] = app.MessageInput{Role: ptr("user"), Content: json.RawMessage(fmt.Sprintf(`"%d %s"`, i, big))}
	}
	if _, err := r.cached.CommitTurn(ctx, u, app.CommitTurnInput{SessionID: &session, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	r.deliver()

	start := time.Now().Add(-time.Hour)
	shapes := 3 * redis.DefaultUserWindows
	var last app.GetContextInput
	for i := range shapes {
		in := app.GetContextInput{SessionID: &session}
		switch i % 3 {
		case 0:
			in.Since = ptr(start.Add(time.Duration(i) * time.Microsecond).Format(time.RFC3339Nano))
		case 1:
			in.MaxMessages = ptr(int64(4 + i))
		default:
			in.MaxTokens = ptr(int64(1_000_000 + i))
		}
		got, err := r.cached.GetContext(ctx, u, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != 4 {
			t.Fatalf("shape %d: %d messages", i, len(got.Messages))
		}
		last = in
	}

	keys := userKeys(t, raw, u.UserID)
	var size int64
	for _, k := range keys {
		n, err := raw.MemoryUsage(ctx, k, 0).Result() // every field, not a sample
		if err != nil {
			t.Fatal(err)
		}
		size += n
	}
	// The user's generation, the session's and the windows.
	if len(keys) > 3 {
		t.Errorf("%d keys for one user and session after %d shapes: %v", len(keys), shapes, keys[:min(len(keys), 5)])
	}
	// The bound counts the values' bytes; Redis's allocator rounds each large value up to its
	// size class (at most a quarter more).
	if limit := int64(redis.DefaultUserBytes) * 5 / 4; size > limit {
		t.Errorf("the user's keys take %d bytes after %d shapes, want at most %d", size, shapes, limit)
	}
	if !r.servedFromCache(u, last, session) {
		t.Error("the latest shape is not cached")
	}
}

// An erasure leaves none of the user's content in Redis: forget-user drops the user's windows
// before it answers, and a user deleted in Supabase Auth (whose erasure is a trigger of the
// database, which cannot reach Redis) once the fan-out's job for the cache is delivered.
func TestContextCacheErasureLeavesNoContentInRedis(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"forget-user", "forget-user of one tenant by the user", "auth deletion"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			r := newCacheRig(t)
			raw := r.raw()
			ctx := context.Background()
			u := user()
			if via == "auth deletion" {
				if _, err := r.db.Exec(ctx, `insert into auth.users (id, aud, role, email, created_at, updated_at)
					values ($1, 'authenticated', 'authenticated', $2, now(), now())`, u.UserID, u.UserID+"@example.com"); err != nil {
					t.Fatal(err)
				}
			}
			planted := "planted-" + uuid.NewString()
			s1, s2 := uuid.NewString(), uuid.NewString()
			r.commit(u, s1, planted+" in a message")
			r.commit(u, s2, "another session")
			if _, err := r.cached.EditNotes(ctx, u, memory.NotesAppend, app.NotesInput{Op: memory.NotesAppend,
				Content: ptr(planted + " in the notes")}); err != nil {
				t.Fatal(err)
			}
			r.deliver()
			for _, s := range []string{s1, s2} {
				in := app.GetContextInput{SessionID: &s}
				r.get(u, in)
				if !r.servedFromCache(u, in, s) {
					t.Fatalf("session %s not served from the cache", s)
				}
			}
			if len(holding(t, raw, planted)) == 0 {
				t.Fatal("the planted text is not in Redis before the erasure")
			}

			switch via {
			case "forget-user":
				if _, err := r.cached.ForgetUser(ctx, r.service, app.ForgetUserInput{
					ActingFor: app.ActingFor{UserID: ptr(u.UserID)}}); err != nil {
					t.Fatal(err)
				}
			case "forget-user of one tenant by the user":
				if _, err := r.cached.ForgetUser(ctx, u, app.ForgetUserInput{}); err != nil {
					t.Fatal(err)
				}
			default:
				if _, err := r.db.Exec(ctx, `delete from auth.users where id = $1`, u.UserID); err != nil {
					t.Fatal(err)
				}
				r.deliver()
			}
			if keys := holding(t, raw, planted); len(keys) != 0 {
				t.Fatalf("after the erasure (%s), Redis still holds the erased text in %v", via, keys)
			}
			for _, s := range []string{s1, s2} {
				if got := r.get(u, app.GetContextInput{SessionID: &s}); len(got.Messages) != 0 || got.Notes != nil {
					t.Fatalf("after the erasure: %v", texts(got))
				}
			}
		})
	}
}
