package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
)

// refused is nil when err is the 401 a token naming no key of the set gets.
func refused(err error) error {
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Code != apierror.Unauthenticated {
		return fmt.Errorf("error %v, want a 401", err)
	}
	return nil
}

// wantRetry fails unless err is the 503 a token naming a kid the set does not hold gets until a
// fetch tells: the message errKeyPending, Retry-After one of secs.
func wantRetry(t testing.TB, err error, secs ...int) {
	t.Helper()
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Code != apierror.Unavailable || !slices.Contains(secs, ae.RetryAfter) || ae.Detail != errKeyPending {
		t.Fatalf("error %v (retry after %d), want unavailable, retry after %v", err, retryAfterOf(err), secs)
	}
}

// clock is the key set's time on c (authserver_test.go): fetches set to start later start when
// a test moves c, so no test sleeps.
func (c *fakeClock) clock() clock {
	return clock{now: c.Now, afterFunc: c.AfterFunc}
}

// fakeVerifier builds a Verifier whose key set runs on a fake clock.
func fakeVerifier(t testing.TB, cfg Config) (*Verifier, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	v, err := buildVerifier(t.Context(), cfg, clk.clock())
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	if v.jwks != nil {
		settle(t, v) // the fetch at start
	}
	return v, clk
}

// esToken is a user token signed by ecKey, naming kid.
func esToken(t testing.TB, kid string) string {
	return sign(t, jwt.SigningMethodES256, kid, ecKey(), userClaims())
}

