package httpapi_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/auth"
)

// A token naming a key the project's JWKS does not hold is answered at once, as problem+json: 503
// unavailable with Retry-After while a fetch looks for the key, then 401 unauthenticated once the
// fetch has proved it absent. Both bodies are pinned in testdata/problems.
func TestJWKSUnknownKIDProblems(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := key.PublicKey.ECDH()
	if err != nil {
		t.Fatal(err)
	}
	p := pub.Bytes() // 0x04 || X || Y
	b64 := base64.RawURLEncoding.EncodeToString
	set, err := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": "EC", "crv": "P-256", "alg": "ES256",
		"use": "sig", "kid": "k1", "x": b64(p[1:33]), "y": b64(p[33:])}}})
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(set)
	}))
	t.Cleanup(jwks.Close)
	v, err := auth.NewVerifier(t.Context(), auth.Config{JWKSURL: jwks.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := buildEnv(t, envConfig{verifier: v})
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"role": auth.RoleUser, "sub": uuid.NewString(),
		"aud": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	tok.Header["kid"] = "made-up"
	signed, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"session_id": uuid.New()}

	start := time.Now()
	r := e.call(signed, "get-context", body)
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("first sight of a made-up kid answered in %v, want at once", d)
	}
	wantProblem(t, r, http.StatusServiceUnavailable, "unavailable")
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 2 {
		t.Fatalf("Retry-After %q, want 1 or 2", r.header.Get("Retry-After"))
	}
	wantGolden(t, r, "jwks-key-not-told")

	time.Sleep(time.Duration(secs) * time.Second)
	r = e.call(signed, "get-context", body)
	wantProblem(t, r, http.StatusUnauthorized, "unauthenticated")
	wantGolden(t, r, "jwks-key-absent")
}

// wantGolden fails unless r is the refusal testdata/problems/<name>.json holds (see
// TestProblemBodiesMatchGolden; -args -update rewrites it).
func wantGolden(t *testing.T, r response, name string) {
	t.Helper()
	got := goldenProblem(t, r)
	path := filepath.Join("testdata", "problems", name+".json")
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -args -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s:\n got: %s\nwant: %s", name, path, got, want)
	}
}
