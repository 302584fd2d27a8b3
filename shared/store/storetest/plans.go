package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmem/agentmem/shared/store"
)

// Plans records the plan of every statement a store runs, the statements that functions and
// triggers run inside it included, as the server executed them (auto_explain with ANALYZE, on
// the test's superuser connections): which partitions of which partitioned tables each one
// read. A partition pruned when the plan was made is not in it; one pruned when the executor
// started or while it ran (the user known only then: a generic plan, a parameter of a join) has
// no loops, and is not counted either. Watch hands it to a store.
type Plans struct {
	// parents maps each partition's name to its partitioned table's (schema agentmem).
	parents map[string]string
	// settings are server settings of every connection, beside auto_explain's.
	settings map[string]string

	mu    sync.Mutex
	flow  string
	plans []Plan
}

// Plan is one executed statement's plan.
type Plan struct {
	// Flow is what the test said it was doing (Plans.Flow) when the statement ran.
	Flow string
	// Query is the statement's text (a function's statement: that statement alone).
	Query string
	// Partitions are, for each partitioned table read, the partitions the executor read.
	Partitions map[string][]string
	// Tables are every table the plan read, partitions named by their partitioned table.
	Tables []string
}

// NewPlans reads the partitions of the database at url (their tables must be partitioned
// already) and returns a recorder for stores over it. settings are more server settings for
// its connections (plan_cache_mode, for one).
func NewPlans(t testing.TB, url string, settings map[string]string) *Plans {
	t.Helper()
	conn := Admin(t, url)
	rows, err := conn.Query(context.Background(), `
		select c.relname::text, p.relname::text from pg_inherits i
		join pg_class c on c.oid = i.inhrelid
		join pg_class p on p.oid = i.inhparent and p.relkind = 'p'
		join pg_namespace n on n.oid = p.relnamespace and n.nspname = 'agentmem'`)
	if err != nil {
		t.Fatal(err)
	}
	parents := map[string]string{}
	var part, parent string
	if _, err := pgx.ForEachRow(rows, []any{&part, &parent}, func() error {
		parents[part] = parent
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return &Plans{parents: parents, settings: settings}
}

// Watch records the plans of the store's statements in p.
func Watch(p *Plans) Option {
	return Config(func(c *store.Config) {
		c.ConnConfig = func(cc *pgx.ConnConfig) {
			for k, v := range map[string]string{
				"session_preload_libraries":          "auto_explain",
				"auto_explain.log_min_duration":      "0",
				"auto_explain.log_nested_statements": "on",
				"auto_explain.log_analyze":           "on",
				"auto_explain.log_timing":            "off",
				"auto_explain.log_triggers":          "on",
				"auto_explain.log_format":            "json",
				"auto_explain.log_level":             "notice",
				"client_min_messages":                "notice",
			} {
				cc.RuntimeParams[k] = v
			}
			for k, v := range p.settings {
				cc.RuntimeParams[k] = v
			}
			cc.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { p.add(n.Message) }
		}
	})
}

// Flow names what the statements from now on are for, until the next call.
func (p *Plans) Flow(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flow = name
}

// Taken returns the plans recorded so far and forgets them.
func (p *Plans) Taken() []Plan {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.plans
	p.plans = nil
	return out
}

type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	ActualLoops  float64    `json:"Actual Loops"`
	Plans        []planNode `json:"Plans"`
}

// add reads one auto_explain notice; any other notice is left alone.
func (p *Plans) add(msg string) {
	i := strings.Index(msg, "{")
	if !strings.HasPrefix(msg, "duration: ") || i < 0 {
		return
	}
	var logged struct {
		Query string   `json:"Query Text"`
		Plan  planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(msg[i:]), &logged); err != nil {
		return
	}
	read := map[string]map[string]bool{}
	tables := map[string]bool{}
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.RelationName != "" && n.ActualLoops > 0 && n.NodeType != "ModifyTable" {
			if parent, ok := p.parents[n.RelationName]; ok {
				if read[parent] == nil {
					read[parent] = map[string]bool{}
				}
				read[parent][n.RelationName] = true
				tables[parent] = true
			} else {
				tables[n.RelationName] = true
			}
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(logged.Plan)
	pl := Plan{Query: strings.Join(strings.Fields(logged.Query), " "), Partitions: map[string][]string{}}
	for parent, parts := range read {
		for part := range parts {
			pl.Partitions[parent] = append(pl.Partitions[parent], part)
		}
		sort.Strings(pl.Partitions[parent])
	}
	for tb := range tables {
		pl.Tables = append(pl.Tables, tb)
	}
	sort.Strings(pl.Tables)
	p.mu.Lock()
	defer p.mu.Unlock()
	pl.Flow = p.flow
	p.plans = append(p.plans, pl)
}

// FannedOut returns, for each partitioned table the plan read more than one partition of, the
// partitions it read, as "table: p0, p1".
func (pl Plan) FannedOut() []string {
	var out []string
	for parent, parts := range pl.Partitions {
		if len(parts) > 1 {
			out = append(out, fmt.Sprintf("%s: %s", parent, strings.Join(parts, ", ")))
		}
	}
	sort.Strings(out)
	return out
}
