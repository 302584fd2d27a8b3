package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
)

const testSecret = "super-secret-jwt-token-with-at-least-32-characters-long"

var testUser = uuid.MustParse("6f1c2b9e-3d4a-4e5f-8a7b-9c0d1e2f3a4b")

// Keys are generated once: RSA generation is slow enough to matter across many tests.
var (
	ecKey    = sync.OnceValue(func() *ecdsa.PrivateKey { return mustEC() })
	ecOther  = sync.OnceValue(func() *ecdsa.PrivateKey { return mustEC() })
	rsaKey   = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA() })
	rsaLater = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA() })
)

func mustEC() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func mustRSA() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwk renders the public half of key as a JWK with kid.
func jwk(kid string, key any) map[string]string {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		pub, err := k.PublicKey.ECDH()
		if err != nil {
			panic(err)
		}
		p := pub.Bytes() // 0x04 || X || Y
		return map[string]string{"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig",
			"kid": kid, "x": b64(p[1:33]), "y": b64(p[33:])}
	case *rsa.PrivateKey:
		return map[string]string{"kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid,
			"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
	}
	panic("unsupported key")
}

// jwksServer serves a JWK Set that a test can change, slow down, hang or take down, and counts
// the fetches.
type jwksServer struct {
	*httptest.Server
	mu    sync.Mutex
	keys  []map[string]string
	hits  atomic.Int32
	down  atomic.Bool  // answer 503, as a key set that cannot be fetched
	delay atomic.Int64 // nanoseconds to wait before each answer
	hung  chan struct{}
}

func newJWKSServer(t testing.TB, keys ...map[string]string) *jwksServer {
	t.Helper()
	s := &jwksServer{keys: keys}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		hung := s.hung
		s.mu.Unlock()
		if hung != nil {
			select {
			case <-hung:
			case <-r.Context().Done():
			}
			return
		}
		if d := time.Duration(s.delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		if s.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": s.keys})
	}))
	t.Cleanup(s.Close)
	return s
}

// hang makes every fetch wait, unanswered, until the test ends.
func (s *jwksServer) hang(t testing.TB) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hung = make(chan struct{})
	// Cleanups run last first: the waiting fetches end before the server closes.
	t.Cleanup(func() { close(s.hung) })
}

func (s *jwksServer) add(k map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, k)
}

// remove takes the key kid out of the set, as revoking it does.
func (s *jwksServer) remove(kid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = slices.DeleteFunc(s.keys, func(k map[string]string) bool { return k["kid"] == kid })
}

func (s *jwksServer) url() string { return s.URL + "/auth/v1/.well-known/jwks.json" }

func newVerifier(t testing.TB, ctx context.Context, cfg Config) *Verifier {
	t.Helper()
	v, err := NewVerifier(ctx, cfg)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

// userClaims are the claims of a valid Supabase user token; cases change one thing.
func userClaims(mod ...func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"role": RoleUser,
		"sub":  testUser.String(),
		"aud":  "authenticated",
		"iat":  now.Unix(),
		"exp":  now.Add(time.Hour).Unix(),
		"iss":  "https://project.supabase.co/auth/v1",
	}
	for _, m := range mod {
		m(c)
	}
	return c
}

// serviceClaims are the claims of a Supabase service_role key: no sub, no aud.
func serviceClaims(mod ...func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{"role": RoleService, "iss": "supabase", "exp": time.Now().Add(time.Hour).Unix()}
	for _, m := range mod {
		m(c)
	}
	return c
}

func set(k string, v any) func(jwt.MapClaims) { return func(c jwt.MapClaims) { c[k] = v } }
func del(k string) func(jwt.MapClaims)        { return func(c jwt.MapClaims) { delete(c, k) } }

func sign(t testing.TB, method jwt.SigningMethod, kid string, key any, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return s
}

func hs(t testing.TB, c jwt.MapClaims) string {
	return sign(t, jwt.SigningMethodHS256, "", []byte(testSecret), c)
}

