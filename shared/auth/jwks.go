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
	// jwksFetchGap is the least time between the starts of two fetches of the key set: made-up
	// kids cost at most one fetch per gap, and none of them waits for it.
	jwksFetchGap = time.Second
	// jwksFetchAllowance is added to the Retry-After of a token whose kid a fetch has yet to
	// tell: the time that fetch is given to finish, so that the retry finds its answer.
	jwksFetchAllowance = time.Second
	// jwksRetryAfter is how long after a failed fetch the next may start. Meanwhile tokens of
	// known keys are checked with the last keys fetched, and tokens that need a fetch answer 503
	// with Retry-After.
	jwksRetryAfter = 5 * time.Second
	// jwksAbsentFor is how long a kid that a fetch proved absent is refused without fetching. It
	// bounds the fetches one such kid causes (a revoked key's tokens still in use) to one per
	// jwksAbsentFor, and how long a key published after its kid was proven absent is refused
	// unless a fetch made meanwhile brings it (fetched keys always win over this memory).
	jwksAbsentFor = 10 * time.Second
	// jwksAbsentMax bounds the kids remembered as absent, and those waiting for a fetch to tell;
	// beyond it a kid is not remembered: it is answered 503 again, and only jwksFetchGap limits
	// the fetches it causes.
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

// clock is the verifier's time: now tells the time, afterFunc runs f in its own goroutine once d
// has passed.
type clock struct {
	now       func() time.Time
	afterFunc func(d time.Duration, f func())
}

var realClock = clock{now: time.Now, afterFunc: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}

// setKey is one usable key of the set.
type setKey struct {
	key any    // *ecdsa.PublicKey or *rsa.PublicKey
	alg string // the JWK's alg, "" when it names none
}

// keySet caches a remote JSON Web Key Set. Whether a token waits for a fetch depends on what the
// cache can tell:
//
//   - a kid the set holds, while the set is younger than refresh: no fetch;
//   - a kid the set holds, once the set is older: the token waits for the refresh, so a key
//     removed from the set is refused from then on (one fetch per refresh for all the tokens
//     waiting; while the set cannot be fetched, the last keys fetched are used);
//   - before any fetch has succeeded (the first starts with the verifier): the token waits for
//     one, as it cannot tell a made-up kid from a real one;
//   - a kid the set does not hold: never a wait, whoever names it. Proven absent less than
//     jwksAbsentFor ago, by a fetch that started after the kid was asked for: 401 at once.
//     Otherwise 503 with Retry-After, and a fetch starts now, or is set to start once
//     jwksFetchGap has passed since the last (or jwksRetryAfter since a failure): a newly
//     published key is accepted on the retry, and made-up kids cost microseconds each and one
//     fetch per gap in all.
//
// One fetch at most is in flight, each in its own goroutine; a Lambda container frozen while one
// runs or is set to start finishes or starts it when thawed.
type keySet struct {
	url     string
	base    context.Context // bounds every fetch: the process's life
	client  *http.Client
	log     *slog.Logger
	refresh time.Duration
	clock   clock

	mu        sync.Mutex
	keys      map[string]setKey // nil before the first successful fetch
	fetched   time.Time         // start of the last successful fetch; zero before the first
	failed    time.Time         // end of the last failed fetch, if later than fetched
	lastStart time.Time         // start of the last fetch, successful or not
	starts    uint64            // fetches started so far
	fetchedN  uint64            // the number (in starts) of the last successful fetch
	inflight  *fetchCall
	asked     map[string]struct{} // kids answered 503 since the last fetch started
	due       bool                // a fetch for asked is set to start (afterFunc)
	absent    map[string]time.Time
}

// fetchCall is a fetch in flight.
type fetchCall struct {
	n     uint64 // its number in starts
	done  chan struct{}
	asked map[string]struct{} // the kids it answers for: absent unless it brings them
}

func newKeySet(ctx context.Context, url string, refresh time.Duration, log *slog.Logger, clk clock) *keySet {
	return &keySet{
		url: url, base: context.WithoutCancel(ctx), refresh: refresh, log: log, clock: clk,
		client: &http.Client{Timeout: jwksHTTPTimeout},
		asked:  make(map[string]struct{}),
		absent: make(map[string]time.Time),
	}
}

// prime starts fetching the set, at start-up, and returns at once: start-up never waits for the
// key set, and HS256 tokens never do. A failure is logged: tokens that need the set answer 503
// until a later fetch succeeds.
func (s *keySet) prime() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startFetch(s.clock.now())
}

