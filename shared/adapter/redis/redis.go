// Package redis is the Redis adapter: a get-context cache in Redis or Upstash Redis (RESP over
// TCP, TLS when REDIS_URL says rediss://), kept true to the database by the outbox.
//
// # What is cached
//
// A get-context answer without a query, whole: the session's recent window (messages and
// usage), the user's key/value memory, state and notes, per (user, tenant, agent, session) and
// request shape (max_messages, max_tokens, since, answers_only; the format is applied after
// the cache). Requests with a query are not cached: what recall finds depends on embeddings
// computed after the fact (embed-pending), which no job announces. Changes of the key/value
// memory, state and notes write a job of their own (onUserDataChanged) for this adapter only
// (adapter.CachesUserData), so that no change of a cached part goes unannounced.
//
// # Keys
//
// Every key of a user carries the user's id as a hash tag, {<user id>}, so that one script
// reads them together (on a cluster too):
//
//	agentmem:{<user>}:u            the user's generation
//	agentmem:{<user>}:s:<session>  the session's generation
//	agentmem:{<user>}:w            the user's windows, a hash:
//	                                 <session>:<shape>    "<user gen>:<session gen>:" and the payload
//	                                 t:<session>:<shape>  "<fill time, unix ms> <bytes> <fill number>"
//	                                 #                    the number of the last fill
//
// Delivering a job (Deliver) advances a generation with INCR: the session's for a change of
// one session (a committed turn, a message deleted, a reset, a session deleted, a summary),
// the user's for everything else (memories, key/value memory, state and notes, messages
// cleared across sessions, an erasure, intents an older version does not know); and in the
// same script drops the windows it made stale, the session's or all of the user's, so that no
// deleted or erased content stays in Redis after the delivery. A window is returned only when
// both generations it was filled under are still current, and a fill is stored only while they
// are (a fill that read the database before a delivery never lands after it). A generation
// that is missing (evicted, expired) is created with a random value, never 0, so a window
// filled before it went can never match it again. Generations live twice REDIS_TTL after their
// last use.
//
// # Bounds
//
// A user's windows live in one hash, so that an erasure deletes one key and eviction never
// leaves part of them: at most REDIS_USER_WINDOWS windows (default DefaultUserWindows) of at
// most REDIS_USER_BYTES bytes in all (DefaultUserBytes), whatever shapes (since, max_messages,
// max_tokens) and sessions the user asks for. A fill that goes past a bound drops the oldest
// windows first; a window larger than REDIS_USER_BYTES alone is not cached. A fill reads the
// sizes of all of the user's windows: larger bounds make fills (misses) slower. A window is
// not served REDIS_TTL after its fill (by the clocks of the processes); it is dropped at the
// user's next fill, and the hash REDIS_TTL after the user's last fill. Beside the hash, a user
// holds the generation keys: one, and one per session read in the last 2 × REDIS_TTL (a few
// bytes each).
//
// # Read-your-writes
//
// A client must never read an answer older than its own last acknowledged change. The
// argument:
//
//  1. Every change that can alter a cached answer writes a job for this adapter in the
//     change's own transaction (the outbox), so when the client has its answer the job exists,
//     pending.
//  2. get-context asks the database, for the user its token names, whether the user has a job
//     for this adapter that is not done (agentmem.check_context_cache: pending, running or
//     dead; or an erasure's fan-out job not yet expanded into one per adapter), or that was
//     done less than a settle time S ago (app.DefaultCacheSettle, 2 s); and at the same
//     time reads the generations and the answer from Redis. If the check found such a job, or
//     took S/2 or longer, the cached answer is not served: the database answers.
//  3. A job is marked done only after its INCR succeeded. A change acknowledged before the
//     request started whose job the check saw done more than S ago advanced its generation
//     more than S before the check ran; the check ran less than S/2 after the request
//     started, and the look-up in Redis after the request started, so after that INCR. A
//     cached answer filled before the change carries the older generation and is refused; one
//     filled after it holds the change. (Only the database's clock and the process's
//     monotonic clock measure S: no two clocks are compared.)
//  4. A fill stores the generations its look-up read, before the database read that produced
//     it, so an answer is never labelled newer than what it holds, however late it arrives
//     (and a fill that arrives after a delivery stores nothing).
//
// Redis itself may lose writes or come back older (a restart without persistence, a snapshot
// restored, a replica promoted while behind), taking delivered INCRs with it: the generations
// and windows it then holds agree with each other and not with the database. So the use case
// also labels a window with the database's own generation (store.CacheCheck.Generation, which
// every acknowledged change advances in its transaction), read by the same check before the
// fill's read, and serves it only while the check reads the same: such a Redis costs misses.
//
// Nothing relies on Redis being reachable from the writer: the commit writes no cache key
// itself, so there is no inline invalidation to fail; the outbox delivers the INCR (at once
// with JOBS_NOTIFY, or on the next process-jobs run) and retries it with backoff until Redis
// answers. Until then step 2 sends the user's reads to the database. A job that goes dead
// keeps them there until it is retried (agentmem jobs retry) or purged; a purge leaves a dead
// job of this adapter alone until REDIS_TTL after it died (Retention), when every window that
// may predate its change has expired.
//
// Expiry is not a change a job announces: the check of step 2 also reads the latest expiry
// already passed among the session's stored messages, and an answer filled before it (with a
// minute's margin for the clocks of the database and the function) is refused. A sweep may
// delete such messages before anyone asks, so an answer also carries the earliest expiry of the
// messages it was drawn from, and is refused from a minute before it.
//
// # Outages
//
// Every command on a user's request runs under REDIS_TIMEOUT (default DefaultTimeout), without
// retries; a failure answers from the database, and the cache then rests for a second
// (Ready is false: no request waits on Redis meanwhile). A Redis that lost its data (a restart
// without persistence, an eviction, a rollback) only costs misses.
//
// The cache holds message content as the database does, unredacted (it is the user's own
// answer): treat Redis as part of the database (TLS, a password, a private network). An
// erasure (forget-user, and a user deleted in Supabase Auth) reaches Redis as its job's
// delivery, which deletes the user's windows; forget-user also deletes them itself before it
// answers (DropUser).
package redis

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agentmem/agentmem/shared/adapter"
)

