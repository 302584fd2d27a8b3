package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"

	"github.com/agentmem/agentmem/shared/apierror"
)

// DefaultJWKSRefresh is how old the cached key set may grow before a token that needs it makes
// the verifier fetch it again (SUPABASE_JWKS_REFRESH). It bounds how long a key removed from the
// set stays trusted, and how early a standby key must be published to be known before it signs.
// Supabase serves its key set with a 10-minute cache lifetime, which comes on top.
const DefaultJWKSRefresh = 5 * time.Minute

// MinJWKSRefresh is the shortest refresh interval accepted.
const MinJWKSRefresh = time.Second

const (
	// jwksFetchGap is the least time between the starts of two fetches of the key set. A token
	// naming a key the cache does not hold waits for the next fetch that starts after it
	// arrived, so made-up kids cost at most one fetch per gap and cannot keep a newly published
	// key out: it is accepted on first sight, at most a gap (and a fetch) later.
	jwksFetchGap = time.Second
	// jwksRetryAfter is how long after a failed fetch the next may start. Meanwhile tokens of
	// known keys are checked with the last keys fetched, and tokens that need the set fetched
	// answer 503 with Retry-After.
	jwksRetryAfter = 5 * time.Second
	// jwksAbsentFor is how long a kid that a fetch proved absent is refused without fetching.
	jwksAbsentFor = time.Minute
	// jwksAbsentMax bounds the kids remembered as absent; beyond it a kid is not remembered and
	// only jwksFetchGap limits the fetches it causes.
	jwksAbsentMax = 10_000
	// jwksHTTPTimeout bounds one fetch of the key set, the one at start-up included.
	jwksHTTPTimeout = 5 * time.Second
	// maxJWKSBody bounds the key set document read.
	maxJWKSBody = 1 << 20
	// maxKIDLen is the longest kid that can make the verifier fetch the key set. Supabase's kids
	// are UUIDs.
	maxKIDLen = 128
)

// errNoKey means a token names no key of the set: a kid that is missing, malformed or absent.
var errNoKey = errors.New("no such signing key")

// clock is the verifier's time: now tells the time, sleep waits (or ends early with ctx).
type clock struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

var realClock = clock{now: time.Now, sleep: func(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}}

// setKey is one usable key of the set.
type setKey struct {
	key any    // *ecdsa.PublicKey or *rsa.PublicKey
	alg string // the JWK's alg, "" when it names none
}

// keySet caches a remote JSON Web Key Set. It fetches on demand only: when the set is older than
// refresh, or a token names a kid it does not hold (not recently proven absent), so it needs no
// background work and behaves the same in a frozen Lambda container as in a long-lived server.
// One fetch at most is in flight; every request that needs it waits for it.
type keySet struct {
	url     string
	base    context.Context // bounds every fetch: the process's life
	client  *http.Client
	log     *slog.Logger
	refresh time.Duration
	clock   clock

	mu        sync.Mutex
	keys      map[string]setKey
	fetched   time.Time // start of the last successful fetch; zero before the first
	failed    time.Time // end of the last failed fetch, if later than fetched
	lastStart time.Time // start of the last fetch, successful or not
	inflight  *fetchCall
	absent    map[string]time.Time // kid -> start of the fetch that proved it absent
}

type fetchCall struct {
	done chan struct{}
}

func newKeySet(ctx context.Context, url string, refresh time.Duration, log *slog.Logger, clk clock) *keySet {
	return &keySet{
		url: url, base: context.WithoutCancel(ctx), refresh: refresh, log: log, clock: clk,
		client: &http.Client{Timeout: jwksHTTPTimeout},
		absent: make(map[string]time.Time),
	}
}

// prime fetches the set once, at start-up, and waits for the answer. A failure is logged, not
// returned: tokens that need the set answer 503 until a later fetch succeeds.
func (s *keySet) prime(ctx context.Context) {
	s.mu.Lock()
	call := s.startFetch(s.clock.now())
	s.mu.Unlock()
	select {
	case <-call.done:
	case <-ctx.Done():
	}
}