// Tokens naming keys the set does not hold cost few fetches and never wait for one: none for a
// malformed kid, one per jwksAbsentFor for a kid already proven absent, at most one per
// jwksFetchGap for new kids, one for every token of a new key.
func TestJWKSUnknownKIDFetches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, srv *jwksServer, v *Verifier, clk *fakeClock)
	}{
		{"malformed kids never fetch", func(t *testing.T, srv *jwksServer, v *Verifier, clk *fakeClock) {
			for _, kid := range []string{"", " ", "a b", "kid\x00", "clé", strings.Repeat("k", maxKIDLen+1)} {
				tok := esToken(t, kid)
				_, err := v.Verify(t.Context(), tok)
				wantUnauthenticated(t, err, tok)
			}
			settle(t, v)
			if n := srv.hits.Load(); n != 1 {
				t.Errorf("jwks fetched %d times, want 1 (start only)", n)
			}
		}},
		{"a kid proven absent is remembered", func(t *testing.T, srv *jwksServer, v *Verifier, clk *fakeClock) {
			tok := esToken(t, "made-up")
			// First sight: a 503 while the fetch it started tells.
			_, err := v.Verify(t.Context(), tok)
			wantRetry(t, err, 1)
			clk.Advance(time.Second)
			settle(t, v)
			proven := clk.Now()
			for clk.Now().Sub(proven) < jwksAbsentFor {
				_, err := v.Verify(t.Context(), tok)
				wantUnauthenticated(t, err, tok)
				// Far enough apart that each would fetch, were the kid not remembered.
				clk.Advance(2 * jwksFetchGap)
				settle(t, v)
			}
			if n := srv.hits.Load(); n != 2 {
				t.Errorf("jwks fetched %d times for one made-up kid, want 2", n)
			}
			// Forgotten: asked again, and refused again once a fetch tells.
			if _, err := verifyRetrying(t, v, clk, tok); refused(err) != nil {
				t.Errorf("made-up kid once forgotten: %v", err)
			}
			if n := srv.hits.Load(); n != 3 {
				t.Errorf("jwks fetched %d times once the kid was forgotten, want 3", n)
			}
		}},
		{"new kids fetch at most once a gap", func(t *testing.T, srv *jwksServer, v *Verifier, clk *fakeClock) {
			start := clk.Now()
			for range 30 {
				clk.Advance(100 * time.Millisecond)
				settle(t, v)
				_, err := v.Verify(t.Context(), esToken(t, uuid.NewString()))
				var ae *apierror.Error
				if !errors.As(err, &ae) || ae.Code != apierror.Unavailable || ae.RetryAfter < 1 || ae.RetryAfter > 2 {
					t.Fatalf("new kid: %v (retry after %d), want a 503, retry after 1 or 2", err, retryAfterOf(err))
				}
			}
			clk.Advance(jwksFetchGap)
			settle(t, v)
			fetches := int(srv.hits.Load()) - 1
			if max := 1 + int(clk.Now().Sub(start)/jwksFetchGap); fetches > max || fetches < 1 {
				t.Errorf("%d fetches over %v, want 1 to %d", fetches, clk.Now().Sub(start), max)
			}
		}},
		{"a new kid asked during a fetch waits for the next", func(t *testing.T, srv *jwksServer, v *Verifier, clk *fakeClock) {
			srv.delay.Store(int64(50 * time.Millisecond))
			first, second := esToken(t, "made-up-1"), esToken(t, "made-up-2")
			_, err := v.Verify(t.Context(), first)
			wantRetry(t, err, 1) // its fetch starts now
			_, err = v.Verify(t.Context(), second)
			wantRetry(t, err, 2) // the next fetch starts a gap later
			settle(t, v)
			_, err = v.Verify(t.Context(), first)
			wantUnauthenticated(t, err, first)
			_, err = v.Verify(t.Context(), second)
			wantRetry(t, err, 2) // not told yet: that fetch started before it was asked
			clk.Advance(jwksFetchGap)
			settle(t, v)
			_, err = v.Verify(t.Context(), second)
			wantUnauthenticated(t, err, second)
			if n := srv.hits.Load(); n != 3 {
				t.Errorf("jwks fetched %d times, want 3", n)
			}
		}},
		{"tokens of one new key share a fetch", func(t *testing.T, srv *jwksServer, v *Verifier, clk *fakeClock) {
			srv.add(jwk("rsa-later", rsaLater()))
			tok := sign(t, jwt.SigningMethodRS256, "rsa-later", rsaLater(), userClaims())
			errs := make(chan error, 20)
			var wg sync.WaitGroup
			for range 20 {
				wg.Go(func() {
					_, err := v.Verify(t.Context(), tok)
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				// Accepted once the fetch has told; before, 1 for the token that started it, 2
				// for those that came while it ran.
				if err != nil {
					wantRetry(t, err, 1, 2)
				}
			}
			clk.Advance(time.Second)
			settle(t, v)
			for range 20 {
				if _, err := v.Verify(t.Context(), tok); err != nil {
					t.Errorf("new key refused on the retry: %v", err)
				}
			}
			if n := srv.hits.Load(); n != 2 {
				t.Errorf("jwks fetched %d times, want 2 (start, then the new key once)", n)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newJWKSServer(t, jwk("ec-1", ecKey()))
			v, clk := fakeVerifier(t, Config{JWKSURL: srv.url()})
			// Tokens arrive after start-up: the fetch at start leaves no gap to wait for.
			clk.Advance(jwksFetchGap)
			tt.run(t, srv, v, clk)
			// Known keys keep working throughout.
			if _, err := v.Verify(t.Context(), esToken(t, "ec-1")); err != nil {
				t.Errorf("known key refused: %v", err)
			}
		})
	}
}

// A key removed from the set is trusted until the set is refresh old, and refused from then on.
func TestJWKSRevocationDelay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		refresh time.Duration // Config.JWKSRefresh
		want    time.Duration // how long the removed key stays trusted
	}{
		{"default", 0, DefaultJWKSRefresh},
		{"thirty seconds", 30 * time.Second, 30 * time.Second},
		{"shortest", MinJWKSRefresh, MinJWKSRefresh},
		{"a day", 24 * time.Hour, 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newJWKSServer(t, jwk("ec-1", ecKey()), jwk("rsa-1", rsaKey()))
			v, clk := fakeVerifier(t, Config{JWKSURL: srv.url(), JWKSRefresh: tt.refresh})
			revoked := esToken(t, "ec-1")
			kept := sign(t, jwt.SigningMethodRS256, "rsa-1", rsaKey(), userClaims())
			if _, err := v.Verify(t.Context(), revoked); err != nil {
				t.Fatalf("before revocation: %v", err)
			}
			srv.remove("ec-1")
			clk.Advance(tt.want - time.Nanosecond)
			if _, err := v.Verify(t.Context(), revoked); err != nil {
				t.Errorf("revoked key refused before the refresh interval: %v", err)
			}
			if n := srv.hits.Load(); n != 1 {
				t.Errorf("jwks fetched %d times within the refresh interval, want 1", n)
			}
			clk.Advance(time.Nanosecond)
			_, err := v.Verify(t.Context(), revoked)
			wantUnauthenticated(t, err, revoked)
			if _, err := v.Verify(t.Context(), kept); err != nil {
				t.Errorf("kept key refused: %v", err)
			}
			if n := srv.hits.Load(); n != 2 {
				t.Errorf("jwks fetched %d times, want 2 (start, then the refresh)", n)
			}
		})
	}
}