// The defaults of the Redis settings.
const (
	// DefaultTTL (REDIS_TTL) is how long a window stays cached.
	DefaultTTL = 5 * time.Minute
	// DefaultTimeout (REDIS_TIMEOUT) bounds each cache command on a user's request.
	DefaultTimeout = 100 * time.Millisecond
	// DeliverTimeout bounds one delivery (an INCR) of a job.
	DeliverTimeout = 5 * time.Second
)

// The default bounds of what one user holds in Redis (see the package documentation). A chat
// client asks for one shape per session; DefaultUserWindows leaves room for several sessions,
// agents and devices within REDIS_TTL, and DefaultUserBytes for about twenty windows of 200 kB.
const (
	// DefaultUserWindows (REDIS_USER_WINDOWS) is the most windows a user has cached at once.
	DefaultUserWindows = 32
	// DefaultUserBytes (REDIS_USER_BYTES) bounds the size of a user's cached windows, in all.
	DefaultUserBytes = 4 << 20
)

// restAfterFailure is how long the cache is skipped after a failed command on a request.
const restAfterFailure = time.Second

// keyPrefix starts every key the adapter writes.
const keyPrefix = "agentmem:"

// Config configures the Redis adapter.
type Config struct {
	// URL (REDIS_URL) is redis://[user:password@]host:port[/db], or rediss:// for TLS (Upstash
	// Redis: rediss://default:<password>@<endpoint>.upstash.io:6379).
	URL string
	// TTL (REDIS_TTL) is how long a window stays cached; default DefaultTTL.
	TTL time.Duration
	// Timeout (REDIS_TIMEOUT) bounds each cache command on a user's request; default
	// DefaultTimeout.
	Timeout time.Duration
	// UserWindows (REDIS_USER_WINDOWS) is the most windows one user has cached at once;
	// default DefaultUserWindows.
	UserWindows int
	// UserBytes (REDIS_USER_BYTES) bounds the bytes of one user's cached windows, in all;
	// default DefaultUserBytes.
	UserBytes int
	// TLS, when not nil, replaces the TLS configuration of a rediss:// URL (tests give their
	// own certificate authority); the server name stays the URL's host.
	TLS *tls.Config
}

// Cache is the adapter. It is safe for concurrent use.
type Cache struct {
	cfg    Config
	client *goredis.Client
	// restUntil is when the cache may be tried again after a failure (unix nanoseconds).
	restUntil atomic.Int64
}

var _ adapter.ContextCache = (*Cache)(nil)

// Check reports what New would refuse in cfg, without building a client: the configuration
// checks it at every start, and a function that never uses the cache then links none of
// go-redis's client.
func Check(cfg Config) error {
	_, err := options(cfg.URL)
	return err
}

