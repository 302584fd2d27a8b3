// Package config reads agentmem's configuration from the environment, with the defaults of a
// local stack (`supabase start` or `make dev`), and checks it once at start-up.
package config

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem/shared/memory"
)

// Local defaults, the same as `supabase start` uses.
const (
	LocalDatabaseURL = "postgresql://postgres:postgres@127.0.0.1:54322/postgres"
	LocalJWTSecret   = "super-secret-jwt-token-with-at-least-32-characters-long"
)

// Config is everything a function needs to start.
type Config struct {
	// DatabaseURL (DATABASE_URL); default LocalDatabaseURL. Pooler URLs work.
	DatabaseURL string
	// SupabaseURL (SUPABASE_URL); default none.
	SupabaseURL string
	// JWTSecret (SUPABASE_JWT_SECRET), the HS256 secret; default LocalJWTSecret when neither it
	// nor a JWKS URL is configured.
	JWTSecret string
	// JWKSURL (SUPABASE_JWKS_URL); default $SUPABASE_URL/auth/v1/.well-known/jwks.json when
	// SUPABASE_URL is set.
	JWKSURL string
	// JWTIssuer (JWT_ISSUER); default none (not checked).
	JWTIssuer string
	// DefaultRetention (DEFAULT_RETENTION, a Go duration); default 720h.
	DefaultRetention time.Duration
	// AllowedOrigins (CORS_ALLOWED_ORIGINS, comma-separated); default "*".
	AllowedOrigins []string
	// LogLevel (LOG_LEVEL: debug, info, warn, error); default info.
	LogLevel slog.Level
	// MaxConns (DB_MAX_CONNS) caps the database pool; default 4.
	MaxConns int32
	// NotesMaxChars (NOTES_MAX_CHARS) limits one agent's notes about a user, in characters;
	// default 20,000.
	NotesMaxChars int
	// Addr (ADDR) is where the local server listens; default 127.0.0.1:9000.
	Addr string
}

// Load reads the configuration through getenv (os.Getenv in production).
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL: getenv("DATABASE_URL"),
		SupabaseURL: strings.TrimRight(getenv("SUPABASE_URL"), "/"),
		JWTSecret:   getenv("SUPABASE_JWT_SECRET"),
		JWKSURL:     getenv("SUPABASE_JWKS_URL"),
		JWTIssuer:   getenv("JWT_ISSUER"),
		Addr:        getenv("ADDR"),
		MaxConns:    4,
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = LocalDatabaseURL
	}
	if c.Addr == "" {
		c.Addr = "127.0.0.1:9000"
	}
	if c.JWKSURL == "" && c.SupabaseURL != "" && c.JWTSecret == "" {
		c.JWKSURL = c.SupabaseURL + "/auth/v1/.well-known/jwks.json"
	}
	if c.JWTSecret == "" && c.JWKSURL == "" {
		c.JWTSecret = LocalJWTSecret
	}
	c.DefaultRetention = 720 * time.Hour
	if v := getenv("DEFAULT_RETENTION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("DEFAULT_RETENTION must be a positive Go duration such as 720h, not %q", v)
		}
		c.DefaultRetention = d
	}
	c.AllowedOrigins = []string{"*"}
	if v := getenv("CORS_ALLOWED_ORIGINS"); v != "" {
		c.AllowedOrigins = nil
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				c.AllowedOrigins = append(c.AllowedOrigins, o)
			}
		}
	}
	if v := getenv("LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return c, fmt.Errorf("LOG_LEVEL must be debug, info, warn or error, not %q", v)
		}
	}
	if v := getenv("DB_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return c, fmt.Errorf("DB_MAX_CONNS must be a number from 1 to 1000, not %q", v)
		}
		c.MaxConns = int32(n)
	}
	c.NotesMaxChars = memory.DefaultNotesMaxChars
	if v := getenv("NOTES_MAX_CHARS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			return c, fmt.Errorf("NOTES_MAX_CHARS must be a number from 1 to 1000000, not %q", v)
		}
		c.NotesMaxChars = n
	}
	return c, nil
}