// hsRaw signs with the secret the claims c followed by members, raw JSON written as is (such as
// a claim named twice, which a map cannot hold).
func hsRaw(t testing.TB, c jwt.MapClaims, members string) string {
	t.Helper()
	body, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	body = append(append(body[:len(body)-1], ','), append([]byte(members), '}')...)
	unsigned := b64([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + b64(body)
	sig, err := jwt.SigningMethodHS256.Sign(unsigned, []byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return unsigned + "." + b64(sig)
}

func mint(t testing.TB, c MintClaims) string {
	t.Helper()
	s, err := MintHS256(testSecret, c)
	if err != nil {
		t.Fatalf("MintHS256: %v", err)
	}
	return s
}

// rsaPublicPEM is what an attacker would use as an HMAC secret in an HS/RS confusion attack.
func rsaPublicPEM(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&rsaKey().PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// wantUnauthenticated fails unless err is a 401 *apierror.Error that does not quote secret.
func wantUnauthenticated(t testing.TB, err error, secret string) {
	t.Helper()
	var ae *apierror.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *apierror.Error", err, err)
	}
	if ae.Code != apierror.Unauthenticated {
		t.Fatalf("code = %q, want %q", ae.Code, apierror.Unauthenticated)
	}
	if secret != "" && strings.Contains(err.Error(), secret) {
		t.Fatalf("error %q quotes the credential", err)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := newJWKSServer(t, jwk("ec-1", ecKey()), jwk("rsa-1", rsaKey()))
	jwksOnly, clk := fakeVerifier(t, Config{JWKSURL: srv.url()})
	both, _ := fakeVerifier(t, Config{JWTSecret: testSecret, JWKSURL: srv.url()})
	// A kid the set does not hold answers 503 until a fetch since its first sight tells; here
	// that fetch has told, on a fake clock that no case moves.
	clk.Advance(jwksFetchGap)
	if _, err := verifyRetrying(t, jwksOnly, clk, sign(t, jwt.SigningMethodES256, "nope", ecKey(), userClaims())); refused(err) != nil {
		t.Fatalf("unknown kid: %v", err)
	}
	verifiers := map[string]*Verifier{
		"hs":     newVerifier(t, ctx, Config{JWTSecret: testSecret}),
		"iss":    newVerifier(t, ctx, Config{JWTSecret: testSecret, Issuer: "https://project.supabase.co/auth/v1"}),
		"aud":    newVerifier(t, ctx, Config{JWTSecret: testSecret, Audience: "agents"}),
		"leeway": newVerifier(t, ctx, Config{JWTSecret: testSecret, Leeway: time.Minute}),
		"jwks":   jwksOnly,
		"both":   both,
	}
	user := Principal{Role: RoleUser, UserID: testUser.String()}
	service := Principal{Role: RoleService}
	past := time.Now().Add(-time.Hour).Unix()
	future := time.Now().Add(time.Hour).Unix()
	tests := []struct {
		name     string
		verifier string
		token    string
		want     *Principal // nil: want a 401
	}{
		{"hs user", "hs", hs(t, userClaims()), &user},
		{"hs user with tenant", "hs", hs(t, userClaims(set("app_metadata", map[string]any{"tenant_id": "acme", "provider": "email"}))),
			&Principal{Role: RoleUser, UserID: testUser.String(), TenantID: "acme"}},
		{"hs user empty tenant", "hs", hs(t, userClaims(set("app_metadata", map[string]any{"tenant_id": ""}))), &user},
		{"hs user null tenant", "hs", hs(t, userClaims(set("app_metadata", map[string]any{"tenant_id": nil}))), &user},
		{"hs user aud array", "hs", hs(t, userClaims(set("aud", []string{"other", "authenticated"}))), &user},
		{"hs user tenant 128 chars", "hs", hs(t, userClaims(set("app_metadata", map[string]any{"tenant_id": strings.Repeat("é", 128)}))),
			&Principal{Role: RoleUser, UserID: testUser.String(), TenantID: strings.Repeat("é", 128)}},
		{"hs service", "hs", hs(t, serviceClaims()), &service},
		{"hs service ignores sub and tenant", "hs", hs(t, serviceClaims(set("sub", "not-a-uuid"), set("app_metadata", map[string]any{"tenant_id": "acme"}))), &service},
		{"minted user", "hs", mint(t, MintClaims{Role: RoleUser, Subject: testUser.String(), TenantID: "acme"}),
			&Principal{Role: RoleUser, UserID: testUser.String(), TenantID: "acme"}},
		{"minted service", "hs", mint(t, MintClaims{Role: RoleService, Issuer: "supabase"}), &service},
		{"minted expired", "hs", mint(t, MintClaims{Role: RoleUser, Subject: testUser.String(), TTL: -time.Minute}), nil},
		{"anonymous user", "hs", hs(t, userClaims(set("is_anonymous", true))), &Principal{Role: RoleUser, UserID: testUser.String(), Anonymous: true}},
		{"anonymous es256 user", "jwks", sign(t, jwt.SigningMethodES256, "ec-1", ecKey(), userClaims(set("is_anonymous", true))),
			&Principal{Role: RoleUser, UserID: testUser.String(), Anonymous: true}},
		{"minted anonymous user", "hs", mint(t, MintClaims{Role: RoleUser, Subject: testUser.String(), TenantID: "acme", Anonymous: true}),
			&Principal{Role: RoleUser, UserID: testUser.String(), TenantID: "acme", Anonymous: true}},
		{"is_anonymous false", "hs", hs(t, userClaims(set("is_anonymous", false))), &user},
		{"is_anonymous null", "hs", hs(t, userClaims(set("is_anonymous", nil))), &user},
		{"is_anonymous not a bool", "hs", hs(t, userClaims(set("is_anonymous", "true"))), nil},
		// A claim named twice counts as its last (RFC 7519, section 4): a last null is absence.
		{"is_anonymous true, then null", "hs", hsRaw(t, userClaims(), `"is_anonymous":true,"is_anonymous":null`), &user},
		{"is_anonymous null, then true", "hs", hsRaw(t, userClaims(), `"is_anonymous":null,"is_anonymous":true`),
			&Principal{Role: RoleUser, UserID: testUser.String(), Anonymous: true}},
		{"is_anonymous true, then false", "hs", hsRaw(t, userClaims(), `"is_anonymous":true,"is_anonymous":false`), &user},
		{"service is never anonymous", "hs", hs(t, serviceClaims(set("is_anonymous", true))), &service},

		{"expired", "hs", hs(t, userClaims(set("exp", past))), nil},
		{"expired within leeway", "leeway", hs(t, userClaims(set("exp", time.Now().Add(-10*time.Second).Unix()))), &user},
		{"expired beyond leeway", "leeway", hs(t, userClaims(set("exp", past))), nil},
		{"expired service", "hs", hs(t, serviceClaims(set("exp", past))), nil},
		{"no exp", "hs", hs(t, userClaims(del("exp"))), nil},
		{"no exp service", "hs", hs(t, serviceClaims(del("exp"))), nil},
		{"exp not a number", "hs", hs(t, userClaims(set("exp", "tomorrow"))), nil},
		{"not valid yet", "hs", hs(t, userClaims(set("nbf", future))), nil},
		{"wrong secret", "hs", sign(t, jwt.SigningMethodHS256, "", []byte("another-secret-of-at-least-32-characters"), userClaims()), nil},
		{"tampered payload", "hs", tamper(hs(t, userClaims()), serviceClaims()), nil},
		{"alg none", "hs", sign(t, jwt.SigningMethodNone, "", jwt.UnsafeAllowNoneSignatureType, userClaims()), nil},
		{"alg none service", "both", sign(t, jwt.SigningMethodNone, "", jwt.UnsafeAllowNoneSignatureType, serviceClaims()), nil},
		{"HS384", "hs", sign(t, jwt.SigningMethodHS384, "", []byte(testSecret), userClaims()), nil},
		{"wrong audience", "hs", hs(t, userClaims(set("aud", "anon"))), nil},
		{"no audience", "hs", hs(t, userClaims(del("aud"))), nil},
		{"configured audience", "aud", hs(t, userClaims(set("aud", "agents"))), &user},
		{"default audience refused when configured", "aud", hs(t, userClaims()), nil},
		{"issuer matches", "iss", hs(t, userClaims()), &user},
		{"wrong issuer", "iss", hs(t, userClaims(set("iss", "https://evil.example/auth/v1"))), nil},
		{"no issuer", "iss", hs(t, userClaims(del("iss"))), nil},
		{"service of another issuer", "iss", hs(t, serviceClaims()), nil},
		{"anon role", "hs", hs(t, userClaims(set("role", "anon"))), nil},
		{"missing role", "hs", hs(t, userClaims(del("role"))), nil},
		{"role wrong case", "hs", hs(t, userClaims(set("role", "Authenticated"))), nil},
		{"role not a string", "hs", hs(t, userClaims(set("role", 1))), nil},
		{"sub of Clerk", "hs", hs(t, userClaims(set("sub", "user_2abcDEF123"))), &Principal{Role: RoleUser, UserID: "user_2abcDEF123"}},
		{"sub of Auth0", "hs", hs(t, userClaims(set("sub", "auth0|123"))), &Principal{Role: RoleUser, UserID: "auth0|123"}},
		{"sub nil uuid", "hs", hs(t, userClaims(set("sub", uuid.Nil.String()))), &Principal{Role: RoleUser, UserID: uuid.Nil.String()}},
		{"sub of 255 characters", "hs", hs(t, userClaims(set("sub", strings.Repeat("é", 255)))),
			&Principal{Role: RoleUser, UserID: strings.Repeat("é", 255)}},
		{"sub uuid in upper case", "hs", hs(t, userClaims(set("sub", strings.ToUpper(testUser.String())))), &user},
		{"sub with a space", "hs", hs(t, userClaims(set("sub", "ada lovelace"))), &Principal{Role: RoleUser, UserID: "ada lovelace"}},
		{"sub empty", "hs", hs(t, userClaims(set("sub", ""))), nil},
		{"sub of 256 characters", "hs", hs(t, userClaims(set("sub", strings.Repeat("é", 256)))), nil},
		{"sub with a NUL", "hs", hs(t, userClaims(set("sub", "user\x001"))), nil},
		{"sub with a newline", "hs", hs(t, userClaims(set("sub", "user\n1"))), nil},
		{"sub with DEL", "hs", hs(t, userClaims(set("sub", "user\x7f"))), nil},
		{"sub with a zero-width space", "hs", hs(t, userClaims(set("sub", "user\u200b"))), nil},
		{"sub not a string", "hs", hs(t, userClaims(set("sub", 42))), nil},
		{"no sub", "hs", hs(t, userClaims(del("sub"))), nil},
		{"tenant not a string", "hs", hs(t, userClaims(set("app_metadata", map[string]any{"tenant_id": 7}))), nil},
		{"app_metadata not an object", "hs", hs(t, userClaims(set("app_metadata", "acme"))), nil},
		{"tenant too long", "hs", hs(t, userClaims(set("app_metadata", map[string]any{"tenant_id": strings.Repeat("a", 129)}))), nil},
		{"tenant with NUL", "hs", hs(t, userClaims(set("app_metadata", map[string]any{"tenant_id": "ac\x00me"}))), nil},
		{"empty", "hs", "", nil},
		{"garbage", "hs", "not-a-jwt", nil},
		{"three garbage parts", "hs", "aaaa.bbbb.cccc", nil},
		{"too long", "hs", hs(t, userClaims(set("pad", strings.Repeat("x", maxTokenLen)))), nil},
		{"es256 in hs mode", "hs", sign(t, jwt.SigningMethodES256, "ec-1", ecKey(), userClaims()), nil},

		{"es256 user", "jwks", sign(t, jwt.SigningMethodES256, "ec-1", ecKey(), userClaims()), &user},
		{"rs256 user", "jwks", sign(t, jwt.SigningMethodRS256, "rsa-1", rsaKey(), userClaims()), &user},
		{"es256 service", "jwks", sign(t, jwt.SigningMethodES256, "ec-1", ecKey(), serviceClaims()), &service},
		{"es256 user in both", "both", sign(t, jwt.SigningMethodES256, "ec-1", ecKey(), userClaims()), &user},
		{"hs user in both", "both", hs(t, userClaims()), &user},
		{"hs in jwks mode", "jwks", hs(t, userClaims()), nil},
		{"hs/rs confusion in jwks mode", "jwks", sign(t, jwt.SigningMethodHS256, "rsa-1", rsaPublicPEM(t), userClaims()), nil},
		{"hs/rs confusion in both", "both", sign(t, jwt.SigningMethodHS256, "rsa-1", rsaPublicPEM(t), userClaims()), nil},
		{"es256 signed by another key", "jwks", sign(t, jwt.SigningMethodES256, "ec-1", ecOther(), userClaims()), nil},
		{"rs256 naming the ec key", "jwks", sign(t, jwt.SigningMethodRS256, "ec-1", rsaKey(), userClaims()), nil},
		{"es256 naming the rsa key", "jwks", sign(t, jwt.SigningMethodES256, "rsa-1", ecKey(), userClaims()), nil},
		{"rs512", "jwks", sign(t, jwt.SigningMethodRS512, "rsa-1", rsaKey(), userClaims()), nil},
		{"unknown kid", "jwks", sign(t, jwt.SigningMethodES256, "nope", ecKey(), userClaims()), nil},
		{"no kid", "jwks", sign(t, jwt.SigningMethodES256, "", ecKey(), userClaims()), nil},
		{"expired es256", "jwks", sign(t, jwt.SigningMethodES256, "ec-1", ecKey(), userClaims(set("exp", past))), nil},
		{"anon es256", "jwks", sign(t, jwt.SigningMethodES256, "ec-1", ecKey(), userClaims(set("role", "anon"))), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := verifiers[tt.verifier].Verify(t.Context(), tt.token)
			if tt.want == nil {
				wantUnauthenticated(t, err, tt.token)
				if got != (Principal{}) {
					t.Errorf("principal = %+v alongside an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if got != *tt.want {
				t.Errorf("principal = %+v, want %+v", got, *tt.want)
			}
		})
	}
}

// tamper swaps a token's payload for c, keeping the original signature.
func tamper(token string, c jwt.MapClaims) string {
	parts := strings.Split(token, ".")
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	parts[1] = b64(b)
	return strings.Join(parts, ".")
}

// A key published after start is asked for at its first token, which answers 503 with
// Retry-After 1 and does not wait; the retry is accepted.
func TestJWKSPicksUpAddedKey(t *testing.T) {
	t.Parallel()
	srv := newJWKSServer(t, jwk("ec-1", ecKey()))
	v, clk := fakeVerifier(t, Config{JWKSURL: srv.url()})
	clk.Advance(jwksFetchGap)
	srv.add(jwk("rsa-later", rsaLater()))

	tok := sign(t, jwt.SigningMethodRS256, "rsa-later", rsaLater(), userClaims())
	_, err := v.Verify(t.Context(), tok)
	wantRetry(t, err, 1)
	clk.Advance(time.Second)
	settle(t, v)
	got, err := v.Verify(t.Context(), tok)
	if err != nil {
		t.Fatalf("token signed by a key added after start, on its retry: %v", err)
	}
	if got.UserID != testUser.String() {
		t.Errorf("UserID = %v, want %v", got.UserID, testUser)
	}
	if n := srv.hits.Load(); n != 2 {
		t.Errorf("jwks fetched %d times, want 2 (start, then the unknown kid)", n)
	}
}

func TestNewVerifierConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
	}{
		{"neither secret nor jwks", Config{Issuer: "x"}},
		{"negative leeway", Config{JWTSecret: testSecret, Leeway: -time.Second}},
		{"jwks not a url", Config{JWKSURL: "::"}},
		{"jwks not http", Config{JWKSURL: "ftp://keys.example/jwks.json"}},
		{"jwks without a host", Config{JWKSURL: "/auth/v1/.well-known/jwks.json"}},
		{"jwks refresh under a second", Config{JWKSURL: "https://keys.example/jwks.json", JWKSRefresh: time.Second - 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if v, err := NewVerifier(t.Context(), tt.cfg); err == nil {
				t.Fatalf("NewVerifier = %v, want an error", v)
			}
		})
	}
}

func TestMintHS256(t *testing.T) {
	t.Parallel()
	if _, err := MintHS256("", MintClaims{Role: RoleUser}); err == nil {
		t.Error("MintHS256 with an empty secret succeeded")
	}
	tok := mint(t, MintClaims{Role: RoleUser, Subject: testUser.String(), TenantID: "acme", Issuer: "local"})
	var c jwt.MapClaims
	if _, _, err := jwt.NewParser().ParseUnverified(tok, &c); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"role": RoleUser, "sub": testUser.String(), "aud": "authenticated", "iss": "local",
		"app_metadata": map[string]any{"tenant_id": "acme"}, "is_anonymous": false}
	for k, v := range want {
		if got, _ := json.Marshal(c[k]); string(got) != mustJSON(v) {
			t.Errorf("claim %s = %s, want %s", k, got, mustJSON(v))
		}
	}
	exp, _ := c.GetExpirationTime()
	if exp == nil || time.Until(exp.Time) < DefaultMintTTL-time.Minute || time.Until(exp.Time) > DefaultMintTTL {
		t.Errorf("exp = %v, want about %v from now", exp, DefaultMintTTL)
	}
	svc := mint(t, MintClaims{Role: RoleService})
	c = jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(svc, &c); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"sub", "aud", "iss", "app_metadata", "is_anonymous"} {
		if _, ok := c[k]; ok {
			t.Errorf("service token has claim %s", k)
		}
	}
	anon := mint(t, MintClaims{Role: RoleUser, Subject: testUser.String(), Anonymous: true})
	c = jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(anon, &c); err != nil {
		t.Fatal(err)
	}
	if c["is_anonymous"] != true {
		t.Errorf("anonymous token has is_anonymous %v, want true", c["is_anonymous"])
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

const bearerToken = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"

var bearerTests = []struct {
	name   string
	header string
	want   string // "": want a 401
}{
	{"bearer", "Bearer " + bearerToken, bearerToken},
	{"lower case scheme", "bearer " + bearerToken, bearerToken},
	{"upper case scheme", "BEARER " + bearerToken, bearerToken},
	{"surrounding space", "  Bearer " + bearerToken + " ", bearerToken},
	{"padding", "Bearer abc.def==", "abc.def=="},
	{"missing", "", ""},
	{"blank", "   ", ""},
	{"bearer alone", "Bearer", ""},
	{"bearer and space", "Bearer ", ""},
	{"basic", "Basic dXNlcjpwYXNzd29yZA==", ""},
	{"token alone", bearerToken, ""},
	{"no space", "Bearer" + bearerToken, ""},
	{"two spaces", "Bearer  " + bearerToken, ""},
	{"tab", "Bearer\t" + bearerToken, ""},
	{"extra part", "Bearer " + bearerToken + " extra.part", ""},
	{"comma", "Bearer " + bearerToken + ", Basic x.y", ""},
	{"only padding", "Bearer ===", ""},
	{"padding inside", "Bearer ab=c.d", ""},
	{"control char", "Bearer abc\x00.def", ""},
	{"non ascii", "Bearer abç.def", ""},
}

func TestParseBearer(t *testing.T) {
	t.Parallel()
	for _, tt := range bearerTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseBearer(tt.header)
			if tt.want == "" {
				wantUnauthenticated(t, err, credential(tt.header))
				return
			}
			if err != nil {
				t.Fatalf("ParseBearer: %v", err)
			}
			if got != tt.want {
				t.Errorf("token = %q, want %q", got, tt.want)
			}
		})
	}
}