// options reads the client's options from a REDIS_URL.
func options(rawURL string) (*goredis.Options, error) {
	u, err := url.Parse(rawURL)
	if rawURL == "" || err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, errors.New("REDIS_URL must be a redis:// or rediss:// (TLS) URL, such as rediss://default:<password>@<host>:6379")
	}
	opt, err := goredis.ParseURL(rawURL)
	if err != nil {
		// go-redis's message may quote the URL, password included.
		return nil, errors.New("REDIS_URL is not a valid Redis URL")
	}
	return opt, nil
}

// New checks cfg and builds the adapter; it does not connect (the first command does).
func New(cfg Config) (*Cache, error) {
	opt, err := options(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.UserWindows <= 0 {
		cfg.UserWindows = DefaultUserWindows
	}
	if cfg.UserBytes <= 0 {
		cfg.UserBytes = DefaultUserBytes
	}
	if cfg.TLS != nil && opt.TLSConfig != nil {
		t := cfg.TLS.Clone()
		t.ServerName = opt.TLSConfig.ServerName
		opt.TLSConfig = t
	}
	// RESP2 without CLIENT SETINFO: every Redis and Upstash speak it, one round trip to connect.
	opt.Protocol = 2
	opt.DisableIdentity = true
	// Commands are bounded by their context: REDIS_TIMEOUT on requests, DeliverTimeout in jobs.
	opt.ContextTimeoutEnabled = true
	opt.DialTimeout = DeliverTimeout
	opt.ReadTimeout = DeliverTimeout
	opt.WriteTimeout = DeliverTimeout
	// A failed command is not retried: the request reads the database, the job is retried
	// by the outbox.
	opt.MaxRetries = -1
	opt.DialerRetries = 1
	// go-redis's own log lines are plain text with addresses; the callers log what failed.
	quietOnce.Do(func() { goredis.SetLogger(quiet{}) })
	return &Cache{cfg: cfg, client: goredis.NewClient(opt)}, nil
}

var quietOnce sync.Once

// quiet drops go-redis's log lines.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Name is adapter.Redis.
func (c *Cache) Name() string { return adapter.Redis }

// TLS reports whether the URL asks for TLS (rediss://).
func (c *Cache) TLS() bool { return c.client.Options().TLSConfig != nil }

// Close closes the connections.
func (c *Cache) Close() error { return c.client.Close() }

// sessionChanges are the events that change one session only.
var sessionChanges = map[string]bool{
	adapter.TurnCommitted:  true,
	adapter.MessageDeleted: true,
	adapter.SessionReset:   true,
	adapter.SessionDeleted: true,
	// A rolling summary is part of the session's get-context answer.
	adapter.SummaryUpdated: true,
}

// noChange are the events that change nothing cached.
var noChange = map[string]bool{
	adapter.SyncSession:     true,
	adapter.BackfillSession: true,
}

// Deliver advances the generation ev changes and drops the windows it made stale (see the
// package documentation): the session's for a change of one session, the user's for the
// rest; nothing for syncSession and backfillSession. It is safe to repeat: another INCR only
// refuses more windows.
func (c *Cache) Deliver(ctx context.Context, ev adapter.Event) error {
	if noChange[ev.Type] {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, DeliverTimeout)
	defer cancel()
	user := ev.UserID
	if !sessionChanges[ev.Type] || ev.SessionID == nil {
		return c.dropUser(ctx, user)
	}
	session := ev.SessionID.String()
	err := dropSessionScript.Run(ctx, c.client, []string{sessionGenKey(user, session), windowsKey(user)},
		session+":", c.genTTL().Milliseconds()).Err()
	if err != nil {
		return fmt.Errorf("redis: %s", describe(err))
	}
	return nil
}

// DropUser deletes every window of the user and advances the user's generation, as the
// delivery of an erasure does, within REDIS_TIMEOUT: forget-user calls it once the erasure
// committed, so that the erased content leaves Redis before it answers (its job does it again,
// and retries when this failed).
func (c *Cache) DropUser(ctx context.Context, userID string) error {
	rctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errTimeout)
	defer cancel()
	if err := c.dropUser(rctx, userID); err != nil {
		c.failed(rctx)
		return err
	}
	return nil
}

// dropUser advances the user's generation and deletes the user's windows, in one transaction.
func (c *Cache) dropUser(ctx context.Context, user string) error {
	_, err := c.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Incr(ctx, userGenKey(user))
		p.PExpire(ctx, userGenKey(user), c.genTTL())
		p.Del(ctx, windowsKey(user))
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis: %s", describe(err))
	}
	return nil
}

