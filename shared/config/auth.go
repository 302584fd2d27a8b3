package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/envvar"
)

// LocalJWTSecret is the HS256 secret of a local stack (`supabase start`), the only default
// of SUPABASE_JWT_SECRET (see Config.JWTSecret).
const LocalJWTSecret = "super-secret-jwt-token-with-at-least-32-characters-long"

// DefaultAuthAllowAnonymous is AUTH_ALLOW_ANONYMOUS when unset: users of Supabase's anonymous
// sign-ins are served like any other user.
const DefaultAuthAllowAnonymous = true

// The ways to verify access tokens (SUPABASE_AUTH_VERIFY).
const (
	// AuthVerifyJWT checks each token's signature locally, with the JWKS and/or the HS256 secret.
	AuthVerifyJWT = "jwt"
	// AuthVerifyAuthServer asks the project's Auth server who each user token belongs to.
	AuthVerifyAuthServer = "auth-server"
)

// loadAuth reads SUPABASE_AUTH_VERIFY and what each way of verifying tokens needs,
// SUPABASE_JWKS_REFRESH and AUTH_ALLOW_ANONYMOUS; DATABASE_URL and ADDR are read before.
func (c *Config) loadAuth(getenv func(string) string) error {
	switch c.AuthVerify {
	case "":
		c.AuthVerify = AuthVerifyJWT
	case AuthVerifyJWT:
	case AuthVerifyAuthServer:
		if err := c.checkAuthServer(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("SUPABASE_AUTH_VERIFY must be jwt or auth-server, not %q", c.AuthVerify)
	}
	if c.AuthVerify == AuthVerifyJWT && c.JWKSURL == "" && c.SupabaseURL != "" {
		c.JWKSURL = c.SupabaseURL + "/auth/v1/.well-known/jwks.json"
	}
	if c.AuthVerify == AuthVerifyJWT && c.JWTSecret == "" && c.JWKSURL == "" {
		// The local default secret is public: it may only ever guard a local database served
		// to this machine alone, never a deployed function nor a server that others can reach,
		// or anyone could mint a service token.
		if getenv("AWS_LAMBDA_FUNCTION_NAME") != "" || !isLocalURL(c.DatabaseURL) {
			return fmt.Errorf("no way to verify tokens: set SUPABASE_URL (its JWKS is used), SUPABASE_JWKS_URL or SUPABASE_JWT_SECRET; the local default secret only serves a local database")
		}
		if !LoopbackAddr(c.Addr) {
			return fmt.Errorf("no way to verify tokens on %s, which other machines can reach: set SUPABASE_URL (its JWKS is used), SUPABASE_JWKS_URL or SUPABASE_JWT_SECRET, or listen on a loopback ADDR such as 127.0.0.1:9000; the local default secret is public and only serves this machine", c.Addr)
		}
		c.JWTSecret = LocalJWTSecret
	}
	var err error
	if c.JWKSRefresh, err = envvar.Duration(getenv, "SUPABASE_JWKS_REFRESH", auth.DefaultJWKSRefresh, auth.MinJWKSRefresh); err != nil {
		return err
	}
	if c.AuthAllowAnonymous, err = envvar.Bool(getenv, "AUTH_ALLOW_ANONYMOUS", DefaultAuthAllowAnonymous); err != nil {
		return err
	}
	return nil
}

// checkAuthServer checks what SUPABASE_AUTH_VERIFY=auth-server needs.
func (c *Config) checkAuthServer() error {
	if c.SupabaseURL == "" {
		return errors.New("SUPABASE_AUTH_VERIFY=auth-server needs SUPABASE_URL, e.g. https://<ref>.supabase.co")
	}
	if u, err := url.Parse(c.SupabaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("SUPABASE_URL must be an http or https URL, not %q", c.SupabaseURL)
	}
	if c.AnonKey == "" {
		return errors.New("SUPABASE_AUTH_VERIFY=auth-server needs SUPABASE_ANON_KEY, the project's publishable or anon key")
	}
	return nil
}

// LoopbackAddr reports whether a listening address (host:port) can be reached from this
// machine only: its host is "localhost" or a loopback IP literal. An empty host (":8080")
// or 0.0.0.0 listens on every interface.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && LoopbackHost(host)
}

// LoopbackHost reports whether host (without a port; IPv6 with or without brackets) is
// "localhost" or a loopback IP literal.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && ip.IsLoopback()
}

// isLocalURL reports whether a database URL points at this machine.
func isLocalURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}