// key returns the key kid names. Its errors are errNoKey, for a 401, or an unavailable
// *apierror.Error with Retry-After when the set is needed and has not told yet.
func (s *keySet) key(ctx context.Context, kid string) (setKey, error) {
	if !validKID(kid) {
		return setKey{}, errNoKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	arrived := s.starts
	for {
		now := s.clock.now()
		k, known := s.keys[kid]
		// A fetch that started once the token had arrived answers for it, however long it took.
		since := s.fetchedN > arrived
		switch {
		case known && (since || now.Sub(s.fetched) < s.refresh):
			return k, nil
		case !known && since:
			s.markAbsent(kid, s.fetched, now)
			return setKey{}, errNoKey
		case !known && s.keys != nil:
			return setKey{}, s.unknown(kid, now)
		}
		// A known key of a stale set, or no set yet: wait for a fetch.
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

// unknown answers a token naming a kid the set does not hold, at once: 401 when a fetch proved
// the kid absent lately, else 503 until a fetch that starts after now tells; s.mu is held.
func (s *keySet) unknown(kid string, now time.Time) error {
	if t, ok := s.absent[kid]; ok {
		if now.Sub(t) < jwksAbsentFor {
			return errNoKey
		}
		delete(s.absent, kid)
	}
	if len(s.asked) < jwksAbsentMax {
		s.asked[kid] = struct{}{}
	}
	return keyPending(s.fetchSoon(now).Sub(now) + jwksFetchAllowance)
}

// fetchSoon makes sure a fetch starts at or after now, as soon as the gap between fetches and
// the wait after a failure allow, and returns when; s.mu is held.
func (s *keySet) fetchSoon(now time.Time) time.Time {
	at := s.lastStart.Add(jwksFetchGap)
	if s.failed.After(s.fetched) {
		if retry := s.failed.Add(jwksRetryAfter); retry.After(at) {
			at = retry
		}
	}
	if at.Before(now) {
		at = now
	}
	switch {
	case s.inflight != nil:
		// Its end starts the next, or sets it to start (see startFetch).
	case !at.After(now):
		s.startFetch(now)
	case !s.due:
		s.due = true
		s.clock.afterFunc(at.Sub(now), func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.due = false
			if len(s.asked) > 0 {
				s.fetchSoon(s.clock.now())
			}
		})
	}
	return at
}

// startFetch starts a fetch that began at now, for the kids asked so far; s.mu is held.
func (s *keySet) startFetch(now time.Time) *fetchCall {
	s.starts++
	call := &fetchCall{n: s.starts, done: make(chan struct{}), asked: s.asked}
	s.asked = make(map[string]struct{})
	s.inflight, s.lastStart = call, now
	go func() {
		keys, err := s.fetch()
		s.mu.Lock()
		defer s.mu.Unlock()
		end := s.clock.now()
		s.inflight = nil
		defer close(call.done)
		if err != nil {
			// The kids asked meanwhile are asked again by their retries, which the 503 set
			// after the wait: a set that stays down is not fetched for kids nobody asks for.
			s.failed = end
			s.log.Warn("fetch jwks", "error", err)
			return
		}
		s.keys, s.fetched, s.fetchedN = keys, now, call.n
		for kid := range call.asked {
			if _, ok := keys[kid]; !ok {
				s.markAbsent(kid, now, end)
			}
		}
		for kid := range s.asked {
			_, found := keys[kid]
			_, told := call.asked[kid]
			if found || told {
				delete(s.asked, kid)
			}
		}
		// Fetched keys win over the memory of absent kids anyway; a key brought now leaves it.
		for kid := range keys {
			delete(s.absent, kid)
		}
		if len(s.asked) > 0 {
			// Kids first asked while this fetch was in flight: a fetch that started before
			// them cannot prove them absent.
			s.fetchSoon(end)
		}
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

// errKeyPending is the message of a 503 for a token whose kid a fetch has yet to look for.
const errKeyPending = "the token signing key is being looked up; retry"

// keysDown is the 503 for a token that needs the key set while it cannot be fetched; wait is
// the time until the next fetch may start.
func keysDown(wait time.Duration) *apierror.Error {
	return unavailableFor(errKeysDown, wait)
}

// keyPending is the 503 for a token naming a kid the set does not hold, until a fetch tells;
// wait is the time until a retry may find the answer.
func keyPending(wait time.Duration) *apierror.Error {
	return unavailableFor(errKeyPending, wait)
}

// unavailableFor is a 503 with detail and a Retry-After of wait, in whole seconds, at least 1.
func unavailableFor(detail string, wait time.Duration) *apierror.Error {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return &apierror.Error{Code: apierror.Unavailable, Detail: detail, RetryAfter: secs}
}