// dropSessionScript advances the session's generation (KEYS[1], keeping it ARGV[2]
// milliseconds) and deletes the session's windows from the user's (KEYS[2]): the fields that
// start with ARGV[1], "<session>:", and their times.
var dropSessionScript = goredis.NewScript(`
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local p, tp = ARGV[1], 't:' .. ARGV[1]
for _, f in ipairs(redis.call('HKEYS', KEYS[2])) do
  if string.sub(f, 1, #p) == p or string.sub(f, 1, #tp) == tp then
    redis.call('HDEL', KEYS[2], f)
  end
end
return 0
`)

// genTTL is how long a generation lives after its last use: longer than any window filled
// under it.
func (c *Cache) genTTL() time.Duration { return 2 * c.cfg.TTL }

// Retention is REDIS_TTL, the longest a window lives.
func (c *Cache) Retention() time.Duration { return c.cfg.TTL }

// Ready is false while the cache rests after a failure.
func (c *Cache) Ready() bool { return time.Now().UnixNano() >= c.restUntil.Load() }

// failed starts a rest, unless the caller itself gave up (its request ended).
func (c *Cache) failed(ctx context.Context) {
	if ctx.Err() == nil || errors.Is(context.Cause(ctx), errTimeout) {
		c.restUntil.Store(time.Now().Add(restAfterFailure).UnixNano())
	}
}

// errTimeout is the cause of a request-path command's context ending at REDIS_TIMEOUT.
var errTimeout = errors.New("redis: no answer within REDIS_TIMEOUT")

// lookupScript reads the user's and the session's generations, creating a missing one with
// the random value given (KEYS[1], KEYS[2]; ARGV[1], ARGV[2]) and keeping them ARGV[3]
// milliseconds longer, and the window ARGV[4] of the user's (KEYS[3]) unless it was filled
// ARGV[6] milliseconds or more before ARGV[5] (unix ms).
var lookupScript = goredis.NewScript(`
local function gen(key, init, ttl)
  local v = redis.call('GET', key)
  if not v then
    redis.call('SET', key, init, 'PX', ttl)
    return init
  end
  redis.call('PEXPIRE', key, ttl)
  return v
end
local u = gen(KEYS[1], ARGV[1], ARGV[3])
local s = gen(KEYS[2], ARGV[2], ARGV[3])
local w = redis.call('HMGET', KEYS[3], ARGV[4], 't:' .. ARGV[4])
if w[1] and w[2] then
  local at = tonumber(string.match(w[2], '^%d+'))
  if at and at + tonumber(ARGV[6]) > tonumber(ARGV[5]) then
    return {u, s, w[1]}
  end
end
return {u, s, false}
`)

// fillScript stores the window ARGV[3] (value ARGV[4]) in the user's (KEYS[3]) while the user's
// and the session's generations (KEYS[1], KEYS[2]) are still ARGV[1] and ARGV[2], with its fill
// time ARGV[5] (unix ms); then drops the user's windows filled ARGV[6] milliseconds or more
// before it, and the oldest while more than ARGV[7] windows or ARGV[8] bytes are left, and keeps
// the hash ARGV[6] milliseconds. A window larger than ARGV[8] is not stored (and replaces the
// one of its shape). It answers 1 when the window was stored.
var fillScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('GET', KEYS[2]) ~= ARGV[2] then
  return 0
end
local field, value = ARGV[3], ARGV[4]
local now, ttl = tonumber(ARGV[5]), tonumber(ARGV[6])
local maxn, maxb = tonumber(ARGV[7]), tonumber(ARGV[8])
if #value > maxb then
  redis.call('HDEL', KEYS[3], field, 't:' .. field)
  return 0
