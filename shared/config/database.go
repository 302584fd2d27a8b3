package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/envvar"
	"github.com/agentmem/agentmem/shared/memory"
)

// LocalDatabaseURL is DATABASE_URL when unset, the same as `supabase start` uses.
const LocalDatabaseURL = "postgresql://postgres:postgres@127.0.0.1:54322/postgres"

// loadReplicas reads DATABASE_READ_URL, REPLICA_MAX_LAG and REPLICA_CHECK_INTERVAL.
func (c *Config) loadReplicas(getenv func(string) string) error {
	c.ReadURLs = splitURLs(getenv("DATABASE_READ_URL"))
	for i, u := range c.ReadURLs {
		// The URL holds a password: the message names its place only.
		if _, err := pgx.ParseConfig(u); err != nil {
			return fmt.Errorf("DATABASE_READ_URL: URL %d of %d is not a PostgreSQL URL", i+1, len(c.ReadURLs))
		}
	}
	for _, d := range []struct {
		name     string
		to       *time.Duration
		def, min time.Duration
	}{
		{"REPLICA_MAX_LAG", &c.ReplicaMaxLag, memory.DefaultReplicaMaxLag, 100 * time.Millisecond},
		{"REPLICA_CHECK_INTERVAL", &c.ReplicaCheckInterval, memory.DefaultReplicaCheckInterval, 10 * time.Millisecond},
	} {
		var err error
		if *d.to, err = envvar.Duration(func(name string) string { return envvar.String(getenv, name) }, d.name, d.def, d.min); err != nil {
			return err
		}
	}
	if c.ReplicaCheckInterval >= c.ReplicaMaxLag {
		return fmt.Errorf("REPLICA_CHECK_INTERVAL (%s) must be shorter than REPLICA_MAX_LAG (%s): a replica's lag is "+
			"known only as often as it is checked", c.ReplicaCheckInterval, c.ReplicaMaxLag)
	}
	return nil
}

// splitURLs splits a comma-separated list of PostgreSQL URLs. A URL may itself hold commas (the
// hosts of a multi-host URL, postgresql://h1:5432,h2:5432/db): a new URL begins only where a
// piece starts with its scheme. A value that does not start with one (a key=value connection
// string) is one entry.
func splitURLs(v string) []string {
	var out []string
	for _, piece := range strings.Split(v, ",") {
		piece = strings.TrimSpace(piece)
		starts := strings.HasPrefix(piece, "postgres://") || strings.HasPrefix(piece, "postgresql://")
		switch {
		case piece == "":
		case starts || len(out) == 0:
			out = append(out, piece)
		default:
			out[len(out)-1] += "," + piece
		}
	}
	return out
}
