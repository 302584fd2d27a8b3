package auth

import (
	"context"
	"errors"
	"fmt"
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

// sprayed signs a token naming a made-up kid, as anyone can, and returns what Verify said.
func sprayed(v *Verifier) error {
	t := jwt.NewWithClaims(jwt.SigningMethodES256, userClaims())
	t.Header["kid"] = uuid.NewString()
	tok, err := t.SignedString(ecOther())
	if err != nil {
		return err
	}
	_, err = v.Verify(context.Background(), tok)
	return refused(err)
}

// A key published after start signs tokens that are accepted the first time they are seen,
// however many made-up kids came before and keep coming: those cannot use up the fetches a
// rotated key needs.
func TestJWKSRotationDespiteUnknownKIDs(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, jwk("ec-1", ecKey()))
	v := newVerifier(t, t.Context(), Config{JWKSURL: srv.url()})
	errs := make(chan error, 1000)
	var wg sync.WaitGroup
	// Before: more made-up kids than any fetch budget.
	for range 50 {
		wg.Go(func() { errs <- sprayed(v) })
	}
	wg.Wait()
	// Meanwhile: made-up kids keep coming while the new key is published and first used.
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := sprayed(v); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	srv.add(jwk("rsa-later", rsaLater()))
	got, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, "rsa-later", rsaLater(), userClaims()))
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		if e != nil {
			t.Errorf("made-up kid: %v", e)
		}
	}
	if err != nil {
		t.Fatalf("token of the newly published key: %v", err)
	}
	if got.UserID != testUser {
		t.Errorf("UserID = %v, want %v", got.UserID, testUser)
	}
}

// clock is the key set's time on c (authserver_test.go): a wait moves it at once, so no test
// sleeps.
func (c *fakeClock) clock() clock {
	return clock{now: c.Now, sleep: func(ctx context.Context, d time.Duration) error {
		c.Advance(d)
		return ctx.Err()
	}}
}

// fakeVerifier builds a Verifier whose key set runs on a fake clock.
func fakeVerifier(t testing.TB, cfg Config) (*Verifier, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	v, err := buildVerifier(t.Context(), cfg, clk.clock())
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v, clk
}

// esToken is a user token signed by ecKey, naming kid.
func esToken(t testing.TB, kid string) string {
	return sign(t, jwt.SigningMethodES256, kid, ecKey(), userClaims())
}

// Tokens naming keys the set does not hold cost few fetches: none for a malformed kid, one per
// jwksAbsentFor for a kid already proven absent, at most one per jwksFetchGap for new kids.
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
			if n := srv.hits.Load(); n != 1 {
				t.Errorf("jwks fetched %d times, want 1 (start only)", n)
			}
		}},
		{"a kid proven absent is remembered", func(t *testing.T, srv *jwksServer, v *Verifier, clk *fakeClock) {
			tok := esToken(t, "made-up")
			for range 20 {
				// Far enough apart that each would fetch, were the kid not remembered.
				clk.Advance(2 * jwksFetchGap)
				_, err := v.Verify(t.Context(), tok)
				wantUnauthenticated(t, err, tok)
			}
			if n := srv.hits.Load(); n != 2 {
				t.Errorf("jwks fetched %d times for one made-up kid, want 2", n)
			}
			clk.Advance(jwksAbsentFor)
			_, err := v.Verify(t.Context(), tok)
			wantUnauthenticated(t, err, tok)
			if n := srv.hits.Load(); n != 3 {
				t.Errorf("jwks fetched %d times once the kid was forgotten, want 3", n)
			}
		}},
		{"new kids fetch at most once a gap", func(t *testing.T, srv *jwksServer, v *Verifier, clk *fakeClock) {
			start := clk.Now()
			for range 30 {
				clk.Advance(100 * time.Millisecond)
				tok := esToken(t, uuid.NewString())
				_, err := v.Verify(t.Context(), tok)
				wantUnauthenticated(t, err, tok)
			}
			fetches := int(srv.hits.Load()) - 1
			if max := 1 + int(clk.Now().Sub(start)/jwksFetchGap); fetches > max || fetches < 1 {
				t.Errorf("%d fetches over %v, want 1 to %d", fetches, clk.Now().Sub(start), max)
			}
		}},
		{"a kid proven absent, then published", func(t *testing.T, srv *jwksServer, v *Verifier, clk *fakeClock) {
			tok := sign(t, jwt.SigningMethodRS256, "rsa-later", rsaLater(), userClaims())
			_, err := v.Verify(t.Context(), tok)
			wantUnauthenticated(t, err, tok)
			srv.add(jwk("rsa-later", rsaLater()))
			clk.Advance(jwksAbsentFor)
			if _, err := v.Verify(t.Context(), tok); err != nil {
				t.Errorf("published key refused: %v", err)
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
				if err != nil {
					t.Errorf("new key refused: %v", err)
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
			// Tokens arrive after start-up: a fetch that starts when a token arrives, or later,
			// answers for it.
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
// the seconds until the next fetch, HS256 tokens are checked with the secret, known keys stay in
// use while the set is down, and the set is fetched again once the server is back.
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
		hits    int32
	}{
		{"es256 before the set was ever fetched", 0, true, nil, es, 5, 1},
		{"hs256 meanwhile", 0, true, nil, hs256, ok, 1},
		{"es256 before the retry is due", 4 * time.Second, true, nil, es, 1, 1},
		{"es256 when the retry fails", time.Second, true, nil, es, 5, 2},
		{"es256 once the server is back", 5 * time.Second, false, nil, es, ok, 3},
		{"known key while the set is fresh and down", 0, true, nil, es, ok, 3},
		{"new key while the set is down", time.Second, true, func() { srv.add(jwk("rsa-later", rsaLater())) }, rotated, 5, 4},
		{"known key while the set is stale and down", time.Minute, true, nil, es, ok, 5},
		{"hs256 throughout", 0, true, nil, hs256, ok, 5},
		{"new key once the server is back", 5 * time.Second, false, nil, rotated, ok, 6},
		{"revoked key once the server is back", time.Minute, false, func() { srv.remove("ec-1") }, es, unauthenticated, 7},
	}
	for _, s := range steps {
		clk.Advance(s.advance)
		srv.down.Store(s.down)
		if s.change != nil {
			s.change()
		}
		p, err := v.Verify(t.Context(), s.token)
		switch s.want {
		case ok:
			if err != nil || p.UserID != testUser {
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