// credential is the part of an Authorization header after the scheme, when it could not be
// mistaken for words of an error message (those contain no '.').
func credential(header string) string {
	_, c, _ := strings.Cut(strings.TrimSpace(header), " ")
	if !strings.Contains(c, ".") {
		return ""
	}
	return c
}

func FuzzParseBearer(f *testing.F) {
	for _, tt := range bearerTests {
		f.Add(tt.header)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got, err := ParseBearer(header)
		if err != nil {
			wantUnauthenticated(t, err, credential(header))
			return
		}
		if got == "" || !strings.Contains(header, got) || !isB64Token(got) {
			t.Fatalf("ParseBearer(%q) = %q", header, got)
		}
	})
}

func FuzzVerify(f *testing.F) {
	srv := newJWKSServer(f, jwk("ec-1", ecKey()), jwk("rsa-1", rsaKey()))
	v, _ := fakeVerifier(f, Config{JWTSecret: testSecret, JWKSURL: srv.url()})
	for _, tok := range []string{
		hs(f, userClaims()),
		hs(f, userClaims(set("app_metadata", map[string]any{"tenant_id": "acme"}))),
		hs(f, serviceClaims()),
		hs(f, userClaims(set("exp", time.Now().Add(-time.Hour).Unix()))),
		hs(f, userClaims(set("role", "anon"))),
		hs(f, userClaims(set("sub", "user-42"))),
		hs(f, userClaims(del("exp"))),
		sign(f, jwt.SigningMethodNone, "", jwt.UnsafeAllowNoneSignatureType, userClaims()),
		sign(f, jwt.SigningMethodHS256, "rsa-1", rsaPublicPEM(f), userClaims()),
		sign(f, jwt.SigningMethodES256, "ec-1", ecKey(), userClaims()),
		sign(f, jwt.SigningMethodRS256, "rsa-1", rsaKey(), userClaims()),
		sign(f, jwt.SigningMethodES256, "nope", ecKey(), userClaims()),
		"", "not-a-jwt", "aaaa.bbbb.cccc",
	} {
		f.Add(tok)
	}
	f.Fuzz(func(t *testing.T, token string) {
		p, err := v.Verify(t.Context(), token)
		if err != nil {
			if ae := apierror.As(err); ae.Code == apierror.Unavailable {
				// A kid the set does not hold, not yet told.
				wantRetry(t, err, 1, 2)
				return
			}
			if !strings.Contains(token, ".") {
				token = "" // too short to be told apart from the words of a message
			}
			wantUnauthenticated(t, err, token)
			return
		}
		switch {
		case p.Role == RoleService && p == Principal{Role: RoleService}:
		case p.Role == RoleUser && p.UserID != "":
		default:
			t.Fatalf("Verify accepted a token as %+v", p)
		}
	})
}