// A key set that cannot be fetched never stops the verifier: tokens that need it answer 503 with
// the seconds until a fetch may tell, HS256 tokens are checked with the secret, known keys stay in
// use while the set is down, and the set is fetched again once the server is back. A new key is
// asked for in the background, without a wait, and accepted on a retry once the server is back.
func TestJWKSOutage(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, jwk("ec-1", ecKey()))
	srv.down.Store(true)
	v, clk := fakeVerifier(t, Config{JWTSecret: testSecret, JWKSURL: srv.url(), JWKSRefresh: time.Minute})
	es, hs256 := esToken(t, "ec-1"), hs(t, userClaims())
	rotated := sign(t, jwt.SigningMethodRS256, "rsa-later", rsaLater(), userClaims())
	const ok, unauthenticated = 0, -1 // want: ok, a 401, or a 503 with that Retry-After
	steps := []struct {
		name    string
		advance time.Duration
		down    bool
		change  func()
		token   string
		want    int
		hits    int32 // once the fetches it started have ended
	}{
		{"es256 before the set was ever fetched", 0, true, nil, es, 5, 1},
		{"hs256 meanwhile", 0, true, nil, hs256, ok, 1},
		{"es256 before the retry is due", 4 * time.Second, true, nil, es, 1, 1},
		{"es256 when the retry fails", time.Second, true, nil, es, 5, 2},
		{"es256 once the server is back", 5 * time.Second, false, nil, es, ok, 3},
		{"known key while the set is fresh and down", 0, true, nil, es, ok, 3},
		// Its fetch starts in the background, and fails.
		{"new key while the set is down", time.Second, true, func() { srv.add(jwk("rsa-later", rsaLater())) }, rotated, 1, 4},
		// The next fetch may start 5 s after the failure; it is set to.
		{"new key on its retry while the set is down", time.Second, true, nil, rotated, 5, 4},
		// That fetch starts as the clock passes its time, and fails: the last keys stay in use.
		{"known key while the set is stale and down", time.Minute, true, nil, es, ok, 5},
		{"hs256 throughout", 0, true, nil, hs256, ok, 5},
		{"new key once the server is back", 5 * time.Second, false, nil, rotated, 1, 6},
		{"new key on its retry", time.Second, false, nil, rotated, ok, 6},
		{"revoked key once the server is back", time.Minute, false, func() { srv.remove("ec-1") }, es, unauthenticated, 7},
	}
	for _, s := range steps {
		srv.down.Store(s.down)
		if s.change != nil {
			s.change()
		}
		clk.Advance(s.advance)
		settle(t, v)
		p, err := v.Verify(t.Context(), s.token)
		settle(t, v)
		switch s.want {
		case ok:
			if err != nil || p.UserID != testUser.String() {
				t.Errorf("%s: %+v, %v; want the user", s.name, p, err)
			}
		case unauthenticated:
			if e := refused(err); e != nil {
				t.Errorf("%s: %v", s.name, e)
			}
		default:
			var ae *apierror.Error
			if !errors.As(err, &ae) || ae.Code != apierror.Unavailable || ae.RetryAfter != s.want {
				t.Errorf("%s: error %v (retry after %d), want unavailable, retry after %d",
					s.name, err, retryAfterOf(err), s.want)
			}
		}
		if n := srv.hits.Load(); n != s.hits {
			t.Errorf("%s: jwks fetched %d times, want %d", s.name, n, s.hits)
		}
	}
}

