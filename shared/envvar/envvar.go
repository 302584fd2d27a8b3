// Package envvar reads settings from the environment with the checks and error messages every
// part of agentmem shares: the configuration (shared/config) and each adapter, which parses its
// own settings (see shared/adapter).
package envvar

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Getenv reads one variable; os.Getenv in production, a map in tests.
type Getenv func(string) string

// String is the variable name, trimmed.
func String(getenv Getenv, name string) string { return strings.TrimSpace(getenv(name)) }

// URL is the variable name, trimmed and without a trailing slash, or def when it is empty.
func URL(getenv Getenv, name, def string) string {
	if v := strings.TrimRight(String(getenv, name), "/"); v != "" {
		return v
	}
	return def
}

// Duration is the Go duration in the variable name, at least min, or def when it is empty.
func Duration(getenv Getenv, name string, def, min time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < min {
		return 0, fmt.Errorf("%s must be a Go duration of at least %s such as %s, not %q", name, min, def, v)
	}
	return d, nil
}

// PositiveDuration is the Go duration above zero in the variable name, or def when it is empty.
func PositiveDuration(getenv Getenv, name string, def time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s must be a positive Go duration such as %s, not %q", name, def, v)
	}
	return d, nil
}

// Int is the whole number from lo to hi in the variable name, or def when it is empty.
func Int(getenv Getenv, name string, def, lo, hi int) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s must be a number from %d to %d, not %q", name, lo, hi, v)
	}
	return n, nil
}

// Bool is true or false as the variable name says (strconv.ParseBool), or def when it is empty.
func Bool(getenv Getenv, name string, def bool) (bool, error) {
	v := String(getenv, name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s must be true or false, not %q", name, v)
	}
	return b, nil
}
