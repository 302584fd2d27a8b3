package main

import (
	"strings"
	"testing"
)

// agentmem token refuses what every function would refuse: a role other than authenticated or
// service_role, and a lifetime that is over before the token is used.
func TestTokenRefusesUselessTokens(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--role", "bogus"}, `unknown role "bogus"`},
		{[]string{"--role", "anon"}, `unknown role "anon"`},
		{[]string{"--ttl", "0s"}, "--ttl must be positive"},
		{[]string{"--ttl", "-1h"}, "--ttl must be positive"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if err := token(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("token %v: %v, want %q", tc.args, err, tc.want)
			}
		})
	}
	for _, args := range [][]string{{"--role", "service_role"}, {"--ttl", "24h"}} {
		t.Setenv("DATABASE_URL", "")
		t.Setenv("SUPABASE_JWT_SECRET", "a-test-secret-of-at-least-32-characters")
		if err := token(args); err != nil {
			t.Errorf("token %v: %v", args, err)
		}
	}
}