end
local order = redis.call('HINCRBY', KEYS[3], '#', 1)
redis.call('HSET', KEYS[3], field, value, 't:' .. field, ARGV[5] .. ' ' .. #value .. ' ' .. order)
local names = {}
for _, f in ipairs(redis.call('HKEYS', KEYS[3])) do
  if string.sub(f, 1, 2) == 't:' then
    table.insert(names, f)
  end
end
local times = redis.call('HMGET', KEYS[3], unpack(names))
local wins, bytes = {}, 0
for i, f in ipairs(names) do
  local at, size, order = string.match(times[i] or '', '^(%d+) (%d+) (%d+)$')
  local w = {field = string.sub(f, 3), at = tonumber(at) or 0, size = tonumber(size) or 0, order = tonumber(order) or 0}
  table.insert(wins, w)
  bytes = bytes + w.size
end
table.sort(wins, function(a, b) return a.order < b.order end)
local n = #wins
for _, w in ipairs(wins) do
  if w.at + ttl > now and n <= maxn and bytes <= maxb then
    break
  end
  if w.field ~= field then
    redis.call('HDEL', KEYS[3], w.field, 't:' .. w.field)
    n = n - 1
    bytes = bytes - w.size
  end
end
redis.call('PEXPIRE', KEYS[3], ttl)
return 1
`)

// Lookup reads the window cached under key when both its generations are current, in one
// round trip, and gives a Fill that stores a window under the generations it read.
func (c *Cache) Lookup(ctx context.Context, key adapter.CacheKey) (adapter.CacheLookup, error) {
	user, session := key.UserID, key.SessionID.String()
	keys := []string{userGenKey(user), sessionGenKey(user, session), windowsKey(user)}
	field := windowField(session, key.Shape)
	rctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errTimeout)
	defer cancel()
	res, err := lookupScript.Run(rctx, c.client, keys, randomGen(), randomGen(), c.genTTL().Milliseconds(),
		field, time.Now().UnixMilli(), c.cfg.TTL.Milliseconds()).Slice()
	if err != nil {
		c.failed(rctx)
		return adapter.CacheLookup{}, fmt.Errorf("redis: %s", describe(err))
	}
	if len(res) != 3 {
		return adapter.CacheLookup{}, errors.New("redis: unexpected answer to the look-up")
	}
	ug, _ := res[0].(string)
	sg, _ := res[1].(string)
	if ug == "" || sg == "" {
		return adapter.CacheLookup{}, errors.New("redis: unexpected answer to the look-up")
	}
	prefix := ug + ":" + sg + ":"
	out := adapter.CacheLookup{Fill: func(ctx context.Context, payload []byte) error {
		return c.fill(ctx, keys, ug, sg, field, prefix, payload)
	}}
	if w, ok := res[2].(string); ok && strings.HasPrefix(w, prefix) {
		out.Payload = []byte(w[len(prefix):])
	}
	return out, nil
}

// fill stores a window under the generations of its look-up, if they are still current.
func (c *Cache) fill(ctx context.Context, keys []string, ug, sg, field, prefix string, payload []byte) error {
	rctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errTimeout)
	defer cancel()
	v := make([]byte, 0, len(prefix)+len(payload))
	v = append(append(v, prefix...), payload...)
	err := fillScript.Run(rctx, c.client, keys, ug, sg, field, v, time.Now().UnixMilli(), c.cfg.TTL.Milliseconds(),
		c.cfg.UserWindows, c.cfg.UserBytes).Err()
	if err != nil {
		c.failed(rctx)
		return fmt.Errorf("redis: %s", describe(err))
	}
	return nil
}

func userGenKey(user string) string { return keyPrefix + "{" + UserTag(user) + "}:u" }

func sessionGenKey(user, session string) string {
	return keyPrefix + "{" + UserTag(user) + "}:s:" + session
}

// windowsKey is the hash of the user's windows.
func windowsKey(user string) string { return keyPrefix + "{" + UserTag(user) + "}:w" }

// UserTag is the user's id as it stands in the hash tag of the user's keys: the id itself when
// it is made of letters, digits and _ . : | @ + - only (Supabase Auth's UUIDs, Clerk's
// user_2abc..., Auth0's auth0|123), else "~" and the id in unpadded base64url. A brace would
// end the hash tag early (an id starting with "}" would leave the tag empty, and a user's keys
// would no longer share a slot), and glob characters would reach patterns that match keys;
// no id left as it is starts with "~", so no two ids share a tag.
func UserTag(user string) string {
	for i := 0; i < len(user); i++ {
		c := user[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.:|@+-", c) >= 0) {
			return "~" + base64.RawURLEncoding.EncodeToString([]byte(user))
		}
	}
	return user
}

// windowField names a window in the user's hash by its session and a digest of its shape
// (which never holds content, but is kept out of the field's plain text all the same).
func windowField(session, shape string) string {
	sum := sha256.Sum256([]byte(shape))
	return session + ":" + hex.EncodeToString(sum[:16])
}

// randomGen is a random generation to start from: positive, far from INCR's limit, never 0.
func randomGen() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatUint(binary.BigEndian.Uint64(b[:])>>2|1, 10)
}

// describe names a failure without the URL or the password.
func describe(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, errTimeout):
		return "no answer in time"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	var re goredis.Error
	if errors.As(err, &re) {
		// A server's error reply (NOAUTH, WRONGPASS, OOM...): its first word.
		word, _, _ := strings.Cut(re.Error(), " ")
		return "server answered " + word
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return "no answer in time"
	}
	return "unreachable: " + err.Error()
}