func retryAfterOf(err error) int {
	var ae *apierror.Error
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	return 0
}

// BenchmarkVerifyES256 checks tokens of a cached key from many goroutines: the key set's lock is
// on this path.
func BenchmarkVerifyES256(b *testing.B) {
	srv := newJWKSServer(b, jwk("ec-1", ecKey()))
	v := newVerifier(b, b.Context(), Config{JWKSURL: srv.url()})
	tok := esToken(b, "ec-1")
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.Verify(context.Background(), tok); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// jwksSlow is how long the key set's server takes to answer in the tests that time answers: far
// longer than any answer that does not wait for it.
const jwksSlow = 400 * time.Millisecond

// unknownKIDAnswer is nil when err is what a token naming a key the set does not hold may get: a
// 401, or a 503 with a Retry-After while no fetch since the token arrived could tell.
func unknownKIDAnswer(err error) error {
	var ae *apierror.Error
	switch {
	case !errors.As(err, &ae):
		return fmt.Errorf("error %v, want a 401 or a 503", err)
	case ae.Code == apierror.Unauthenticated:
		return nil
	case ae.Code == apierror.Unavailable && ae.RetryAfter >= 1:
		return nil
	}
	return fmt.Errorf("error %v (retry after %d), want a 401 or a 503 with Retry-After", err, ae.RetryAfter)
}

// timedVerify is Verify and the time it took.
func timedVerify(v *Verifier, tok string) (Principal, time.Duration, error) {
	start := time.Now()
	p, err := v.Verify(context.Background(), tok)
	return p, time.Since(start), err
}

// A token naming a key the set does not hold is answered at once, however slow the set's server
// and however many such tokens come: it never waits for a fetch, neither one that another request
// made nor one that proved its kid absent. A key published after start is still accepted within
// seconds, on the retry its first 503 asks for, while made-up kids keep coming.
func TestJWKSUnknownKIDAnswersAtOnce(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, jwk("ec-1", ecKey()))
	srv.delay.Store(int64(jwksSlow))
	v := newVerifier(t, t.Context(), Config{JWKSURL: srv.url()})
	if _, err := v.Verify(t.Context(), esToken(t, "ec-1")); err != nil {
		t.Fatalf("token of a published key: %v", err)
	}
	start := time.Now()
	// A generous bound: any wait for the server takes jwksSlow at least.
	const bound = jwksSlow / 2
	var (
		mu    sync.Mutex
		times []time.Duration
	)
	invent := func() error {
		t := jwt.NewWithClaims(jwt.SigningMethodES256, userClaims())
		t.Header["kid"] = uuid.NewString()
		tok, err := t.SignedString(ecOther())
		if err != nil {
			return err
		}
		_, d, err := timedVerify(v, tok)
		mu.Lock()
		times = append(times, d)
		mu.Unlock()
		if err := unknownKIDAnswer(err); err != nil {
			return err
		}
		if d > bound {
			return fmt.Errorf("made-up kid answered in %v, want under %v", d, bound)
		}
		return nil
	}
	errs := make(chan error, 10_000)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { errs <- invent() })
	}
	wg.Wait()
	// Made-up kids keep coming while a new key is published and first used.
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				if err := invent(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	srv.add(jwk("rsa-later", rsaLater()))
	rotated := sign(t, jwt.SigningMethodRS256, "rsa-later", rsaLater(), userClaims())
	published := time.Now()
	var (
		got   Principal
		err   error
		tries int
	)
	for tries = 1; tries <= 5; tries++ {
		var d time.Duration
		got, d, err = timedVerify(v, rotated)
		if d > bound {
			t.Errorf("try %d of the new key answered in %v, want under %v", tries, d, bound)
		}
		var ae *apierror.Error
		if !errors.As(err, &ae) || ae.Code != apierror.Unavailable {
			break
		}
		if ae.RetryAfter < 1 || ae.RetryAfter > 2 {
			t.Errorf("try %d of the new key: Retry-After %d, want 1 or 2", tries, ae.RetryAfter)
		}
		time.Sleep(time.Duration(ae.RetryAfter) * time.Second)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		if e != nil {
			t.Error(e)
		}
	}
	if err != nil || got.UserID != testUser.String() {
		t.Fatalf("token of the newly published key, try %d: %+v, %v", tries, got, err)
	}
	if took := time.Since(published); took > 5*time.Second || tries > 3 {
		t.Errorf("newly published key accepted after %v and %d tries, want within seconds", took, tries)
	}
	// Made-up kids cost at most one fetch a second.
	elapsed := time.Since(start)
	if n, most := int(srv.hits.Load())-1, 2+int(elapsed/jwksFetchGap); n > most {
		t.Errorf("%d fetches in %v, want at most %d", n, elapsed, most)
	}
	slices.Sort(times)
	t.Logf("%d made-up kids over %v: median %v, slowest %v; %d fetches", len(times), elapsed,
		times[len(times)/2], times[len(times)-1], srv.hits.Load())
}

