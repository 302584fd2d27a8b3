package redis

import (
	"time"

	"github.com/agentmem/agentmem/shared/envvar"
)

// ConfigFromEnv reads the Redis adapter's settings: REDIS_URL, REDIS_TTL, REDIS_TIMEOUT,
// REDIS_USER_WINDOWS and REDIS_USER_BYTES. It checks each value's form; Check and New check
// that they make a cache.
func ConfigFromEnv(getenv envvar.Getenv) (Config, error) {
	c := Config{URL: envvar.String(getenv, "REDIS_URL")}
	var err error
	if c.TTL, err = envvar.Duration(getenv, "REDIS_TTL", DefaultTTL, time.Second); err != nil {
		return c, err
	}
	if c.Timeout, err = envvar.Duration(getenv, "REDIS_TIMEOUT", DefaultTimeout, time.Millisecond); err != nil {
		return c, err
	}
	if c.UserWindows, err = envvar.Int(getenv, "REDIS_USER_WINDOWS", DefaultUserWindows, 1, 100_000); err != nil {
		return c, err
	}
	if c.UserBytes, err = envvar.Int(getenv, "REDIS_USER_BYTES", DefaultUserBytes, 1<<10, 1<<30); err != nil {
		return c, err
	}
	return c, nil
}
