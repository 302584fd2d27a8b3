package auth

import (
	"strconv"
	"testing"
	"time"
)

// JWT_ISSUER holds for service tokens as for user tokens, and the time claims must be JSON
// numbers: a numeric string is a malformed token.
func TestVerifyIssuerAndTimeClaims(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const userIss = "https://project.supabase.co/auth/v1"
	verifiers := map[string]*Verifier{
		"none":     newVerifier(t, ctx, Config{JWTSecret: testSecret}),
		"user iss": newVerifier(t, ctx, Config{JWTSecret: testSecret, Issuer: userIss}),
		"supabase": newVerifier(t, ctx, Config{JWTSecret: testSecret, Issuer: "supabase"}),
	}
	user := Principal{Role: RoleUser, UserID: testUser.String()}
	service := Principal{Role: RoleService}
	future := time.Now().Add(time.Hour).Unix()
	past := time.Now().Add(-time.Hour).Unix()
	tests := []struct {
		name     string
		verifier string
		token    string
		want     *Principal // nil: want a 401
	}{
		{"service, no issuer configured", "none", hs(t, serviceClaims()), &service},
		{"service of another issuer", "user iss", hs(t, serviceClaims()), nil},
		{"service without iss", "user iss", hs(t, serviceClaims(del("iss"))), nil},
		{"service of the configured issuer", "user iss", hs(t, serviceClaims(set("iss", userIss))), &service},
		{"legacy service key, issuer supabase", "supabase", hs(t, serviceClaims()), &service},
		{"user of the configured issuer", "user iss", hs(t, userClaims()), &user},
		{"user of another issuer", "supabase", hs(t, userClaims()), nil},

		{"exp number", "none", hs(t, userClaims(set("exp", future))), &user},
		{"exp with a fraction", "none", hs(t, userClaims(set("exp", float64(future)+0.5))), &user},
		{"exp numeric string", "none", hs(t, userClaims(set("exp", strconv.FormatInt(future, 10)))), nil},
		{"service exp numeric string", "none", hs(t, serviceClaims(set("exp", "1999999999"))), nil},
		{"past exp numeric string", "none", hs(t, userClaims(set("exp", strconv.FormatInt(past, 10)))), nil},
		{"exp boolean", "none", hs(t, userClaims(set("exp", true))), nil},
		{"exp object", "none", hs(t, userClaims(set("exp", map[string]any{"n": future}))), nil},
		{"exp null", "none", hs(t, userClaims(set("exp", nil))), nil},
		{"nbf numeric string", "none", hs(t, userClaims(set("nbf", strconv.FormatInt(past, 10)))), nil},
		{"iat numeric string", "none", hs(t, userClaims(set("iat", strconv.FormatInt(past, 10)))), nil},
		{"nbf number", "none", hs(t, userClaims(set("nbf", past))), &user},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := verifiers[tt.verifier].Verify(t.Context(), tt.token)
			if tt.want == nil {
				wantUnauthenticated(t, err, tt.token)
				return
			}
			if err != nil || got != *tt.want {
				t.Fatalf("Verify = %+v, %v; want %+v", got, err, *tt.want)
			}
		})
	}
}