// A made-up kid asked again once a fetch since its first sight proved it absent is a 401 at once.
func TestJWKSUnknownKIDRefusedOnRetry(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, jwk("ec-1", ecKey()))
	srv.delay.Store(int64(jwksSlow))
	v := newVerifier(t, t.Context(), Config{JWKSURL: srv.url()})
	if _, err := v.Verify(t.Context(), esToken(t, "ec-1")); err != nil {
		t.Fatalf("token of a published key: %v", err)
	}
	tok := esToken(t, "made-up")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, d, err := timedVerify(v, tok)
		if d > jwksSlow/2 {
			t.Errorf("made-up kid answered in %v, want under %v", d, jwksSlow/2)
		}
		if e := unknownKIDAnswer(err); e != nil {
			t.Fatal(e)
		}
		ae := apierror.As(err)
		if ae.Code == apierror.Unauthenticated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("made-up kid still %v after 5 s", err)
		}
		time.Sleep(time.Duration(ae.RetryAfter) * time.Second)
	}
	// Remembered: refused at once, without a fetch.
	hits := srv.hits.Load()
	for range 10 {
		_, d, err := timedVerify(v, tok)
		wantUnauthenticated(t, err, tok)
		if d > jwksSlow/2 {
			t.Errorf("made-up kid proven absent answered in %v, want under %v", d, jwksSlow/2)
		}
	}
	if n := srv.hits.Load(); n != hits {
		t.Errorf("a kid proven absent fetched the set %d times, want none", n-hits)
	}
}

// Start-up never waits for the key set: with a server that never answers, NewVerifier returns at
// once, fetching in the background, and HS256 tokens are checked at once. A token that needs the
// set waits for it no longer than its deadline, and answers 503 with Retry-After.
func TestJWKSHangingServerAtStart(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, jwk("ec-1", ecKey()))
	srv.hang(t)
	start := time.Now()
	v := newVerifier(t, t.Context(), Config{JWTSecret: testSecret, JWKSURL: srv.url()})
	if d := time.Since(start); d > time.Second {
		t.Errorf("NewVerifier took %v with a key set that never answers, want under 1s", d)
	}
	p, d, err := timedVerify(v, hs(t, userClaims()))
	if err != nil || p.UserID != testUser.String() {
		t.Fatalf("HS256 token: %+v, %v", p, err)
	}
	if d > time.Second {
		t.Errorf("HS256 token took %v, want under 1s", d)
	}
	// The fetch started in the background.
	for deadline := time.Now().Add(5 * time.Second); srv.hits.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the key set was not fetched after start")
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	es := esToken(t, "ec-1")
	_, err = v.Verify(ctx, es)
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Code != apierror.Unavailable || ae.RetryAfter < 1 {
		t.Errorf("ES256 token while the set hangs: %v (retry after %d), want a 503 with Retry-After", err, retryAfterOf(err))
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("jwks fetched %d times, want 1", n)
	}
}

