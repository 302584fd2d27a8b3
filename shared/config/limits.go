package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/shared/envvar"
	"github.com/agentmem/agentmem/shared/memory"
)

// Rate limits by default: none. A limit costs every request one more round trip to the
// database, and the right number depends on the workload (an agent looping on tools makes many
// more requests than a person chatting), so a deployment chooses its own; an upgrade never
// starts refusing clients that worked before.
const (
	DefaultRateLimitUserPerMinute   = 0
	DefaultRateLimitTenantPerMinute = 0
	// MaxRateLimitPerMinute bounds both settings.
	MaxRateLimitPerMinute = 1_000_000
)

// DefaultRateLimitBackfillPerHour is RATE_LIMIT_BACKFILL_PER_HOUR's default, a limit on by
// default unlike the others: a backfillSession intent sends every message of a session to every
// adapter (third parties, billed per call), and no client needs many in an hour. A session's
// backfills that are still pending coalesce anyway; this bounds a user's backfills of many
// sessions, or of one again and again.
const DefaultRateLimitBackfillPerHour = 30

// MaxRateLimitBackfillPerHour bounds RATE_LIMIT_BACKFILL_PER_HOUR.
const MaxRateLimitBackfillPerHour = 1_000_000

// loadRateLimits reads the RATE_LIMIT_* settings.
func (c *Config) loadRateLimits(getenv func(string) string) error {
	var err error
	if c.RateLimitUserPerMinute, err = envvar.Int(getenv, "RATE_LIMIT_USER_PER_MINUTE",
		DefaultRateLimitUserPerMinute, 0, MaxRateLimitPerMinute); err != nil {
		return err
	}
	if c.RateLimitTenantPerMinute, err = envvar.Int(getenv, "RATE_LIMIT_TENANT_PER_MINUTE",
		DefaultRateLimitTenantPerMinute, 0, MaxRateLimitPerMinute); err != nil {
		return err
	}
	if c.RateLimitBackfillPerHour, err = envvar.Int(getenv, "RATE_LIMIT_BACKFILL_PER_HOUR",
		DefaultRateLimitBackfillPerHour, 0, MaxRateLimitBackfillPerHour); err != nil {
		return err
	}
	return nil
}

// historyCap reads HISTORY_KEEP_MESSAGES and HISTORY_OVERFLOW.
func historyCap(getenv func(string) string) (memory.HistoryCap, error) {
	var h memory.HistoryCap
	if v := strings.TrimSpace(getenv("HISTORY_KEEP_MESSAGES")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n != 0 && (n < memory.MinHistoryKeep || n > memory.MaxHistoryKeep) {
			return h, fmt.Errorf("HISTORY_KEEP_MESSAGES must be 0 (off) or %d to %d, not %q",
				memory.MinHistoryKeep, memory.MaxHistoryKeep, v)
		}
		h.Keep = n
	}
	switch v := strings.TrimSpace(getenv("HISTORY_OVERFLOW")); v {
	case "", memory.HistoryArchive:
	case memory.HistoryDelete:
		h.Delete = true
	default:
		return h, fmt.Errorf("HISTORY_OVERFLOW must be %s or %s, not %q", memory.HistoryArchive, memory.HistoryDelete, v)
	}
	return h, nil
}
