package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/adapter/redis/redistest"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/redact"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// cacheRig is an App with the Redis cache over a private redis-server, the same App without
// the cache (the database's answer to compare with), and a superuser connection that changes
// rows behind the outbox's back: a change no job announces is only seen when the database
// answers, which tells a cached answer from a fresh one.
type cacheRig struct {
	t       *testing.T
	cached  *app.App
	direct  *app.App
	redis   *redistest.Server
	cache   *redis.Cache
	db      *pgx.Conn
	st      *store.Store
	env     *storetest.Env
	service auth.Principal
}

func newCacheRig(t *testing.T) *cacheRig {
	t.Helper()
	e := storetest.New(t, storetest.MaxConns(4), storetest.Adapters(adapter.Redis))
	st := e.Store
	srv := redistest.Start(t, redistest.Options{})
	cache, err := redis.New(redis.Config{URL: srv.URL(), Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	red, err := redact.New("a-salt-of-more-than-sixteen-bytes")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &cacheRig{t: t, st: st, env: e, redis: srv, cache: cache, db: e.Admin(t), service: auth.Principal{Role: auth.RoleService},
		cached: app.New(st, log, app.Config{Adapters: map[string]adapter.Adapter{adapter.Redis: cache}, Redactor: red,
			Jobs: app.JobsConfig{BackoffBase: time.Millisecond, BackoffMax: time.Millisecond}, CacheSettle: testSettle}),
		direct: app.New(st, log, app.Config{})}
}

func (r *cacheRig) commit(u auth.Principal, session, text string) {
	r.t.Helper()
	_, err := r.cached.CommitTurn(context.Background(), u, app.CommitTurnInput{SessionID: &session,
		Messages: []app.MessageInput{{Role: ptr("user"), Content: json.RawMessage(`"` + text + `"`)},
			{Role: ptr("assistant"), Content: json.RawMessage(`"ok: ` + text + `"`)}}})
	if err != nil {
		r.t.Fatalf("commit %q: %v", text, err)
	}
}

// testSettle is the rig's CacheSettle: a cached answer is served again that long after a
// delivery.
const testSettle = time.Second

// deliver runs process-jobs until no job is due, checks none is left undelivered, and waits
// until the cache may serve again.
func (r *cacheRig) deliver() {
	r.t.Helper()
	for range 20 {
		out, err := r.cached.ProcessJobs(context.Background(), r.service, app.ProcessJobsInput{})
		if err != nil {
			r.t.Fatal(err)
		}
		if out.Processed == 0 && !out.More {
			break
		}
	}
	var n int
	if err := r.db.QueryRow(context.Background(), `select count(*) from agentmem.jobs where status <> 'done'`).Scan(&n); err != nil || n != 0 {
		r.t.Fatalf("%d jobs undelivered (%v)", n, err)
	}
	time.Sleep(testSettle)
}

// get asks both Apps and checks the cached one answers what the database holds, rendered the
// same in every format.
func (r *cacheRig) get(u auth.Principal, in app.GetContextInput) memory.Context {
	r.t.Helper()
	ctx := context.Background()
	var first memory.Context
	for i, format := range []string{app.FormatRaw, app.FormatOpenAI, app.FormatAnthropic} {
		in.Format = &format
		got, err := r.cached.GetContext(ctx, u, in)
		if err != nil {
			r.t.Fatalf("get-context through the cache: %v", err)
		}
		want, err := r.direct.GetContext(ctx, u, in)
		if err != nil {
			r.t.Fatal(err)
		}
		g, err := json.Marshal(app.RenderContext(got))
		if err != nil {
			r.t.Fatalf("%s: the answer through the cache does not marshal: %v", format, err)
		}
		w, _ := json.Marshal(app.RenderContext(want))
		if string(g) != string(w) {
			r.t.Fatalf("%s: through the cache\n%s\nfrom the database\n%s", format, g, w)
		}
		if i == 0 {
			first = got.Context
		}
	}
	return first
}

// behindTheCache rewrites the first message of the session without a job, and says whether
// the cached App then still answers the old text: whether its window comes from the cache.
func (r *cacheRig) servedFromCache(u auth.Principal, in app.GetContextInput, session string) bool {
	r.t.Helper()
	ctx := context.Background()
	var old string
	if err := r.db.QueryRow(ctx, `update agentmem.messages m set content = m.content || ' (changed)'
		from agentmem.messages o where m.id = o.id and m.session_id = $1 and m.seq = 1 returning o.content`, session).Scan(&old); err != nil {
		r.t.Fatal(err)
	}
	defer func() {
		if _, err := r.db.Exec(ctx, `update agentmem.messages set content = $2 where session_id = $1 and seq = 1`, session, old); err != nil {
			r.t.Fatal(err)
		}
	}()
	got, err := r.cached.GetContext(ctx, u, in)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, m := range got.Messages {
		if m.Seq == 1 {
			return m.Content == old
		}
	}
	r.t.Fatalf("no first message in the window")
	return false
}

func texts(c memory.Context) []string {
	out := make([]string, len(c.Messages))
	for i, m := range c.Messages {
		out[i] = m.Content
	}
	return out
}

func hasText(c memory.Context, text string) bool {
	for _, m := range c.Messages {
		if m.Content == text {
			return true
		}
	}
	return false
}

// get-context through the Redis cache answers what the database holds; a client reads its
// own acknowledged change at once, before its job is delivered, and also after Redis was
// unreachable while the change's job waited, with the older window still in Redis under
// generations nothing advanced.
func TestContextCacheReadsYourWrites(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: waits out the cache's settle time after its deliveries")
	}
	r := newCacheRig(t)
	u := user()
	session := uuid.NewString()
	in := app.GetContextInput{SessionID: &session}
	r.commit(u, session, "one")
	r.deliver()

	if got := r.get(u, in); len(got.Messages) != 2 {
		t.Fatalf("first read: %v", texts(got))
	}
	if !r.servedFromCache(u, in, session) {
		t.Fatal("the second read did not come from the cache")
	}

	// A new turn, its job not delivered yet: the next read has it.
	r.commit(u, session, "two")
	if got := r.get(u, in); !hasText(got, "two") {
		t.Fatalf("own turn missing before delivery: %v", texts(got))
	}
	if r.servedFromCache(u, in, session) {
		t.Fatal("served from the cache with a job undelivered")
	}
	r.deliver()
	if got := r.get(u, in); !hasText(got, "two") || len(got.Messages) != 4 {
		t.Fatalf("after delivery: %v", texts(got))
	}
	if !r.servedFromCache(u, in, session) {
		t.Fatal("not served from the cache once delivered")
	}

	// Redis hangs while a turn commits and its job waits: reads answer from the database.
	r.redis.Pause()
	r.commit(u, session, "three")
	if got := r.get(u, in); !hasText(got, "three") {
		t.Fatalf("own turn missing while Redis hangs: %v", texts(got))
	}
	// Redis is back, with the window of "two" under generations nothing advanced (the job of
	// "three" was never delivered): it is not served.
	r.redis.Resume()
	waitCacheReady(t, r.cache)
	if got := r.get(u, in); !hasText(got, "three") {
		t.Fatalf("a window older than the client's own turn after Redis came back: %v", texts(got))
	}
	if r.servedFromCache(u, in, session) {
		t.Fatal("served from the cache with a job undelivered after the outage")
	}
	r.deliver()
	r.get(u, in)
	if !r.servedFromCache(u, in, session) {
		t.Fatal("not served from the cache after the outage ended")
	}

	// Redis gone: get-context still answers, from the database.
	r.redis.Stop()
	r.commit(u, session, "four")
	if got := r.get(u, in); !hasText(got, "four") {
		t.Fatalf("own turn missing while Redis is down: %v", texts(got))
	}
}

// Every change is seen at once: of key/value memory, state and notes (whose functions write a
// job for the cache only), a message deleted, an erasure;
// a message that expires leaves the cached window; requests with a query skip the cache.
func TestContextCacheNeverServesAChangeStale(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: waits out the cache's settle time after its deliveries")
	}
	r := newCacheRig(t)
	ctx := context.Background()
	u := user()
	session := uuid.NewString()
	in := app.GetContextInput{SessionID: &session}
	for _, text := range []string{"one", "two", "three"} {
		r.commit(u, session, text)
	}
	r.deliver()
	r.get(u, in)
	if !r.servedFromCache(u, in, session) {
		t.Fatal("not served from the cache")
	}

	// Key/value memory, state and notes: each change writes a job for the cache alone, seen on
	// the very next read, then cached.
	if _, err := r.cached.SetUserMemory(ctx, u, app.UserMemoryInput{Op: app.UserMemoryOpSet, Key: ptr("city"), Value: json.RawMessage(`{"name":"Lyon"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cached.SetUserState(ctx, u, app.UserStateInput{Op: app.UserStateOpSet, Mode: ptr("halted")}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cached.EditNotes(ctx, u, memory.NotesAppend, app.NotesInput{Op: memory.NotesAppend, Content: ptr("Likes trains.")}); err != nil {
		t.Fatal(err)
	}
	got := r.get(u, in)
	if compact(got.UserMemory["city"]) != `{"name":"Lyon"}` || got.State == nil || *got.State != "halted" || got.Notes == nil {
		t.Fatalf("fresh parts: %s %v %v", got.UserMemory["city"], got.State, got.Notes)
	}
	var n int
	if err := r.db.QueryRow(ctx, `select count(*) from agentmem.jobs where user_id = $1 and intent = 'onUserDataChanged'
		and adapter = 'redis'`, u.UserID).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d jobs of user data changes (%v), want 3", n, err)
	}
	if r.servedFromCache(u, in, session) {
		t.Fatal("served from the cache with the user data's jobs undelivered")
	}
	r.deliver()
	r.get(u, in)
	if !r.servedFromCache(u, in, session) {
		t.Fatal("not served from the cache after the user data's jobs")
	}
	if got := r.get(u, in); compact(got.UserMemory["city"]) != `{"name":"Lyon"}` || got.State == nil || got.Notes == nil {
		t.Fatalf("cached parts: %s %v %v", got.UserMemory["city"], got.State, got.Notes)
	}

	// A message deleted: gone at once.
	var id string
	if err := r.db.QueryRow(ctx, `select id from agentmem.messages where session_id = $1 and seq = 6`, session).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cached.DeleteMessage(ctx, u, app.SessionChangeInput{SessionID: &session, MessageID: &id}); err != nil {
		t.Fatal(err)
	}
	if got := r.get(u, in); hasText(got, "ok: three") || len(got.Messages) != 5 {
		t.Fatalf("after the delete: %v", texts(got))
	}
	r.deliver()
	r.get(u, in)
	if !r.servedFromCache(u, in, session) {
		t.Fatal("not served from the cache after the delete's job")
	}

	// A message whose retention ran out leaves the window, before any sweep.
	if _, err := r.db.Exec(ctx, `update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1 and seq = 5`, session); err != nil {
		t.Fatal(err)
	}
	if got := r.get(u, in); hasText(got, "three") || len(got.Messages) != 4 {
		t.Fatalf("an expired message was served: %v", texts(got))
	}

	// A query recalls memories: never from the cache.
	q := in
	q.Query = ptr("trains")
	r.get(u, q)
	if r.servedFromCache(u, q, session) {
		t.Fatal("a request with a query was served from the cache")
	}

	// An erasure: nothing of the user is served afterwards.
	if _, err := r.cached.ForgetUser(ctx, r.service, app.ForgetUserInput{ActingFor: app.ActingFor{UserID: ptr(u.UserID)}}); err != nil {
		t.Fatal(err)
	}
	if got := r.get(u, in); len(got.Messages) != 0 || len(got.UserMemory) != 0 || got.Notes != nil {
		t.Fatalf("after the erasure: %v %v", texts(got), got.UserMemory)
	}
	r.deliver()
	if got := r.get(u, in); len(got.Messages) != 0 {
		t.Fatalf("after the erasure's job: %v", texts(got))
	}
}

// A user deleted in Supabase Auth: the trigger's erasure keeps the user's reads off the cache
// until its fan-out job is expanded and the Redis adapter's share delivered, and the cached
// window is never served again afterwards, though no request of the user wrote a job.
func TestContextCacheForgetsAUserDeletedInAuth(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: waits out the cache's settle time after its deliveries")
	}
	r := newCacheRig(t)
	ctx := context.Background()
	u := user()
	if _, err := r.db.Exec(ctx, `insert into auth.users (id, aud, role, email, created_at, updated_at)
		values ($1, 'authenticated', 'authenticated', $2, now(), now())`, u.UserID, u.UserID+"@example.com"); err != nil {
		t.Fatal(err)
	}
	session := uuid.NewString()
	in := app.GetContextInput{SessionID: &session}
	for _, text := range []string{"one", "two"} {
		r.commit(u, session, text)
	}
	r.deliver()
	r.get(u, in)
	if !r.servedFromCache(u, in, session) {
		t.Fatal("not served from the cache")
	}
	if _, err := r.db.Exec(ctx, `delete from auth.users where id = $1`, u.UserID); err != nil {
		t.Fatal(err)
	}
	// get compares with the database's answer: a window served from the cache fails it.
	if got := r.get(u, in); len(got.Messages) != 0 {
		t.Fatalf("before the fan-out: %v", texts(got))
	}
	r.deliver()
	var jobs []string
	if err := r.db.QueryRow(ctx, `select array_agg(adapter || ':' || intent || ':' || status order by adapter)
		from agentmem.jobs where user_id = $1 and created_at > now() - interval '1 minute' and intent = 'onUserForgotten'`,
		u.UserID).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if want := []string{"fanout:onUserForgotten:done", "redis:onUserForgotten:done"}; !slices.Equal(jobs, want) {
		t.Fatalf("jobs %v, want %v", jobs, want)
	}
	if got := r.get(u, in); len(got.Messages) != 0 {
		t.Fatalf("after the fan-out: %v", texts(got))
	}
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func waitCacheReady(t *testing.T, c *redis.Cache) {
	t.Helper()
	for i := 0; !c.Ready(); i++ {
		if i > 100 {
			t.Fatal("the cache never became ready again")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A window holding a message whose retention runs out soon is not served from the cache: the
// sweep may delete the message, which no job announces, and the cached copy would outlive it.
// A window of long-lived messages is.
func TestContextCacheKeepsNoWindowPastItsRetention(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: waits out the cache's settle time after its deliveries")
	}
	r := newCacheRig(t)
	u := user()
	commit := func(session string, ttl int64) {
		t.Helper()
		_, err := r.cached.CommitTurn(context.Background(), u, app.CommitTurnInput{SessionID: &session, TTLSeconds: &ttl,
			Messages: []app.MessageInput{{Role: ptr("user"), Content: json.RawMessage(`"brief"`)}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	short, long := uuid.NewString(), uuid.NewString()
	commit(short, int64(app.ExpiryMarginForTest.Seconds())/2) // expires within the margin
	commit(long, 3600)
	r.deliver()
	for _, tc := range []struct {
		session string
		served  bool
	}{{short, false}, {long, true}} {
		t.Run(tc.session, func(t *testing.T) {
			in := app.GetContextInput{SessionID: &tc.session}
			if got := r.get(u, in); len(got.Messages) != 1 {
				t.Fatalf("session %s: %d messages, want 1", tc.session, len(got.Messages))
			}
			if served := r.servedFromCache(u, in, tc.session); served != tc.served {
				t.Errorf("session %s: served from the cache %v, want %v", tc.session, served, tc.served)
			}
		})
	}
}

// A dead job of the cache (or an erasure's fan-out) keeps the user's reads off it, so a purge
// leaves it until every window that may predate its change has expired (REDIS_TTL after it
// died); dead jobs of other adapters, and older dead jobs of the cache, go at once.
func TestPurgeKeepsTheCachesDeadJobsItsRetention(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: waits out the cache's settle time after its deliveries")
	}
	r := newCacheRig(t)
	ctx := context.Background()
	u := user()
	session := uuid.NewString()
	r.commit(u, session, "one")
	if _, err := r.db.Exec(ctx, `update agentmem.jobs set status = 'dead', updated_at = now() where user_id = $1`, u.UserID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.Exec(ctx, `insert into agentmem.jobs (id, event_id, user_id, intent, adapter, status, updated_at)
		values (gen_random_uuid(), gen_random_uuid(), $1, 'onTurnCommitted', 'webhook', 'dead', now()),
		       (gen_random_uuid(), gen_random_uuid(), $1, 'onUserForgotten', 'fanout', 'dead', now())`, u.UserID); err != nil {
		t.Fatal(err)
	}
	purge := func(status string) int64 {
		t.Helper()
		out, err := r.cached.PurgeJobs(ctx, r.service, app.PurgeJobsInput{Status: &status})
		if err != nil {
			t.Fatal(err)
		}
		return out.Deleted
	}
	if n := purge("dead"); n != 1 {
		t.Fatalf("purged %d dead jobs, want the webhook's only", n)
	}
	var left string
	if err := r.db.QueryRow(ctx, `select string_agg(adapter, ',' order by adapter) from agentmem.jobs where user_id = $1`,
		u.UserID).Scan(&left); err != nil || left != "fanout,redis" {
		t.Fatalf("jobs left %q (%v), want the cache's and the erasure's fan-out", left, err)
	}
	if _, err := r.db.Exec(ctx, `update agentmem.jobs set updated_at = now() - $2::interval where user_id = $1`,
		u.UserID, (redis.DefaultTTL + time.Minute).String()); err != nil {
		t.Fatal(err)
	}
	if n := purge("dead"); n != 2 {
		t.Fatalf("purged %d dead jobs past the cache's retention, want 2", n)
	}

	// A done job of the cache stays for the settle time, whatever older_than_seconds says.
	r.commit(u, session, "two")
	r.deliver() // waits out the settle time: make the job's delivery recent again
	if _, err := r.db.Exec(ctx, `update agentmem.jobs set updated_at = now() where user_id = $1`, u.UserID); err != nil {
		t.Fatal(err)
	}
	if n := purge("done"); n != 0 {
		t.Fatalf("purged %d done jobs of the cache within the settle time", n)
	}
	time.Sleep(testSettle)
	if n := purge("done"); n != 1 {
		t.Fatalf("purged %d done jobs of the cache after the settle time, want 1", n)
	}
}

// An erasure's fan-out claimed by a process without adapters (an operator's process-jobs run
// without ADAPTERS) is not finished there, which would leave the adapters untold: it waits for
// a process with them.
func TestFanoutWaitsForAProcessWithAdapters(t *testing.T) {
	t.Parallel()
	r := newCacheRig(t)
	ctx := context.Background()
	u := user()
	if _, err := r.db.Exec(ctx, `insert into agentmem.jobs (id, event_id, user_id, intent, adapter, refs)
		values (gen_random_uuid(), gen_random_uuid(), $1, 'onUserForgotten', 'fanout', '{"all_tenants": true}')`, u.UserID); err != nil {
		t.Fatal(err)
	}
	bare := app.New(storetest.Open(t, r.env.DB), slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	if _, err := bare.ProcessJobs(ctx, r.service, app.ProcessJobsInput{}); err != nil {
		t.Fatal(err)
	}
	var status string
	var lastErr *string
	if err := r.db.QueryRow(ctx, `select status, last_error from agentmem.jobs where user_id = $1 and adapter = 'fanout'`,
		u.UserID).Scan(&status, &lastErr); err != nil {
		t.Fatal(err)
	}
	if status != "pending" || lastErr == nil || *lastErr != store.ErrNoAdapters.Error() {
		t.Fatalf("the fan-out after a process without adapters: %s, %v", status, lastErr)
	}
	if _, err := r.db.Exec(ctx, `update agentmem.jobs set next_attempt_at = now() where user_id = $1`, u.UserID); err != nil {
		t.Fatal(err)
	}
	r.deliver()
	var jobs []string
	if err := r.db.QueryRow(ctx, `select array_agg(adapter || ':' || status order by adapter) from agentmem.jobs where user_id = $1`,
		u.UserID).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if want := []string{"fanout:done", "redis:done"}; !slices.Equal(jobs, want) {
		t.Fatalf("jobs %v, want %v", jobs, want)
	}
}

// The cache's check failing (here, its function missing, as between a deployment's code and its
// migration) serves no cached answer and fails no request: the database answers.
func TestContextCacheCheckFailingReadsTheDatabase(t *testing.T) {
	t.Parallel()
	r := newCacheRig(t)
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
	if _, err := r.db.Exec(ctx, `drop function agentmem.check_context_cache(text, text, uuid, text, integer)`); err != nil {
		t.Fatal(err)
	}
	if r.servedFromCache(u, in, session) {
		t.Fatal("served from the cache without its check")
	}
	r.get(u, in)
}

// tamper rewrites the one window cached for the session, under its generations, with what
// change makes of its payload: what whoever can write to Redis can do.
func (r *cacheRig) tamper(u auth.Principal, session string, change func(payload []byte) []byte) {
	r.t.Helper()
	ctx := context.Background()
	opt, err := goredis.ParseURL(r.redis.URL())
	if err != nil {
		r.t.Fatal(err)
	}
	c := goredis.NewClient(opt)
	defer c.Close()
	// The user's windows are the fields "<session>:<shape>" of one hash (and their times, "t:...").
	key := "agentmem:{" + u.UserID + "}:w"
	fields, err := c.HKeys(ctx, key).Result()
	if err != nil {
		r.t.Fatal(err)
	}
	var windows []string
	for _, f := range fields {
		if strings.HasPrefix(f, session+":") {
			windows = append(windows, f)
		}
	}
	if len(windows) != 1 {
		r.t.Fatalf("cached windows of the session: %v", windows)
	}
	v, err := c.HGet(ctx, key, windows[0]).Bytes()
	if err != nil {
		r.t.Fatal(err)
	}
	// "<user generation>:<session generation>:" and the payload.
	n := bytes.IndexByte(v, ':')
	n += 1 + bytes.IndexByte(v[n+1:], ':') + 1
	out := append(bytes.Clone(v[:n]), change(v[n:])...)
	if err := c.HSet(ctx, key, windows[0], out).Err(); err != nil {
		r.t.Fatal(err)
	}
}

// editWindow changes a cached window's payload as a map of its fields.
func editWindow(t *testing.T, edit func(w map[string]any)) func([]byte) []byte {
	return func(payload []byte) []byte {
		dec, err := cbor.DecOptions{DefaultMapType: reflect.TypeOf(map[string]any(nil))}.DecMode()
		if err != nil {
			t.Fatal(err)
		}
		var w map[string]any
		if err := dec.Unmarshal(payload, &w); err != nil {
			t.Fatalf("the cached window does not decode: %v", err)
		}
		edit(w)
		out, err := cbor.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// A cached window that is not one the database could have given (not a window at all, a
// message of no known role, metadata, content parts or a user memory value that is not JSON)
// is a miss, whoever wrote it into Redis: the database answers, as it does without the cache,
// rendered in every format (never a failure to encode the answer), and fills the window again.
func TestContextCacheTakesAWindowItCannotServeForAMiss(t *testing.T) {
	t.Parallel()
	r := newCacheRig(t)
	u := user()
	session := uuid.NewString()
	in := app.GetContextInput{SessionID: &session}
	r.commit(u, session, "one")
	r.deliver()
	r.get(u, in)
	if !r.servedFromCache(u, in, session) {
		t.Fatal("not served from the cache")
	}
	firstMessage := func(edit func(m map[string]any)) func(w map[string]any) {
		return func(w map[string]any) { edit(w["messages"].([]any)[0].(map[string]any)) }
	}
	for _, c := range []struct {
		name   string
		change func([]byte) []byte
	}{
		{"not CBOR", func([]byte) []byte { return []byte{0xff, 0x00, 0x1f} }},
		{"not a window", func([]byte) []byte { return []byte{0x83, 0x01, 0x02, 0x03} }},
		{"cut short", func(p []byte) []byte { return p[:len(p)/2] }},
		{"a role no message has", editWindow(t, firstMessage(func(m map[string]any) { m["role"] = "intruder" }))},
		{"metadata not JSON", editWindow(t, firstMessage(func(m map[string]any) { m["metadata"] = []byte("{not json") }))},
		{"metadata not an object", editWindow(t, firstMessage(func(m map[string]any) { m["metadata"] = []byte("[1]") }))},
		{"parts not JSON", editWindow(t, firstMessage(func(m map[string]any) { m["parts"] = []byte(`[{"type":`) }))},
		{"a tool message without its call id", editWindow(t, firstMessage(func(m map[string]any) { m["role"] = "tool" }))},
		{"a user memory value not JSON", editWindow(t, func(w map[string]any) { w["user_memory"] = map[string]any{"k": []byte("{")} })},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := r.t
			r.t = t
			defer func() { r.t = parent }()
			r.tamper(u, session, c.change)
			r.get(u, in)
			if !r.servedFromCache(u, in, session) {
				t.Fatal("the window was not filled again")
			}
		})
	}
}
