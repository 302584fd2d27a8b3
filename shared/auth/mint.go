package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultMintTTL is the lifetime of a minted token when MintClaims.TTL is zero.
const DefaultMintTTL = time.Hour

// MintClaims describes a token for MintHS256. Empty fields are left out of the token, except
// where stated.
type MintClaims struct {
	// Role is the role claim, RoleUser or RoleService (or anything, to test rejection).
	Role string
	// Subject is the sub claim, a user's UUID for user tokens.
	Subject string
	// TenantID becomes app_metadata.tenant_id.
	TenantID string
	// Anonymous mints the token of an anonymous sign-in: is_anonymous is true. User tokens
	// carry is_anonymous always, as Supabase's do (false unless Anonymous).
	Anonymous bool
	// Audience is the aud claim, written as a single string as Supabase does. Default:
	// "authenticated" when Role is RoleUser, else none.
	Audience string
	// Issuer is the iss claim.
	Issuer string
	// TTL is the time from now to exp. Default: DefaultMintTTL; a negative TTL mints a token
	// that has already expired.
	TTL time.Duration
}

// MintHS256 signs a Supabase-shaped access token with secret, for local development and tests.
// Production tokens come from Supabase Auth.
func MintHS256(secret string, c MintClaims) (string, error) {
	if secret == "" {
		return "", errors.New("auth: mint: empty secret")
	}
	now := time.Now()
	ttl := c.TTL
	if ttl == 0 {
		ttl = DefaultMintTTL
	}
	m := jwt.MapClaims{
		"iat": now.Unix(),
		"exp": now.Add(ttl).Unix(),
	}
	if c.Audience == "" && c.Role == RoleUser {
		c.Audience = DefaultAudience
	}
	for k, v := range map[string]string{
		"role": c.Role, "sub": c.Subject, "aud": c.Audience, "iss": c.Issuer,
	} {
		if v != "" {
			m[k] = v
		}
	}
	if c.Role == RoleUser || c.Anonymous {
		m["is_anonymous"] = c.Anonymous
	}
	if c.TenantID != "" {
		m["app_metadata"] = map[string]string{"tenant_id": c.TenantID}
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, m).SignedString([]byte(secret))
	if err != nil {
		return "", fmt.Errorf("auth: mint: %w", err)
	}
	return s, nil
}
