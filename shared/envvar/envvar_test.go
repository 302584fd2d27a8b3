package envvar_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/shared/envvar"
)

func env(vars map[string]string) envvar.Getenv { return func(name string) string { return vars[name] } }

// An unset variable gives the default; a value out of its bounds or form is an error naming
// the variable and the value; a good one is read.
func TestParsers(t *testing.T) {
	e := env(map[string]string{"D": "250ms", "DBAD": "1ns", "I": "7", "IBAD": "70", "B": "true", "BBAD": "yes please",
		"U": " https://x.example/ ", "S": "  a  "})
	if d, err := envvar.Duration(e, "D", time.Second, time.Millisecond); err != nil || d != 250*time.Millisecond {
		t.Errorf("Duration: %v, %v", d, err)
	}
	if d, err := envvar.Duration(e, "UNSET", time.Second, time.Millisecond); err != nil || d != time.Second {
		t.Errorf("Duration unset: %v, %v", d, err)
	}
	if _, err := envvar.Duration(e, "DBAD", time.Second, time.Millisecond); err == nil || !strings.Contains(err.Error(), `DBAD must be a Go duration of at least 1ms such as 1s, not "1ns"`) {
		t.Errorf("Duration below its minimum: %v", err)
	}
	if _, err := envvar.PositiveDuration(env(map[string]string{"P": "-1s"}), "P", time.Second); err == nil || !strings.Contains(err.Error(), "P must be a positive") {
		t.Errorf("PositiveDuration: %v", err)
	}
	if n, err := envvar.Int(e, "I", 3, 1, 10); err != nil || n != 7 {
		t.Errorf("Int: %v, %v", n, err)
	}
	if _, err := envvar.Int(e, "IBAD", 3, 1, 10); err == nil || !strings.Contains(err.Error(), `IBAD must be a number from 1 to 10, not "70"`) {
		t.Errorf("Int out of bounds: %v", err)
	}
	if b, err := envvar.Bool(e, "B", false); err != nil || !b {
		t.Errorf("Bool: %v, %v", b, err)
	}
	if _, err := envvar.Bool(e, "BBAD", false); err == nil || !strings.Contains(err.Error(), "BBAD must be true or false") {
		t.Errorf("Bool not a boolean: %v", err)
	}
	if u := envvar.URL(e, "U", "https://default.example"); u != "https://x.example" {
		t.Errorf("URL: %q", u)
	}
	if u := envvar.URL(e, "UNSET", "https://default.example"); u != "https://default.example" {
		t.Errorf("URL unset: %q", u)
	}
	if s := envvar.String(e, "S"); s != "a" {
		t.Errorf("String: %q", s)
	}
}
