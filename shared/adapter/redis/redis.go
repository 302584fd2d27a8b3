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
//	agentmem:{<user>}:u                     the user's generation
//	agentmem:{<user>}:s:<session>           the session's generation
//	agentmem:{<user>}:c:<session>:<shape>   a window: "<user gen>:<session gen>:" and the payload
//
// Delivering a job (Deliver) advances a generation with INCR: the session's for a change of
// one session (a committed turn, a message deleted, a reset, a session deleted), the user's for
// everything else (memories, key/value memory, state and notes, messages cleared across
// sessions, an erasure, intents an older version does not know). A window is returned only when both generations it was filled under
// are still current. A generation that is missing (evicted, expired) is created with a random
// value, never 0, so a window filled before it went can never match it again. Generations live
// twice REDIS_TTL after their last use, windows REDIS_TTL.
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
//     it, so an answer is never labelled newer than what it holds, however late the SET
//     arrives.
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
// without persistence, an eviction) only costs misses.
//
// The cache holds message content as the database does, unredacted (it is the user's own
// answer): treat Redis as part of the database (TLS, a password, a private network).
package redis

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
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

// New checks cfg and builds the adapter; it does not connect (the first command does).
func New(cfg Config) (*Cache, error) {
	u, err := url.Parse(cfg.URL)
	if cfg.URL == "" || err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, errors.New("REDIS_URL must be a redis:// or rediss:// (TLS) URL, such as rediss://default:<password>@<host>:6379")
	}
	opt, err := goredis.ParseURL(cfg.URL)
	if err != nil {
		// go-redis's message may quote the URL, password included.
		return nil, errors.New("REDIS_URL is not a valid Redis URL")
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
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

// Deliver advances the generation ev changes (see the package documentation): the session's
// for a change of one session, the user's for the rest; nothing for syncSession and
// backfillSession. It is safe to repeat: another INCR only refuses more windows.
func (c *Cache) Deliver(ctx context.Context, ev adapter.Event) error {
	if noChange[ev.Type] {
		return nil
	}
	key := userGenKey(ev.UserID.String())
	if sessionChanges[ev.Type] && ev.SessionID != nil {
		key = sessionGenKey(ev.UserID.String(), ev.SessionID.String())
	}
	ctx, cancel := context.WithTimeout(ctx, DeliverTimeout)
	defer cancel()
	_, err := c.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Incr(ctx, key)
		p.PExpire(ctx, key, c.genTTL())
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis: %s", describe(err))
	}
	return nil
}

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
// milliseconds longer, and the window (KEYS[3]).
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
return {u, s, redis.call('GET', KEYS[3])}
`)

// Lookup reads the window cached under key when both its generations are current, in one
// round trip, and gives a Fill that stores a window under the generations it read.
func (c *Cache) Lookup(ctx context.Context, key adapter.CacheKey) (adapter.CacheLookup, error) {
	user, session := key.UserID.String(), key.SessionID.String()
	keys := []string{userGenKey(user), sessionGenKey(user, session), windowKey(user, session, key.Shape)}
	rctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errTimeout)
	defer cancel()
	res, err := lookupScript.Run(rctx, c.client, keys, randomGen(), randomGen(), c.genTTL().Milliseconds()).Slice()
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
		return c.fill(ctx, keys[2], prefix, payload)
	}}
	if w, ok := res[2].(string); ok && strings.HasPrefix(w, prefix) {
		out.Payload = []byte(w[len(prefix):])
	}
	return out, nil
}

// fill stores a window under the generations of its look-up.
func (c *Cache) fill(ctx context.Context, key, prefix string, payload []byte) error {
	rctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errTimeout)
	defer cancel()
	v := make([]byte, 0, len(prefix)+len(payload))
	v = append(append(v, prefix...), payload...)
	if err := c.client.Set(rctx, key, v, c.cfg.TTL).Err(); err != nil {
		c.failed(rctx)
		return fmt.Errorf("redis: %s", describe(err))
	}
	return nil
}

func userGenKey(user string) string { return keyPrefix + "{" + user + "}:u" }

func sessionGenKey(user, session string) string {
	return keyPrefix + "{" + user + "}:s:" + session
}

// windowKey names a window by a digest of its shape (which never holds content, but is kept
// out of the key's plain text all the same).
func windowKey(user, session, shape string) string {
	sum := sha256.Sum256([]byte(shape))
	return keyPrefix + "{" + user + "}:c:" + session + ":" + hex.EncodeToString(sum[:16])
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