// settle waits until v's key set has no fetch in flight.
func settle(t testing.TB, v *Verifier) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		v.jwks.mu.Lock()
		idle := v.jwks.inflight == nil
		v.jwks.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a key set fetch is still in flight after 10 s")
		}
	}
}

// verifyRetrying verifies tok, retrying after each 503 as a client does, on the fake clock.
func verifyRetrying(t testing.TB, v *Verifier, clk *fakeClock, tok string) (Principal, error) {
	t.Helper()
	settle(t, v)
	for range 5 {
		p, err := v.Verify(t.Context(), tok)
		var ae *apierror.Error
		if !errors.As(err, &ae) || ae.Code != apierror.Unavailable {
			return p, err
		}
		clk.Advance(time.Duration(ae.RetryAfter) * time.Second)
		settle(t, v)
	}
	t.Fatalf("still unavailable after 5 tries")
	return Principal{}, nil
}

// A kid a fetch proved absent is refused without a fetch for a short while only: once its key is
// published, its tokens are accepted after at most jwksAbsentFor and a retry; and at once when a
// fetch made for another reason meanwhile brings the key.
func TestJWKSKIDPublishedAfterProvenAbsent(t *testing.T) {
	t.Parallel()
	later := sign(t, jwt.SigningMethodRS256, "rsa-later", rsaLater(), userClaims())
	t.Run("after the memory", func(t *testing.T) {
		t.Parallel()
		srv := newJWKSServer(t, jwk("ec-1", ecKey()))
		v, clk := fakeVerifier(t, Config{JWKSURL: srv.url()})
		clk.Advance(jwksFetchGap)
		_, err := verifyRetrying(t, v, clk, later)
		wantUnauthenticated(t, err, later)
		srv.add(jwk("rsa-later", rsaLater()))
		clk.Advance(15 * time.Second)
		if p, err := verifyRetrying(t, v, clk, later); err != nil || p.UserID != testUser.String() {
			t.Errorf("key published 15 s after its kid was proven absent: %+v, %v", p, err)
		}
	})
	t.Run("another fetch brings it", func(t *testing.T) {
		t.Parallel()
		srv := newJWKSServer(t, jwk("ec-1", ecKey()))
		v, clk := fakeVerifier(t, Config{JWKSURL: srv.url()})
		clk.Advance(jwksFetchGap)
		_, err := verifyRetrying(t, v, clk, later)
		wantUnauthenticated(t, err, later)
		srv.add(jwk("rsa-later", rsaLater()))
		clk.Advance(jwksFetchGap)
		other := esToken(t, "another-made-up-kid")
		_, err = verifyRetrying(t, v, clk, other)
		wantUnauthenticated(t, err, other)
		if p, err := v.Verify(t.Context(), later); err != nil || p.UserID != testUser.String() {
			t.Errorf("key a fetch brought while its kid was remembered absent: %+v, %v", p, err)
		}
	})
}

// BenchmarkVerifyUnknownKID is what a token naming a made-up kid costs, one after another, with
// a key set whose server answers in jwksSlow.
func BenchmarkVerifyUnknownKID(b *testing.B) {
	srv := newJWKSServer(b, jwk("ec-1", ecKey()))
	srv.delay.Store(int64(jwksSlow))
	v := newVerifier(b, b.Context(), Config{JWKSURL: srv.url()})
	if _, err := v.Verify(b.Context(), esToken(b, "ec-1")); err != nil {
		b.Fatal(err)
	}
	toks := make([]string, b.N)
	for i := range toks {
		toks[i] = esToken(b, uuid.NewString())
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := v.Verify(context.Background(), toks[i]); unknownKIDAnswer(err) != nil {
			b.Fatal(err)
		}
	}
}