// A refusal says why: a token signed with a key this deployment does not take (an algorithm it
// does not accept, another kind of key, a kid the key set does not hold) answers "token signing
// key is not accepted"; "invalid token signature" is kept for a signature that does not verify
// with the key the token names.
func TestVerifyRefusalWording(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := newJWKSServer(t, jwk("ec-1", ecKey()), jwk("rsa-1", rsaKey()))
	jwksOnly, clk := fakeVerifier(t, Config{JWKSURL: srv.url()})
	clk.Advance(jwksFetchGap)
	if _, err := verifyRetrying(t, jwksOnly, clk, sign(t, jwt.SigningMethodES256, "nope", ecKey(), userClaims())); refused(err) != nil {
		t.Fatalf("unknown kid: %v", err)
	}
	hsOnly := newVerifier(t, ctx, Config{JWTSecret: testSecret})
	tests := []struct {
		name   string
		v      *Verifier
		token  string
		detail string
	}{
		{"HS384", hsOnly, sign(t, jwt.SigningMethodHS384, "", []byte(testSecret), userClaims()), errKey},
		{"HS512", hsOnly, sign(t, jwt.SigningMethodHS512, "", []byte(testSecret), userClaims()), errKey},
		{"alg none", hsOnly, sign(t, jwt.SigningMethodNone, "", jwt.UnsafeAllowNoneSignatureType, userClaims()), errKey},
		{"rs512", jwksOnly, sign(t, jwt.SigningMethodRS512, "rsa-1", rsaKey(), userClaims()), errKey},
		{"es256 without a key set", hsOnly, sign(t, jwt.SigningMethodES256, "ec-1", ecKey(), userClaims()), errKey},
		{"hs256 without a secret", jwksOnly, hs(t, userClaims()), errKey},
		{"unknown kid", jwksOnly, sign(t, jwt.SigningMethodES256, "nope", ecKey(), userClaims()), errKey},
		{"rs256 naming the ec key", jwksOnly, sign(t, jwt.SigningMethodRS256, "ec-1", rsaKey(), userClaims()), errKey},
		{"wrong secret", hsOnly, sign(t, jwt.SigningMethodHS256, "", []byte("another-secret-of-at-least-32-characters"), userClaims()), errSignature},
		{"tampered payload", hsOnly, tamper(hs(t, userClaims()), serviceClaims()), errSignature},
		{"es256 signed by another key", jwksOnly, sign(t, jwt.SigningMethodES256, "ec-1", ecOther(), userClaims()), errSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.v.Verify(t.Context(), tt.token)
			wantUnauthenticated(t, err, tt.token)
			var ae *apierror.Error
			if errors.As(err, &ae); ae.Detail != tt.detail {
				t.Errorf("detail %q, want %q", ae.Detail, tt.detail)
			}
		})
	}
}