// key returns the key kid names. Its errors are errNoKey, for a 401, or an unavailable
// *apierror.Error when the set is needed and cannot be fetched now.
func (s *keySet) key(ctx context.Context, kid string) (setKey, error) {
	if !validKID(kid) {
		return setKey{}, errNoKey
	}
	arrived := s.clock.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		now := s.clock.now()
		k, known := s.keys[kid]
		fresh := !s.fetched.IsZero() && now.Sub(s.fetched) < s.refresh
		if fresh {
			if known {
				return k, nil
			}
			if t, ok := s.absent[kid]; ok && now.Sub(t) < jwksAbsentFor {
				return setKey{}, errNoKey
			}
			if !s.fetched.Before(arrived) {
				// A fetch that started after the token arrived does not hold its key.
				s.markAbsent(kid, s.fetched, now)
				return setKey{}, errNoKey
			}
		}
		if s.inflight == nil && s.failed.After(s.fetched) {
			if wait := s.failed.Add(jwksRetryAfter).Sub(now); wait > 0 {
				if known {
					// The set cannot be fetched: keep to the last keys fetched.
					return k, nil
				}
				return setKey{}, keysDown(wait)
			}
		}
		call := s.inflight
		if call == nil {
			if wait := s.lastStart.Add(jwksFetchGap).Sub(now); wait > 0 {
				s.mu.Unlock()
				err := s.clock.sleep(ctx, wait)
				s.mu.Lock()
				if err != nil {
					return setKey{}, keysDown(0)
				}
				continue
			}
			call = s.startFetch(now)
		}
		s.mu.Unlock()
		select {
		case <-call.done:
			s.mu.Lock()
		case <-ctx.Done():
			s.mu.Lock()
			return setKey{}, keysDown(0)
		}
	}
}

// startFetch starts a fetch that began at now; s.mu is held.
func (s *keySet) startFetch(now time.Time) *fetchCall {
	call := &fetchCall{done: make(chan struct{})}
	s.inflight, s.lastStart = call, now
	go func() {
		keys, err := s.fetch()
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.failed = s.clock.now()
			s.log.Warn("fetch jwks", "error", err)
		} else {
			s.keys, s.fetched = keys, now
		}
		s.inflight = nil
		close(call.done)
	}()
	return call
}

// markAbsent remembers that the fetch started at at did not hold kid; s.mu is held.
func (s *keySet) markAbsent(kid string, at, now time.Time) {
	if len(s.absent) >= jwksAbsentMax {
		for k, t := range s.absent {
			if now.Sub(t) >= jwksAbsentFor {
				delete(s.absent, k)
			}
		}
		if len(s.absent) >= jwksAbsentMax {
			return
		}
	}
	s.absent[kid] = at
}

// fetch gets and parses the key set.
func (s *keySet) fetch() (map[string]setKey, error) {
	ctx, cancel := context.WithTimeout(s.base, jwksHTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxJWKSBody {
		return nil, fmt.Errorf("jwks document is over %d bytes", maxJWKSBody)
	}
	return parseJWKS(body)
}

// parseJWKS reads a JWK Set document. Keys this verifier cannot use (symmetric, encryption, no
// kid, not parsable) are left out; a document without a "keys" array is an error.
func parseJWKS(body []byte) (map[string]setKey, error) {
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("decode jwks: %w", err)
	}
	if set.Keys == nil {
		return nil, errors.New("decode jwks: no keys array")
	}
	keys := make(map[string]setKey, len(set.Keys))
	for _, m := range set.Keys {
		if m.KID == "" || (m.USE != "" && m.USE != jwkset.UseSig) {
			continue
		}
		parsed, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
		if err != nil {
			continue
		}
		switch parsed.Key().(type) {
		case *ecdsa.PublicKey, *rsa.PublicKey:
			keys[m.KID] = setKey{key: parsed.Key(), alg: m.ALG.String()}
		}
	}
	return keys, nil
}

// validKID accepts the kids worth a fetch: 1 to maxKIDLen printable ASCII characters.
func validKID(kid string) bool {
	if kid == "" || len(kid) > maxKIDLen {
		return false
	}
	for i := 0; i < len(kid); i++ {
		if kid[i] <= ' ' || kid[i] > '~' {
			return false
		}
	}
	return true
}

// errKeysDown is the message of a 503 for a token whose key cannot be looked up now.
const errKeysDown = "the token signing keys cannot be fetched now; retry"

// keysDown is the 503 for a token that needs the key set while it cannot be fetched; wait is
// the time until the next fetch may start.
func keysDown(wait time.Duration) *apierror.Error {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return &apierror.Error{Code: apierror.Unavailable, Detail: errKeysDown, RetryAfter: secs}
}
