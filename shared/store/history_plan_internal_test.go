package store

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/testdb"
)

// planNode is a node of EXPLAIN (FORMAT JSON)'s plan.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	IndexCond    string     `json:"Index Cond"`
	HeapFetches  *float64   `json:"Heap Fetches"`
	SharedHit    float64    `json:"Shared Hit Blocks"`
	SharedRead   float64    `json:"Shared Read Blocks"`
	Plans        []planNode `json:"Plans"`
}

// explainInScope is EXPLAIN (opts) of q with args, run as the scope's user runs a request
// (agentmem_caller with the user's claims, under row-level security). Without args, q goes as it
// is, so that EXPLAIN (GENERIC_PLAN) plans its parameters.
func explainInScope(t *testing.T, st *Store, sc memory.Scope, opts, q string, args ...any) planNode {
	t.Helper()
	ctx := context.Background()
	var raw []byte
	err := st.inScope(ctx, sc, func(tx pgx.Tx) error {
		if len(args) == 0 {
			res, err := tx.Conn().PgConn().Exec(ctx, "explain ("+opts+") "+q).ReadAll()
			if err == nil && (len(res) != 1 || len(res[0].Rows) != 1) {
				err = fmt.Errorf("explain gave %d results", len(res))
			}
			if err == nil {
				raw = res[0].Rows[0][0]
			}
			return err
		}
		return tx.QueryRow(ctx, "explain ("+opts+") "+q, args...).Scan(&raw)
	})
	if err != nil {
		t.Fatal(err)
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain: %v: %s", err, raw)
	}
	return plans[0].Plan.ofTables()
}

// partitionSuffix ends the name of a partition of a table partitioned by user, and of its
// indexes (agentmem.partition_by_user names them so).
var partitionSuffix = regexp.MustCompile(`_p\d+$`)

// ofTables names the partitions of a plan, and their indexes, by their table's: a plan of
// messages_p2 through messages_pkey_p2 reads messages through messages_pkey, on either layout.
func (n planNode) ofTables() planNode {
	n.RelationName = partitionSuffix.ReplaceAllString(n.RelationName, "")
	n.IndexName = partitionSuffix.ReplaceAllString(n.IndexName, "")
	for i, c := range n.Plans {
		n.Plans[i] = c.ofTables()
	}
	return n
}

func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

func (n planNode) String() string {
	var b strings.Builder
	var pr func(planNode, int)
	pr = func(n planNode, depth int) {
		fmt.Fprintf(&b, "%s%s %s %s [%s] buffers %v+%v\n", strings.Repeat("  ", depth), n.NodeType, n.RelationName,
			n.IndexName, n.IndexCond, n.SharedHit, n.SharedRead)
		for _, c := range n.Plans {
			pr(c, depth+1)
		}
	}
	pr(n, 0)
	return b.String()
}

// A user's history across sessions, its total and clear are served by
// messages_owner_created_idx for a user whose messages are a small share of a large table:
// 5,010 messages in 51 sessions of 5 agents among 100,000 messages of 40 other users. Each
// statement is explained as the store runs it (as agentmem_caller with the user's claims,
// unnamed statements planned with their arguments): the page, first or deep, oldest or newest,
// of every agent or one, is read in index order and stopped after the page, never sorted, with
// a bounded number of buffers; the total is an index-only scan; the clear finds the rows
// through the owner index or the user's postings in the word index (messages_user_fts_idx). No
// statement scans the table.
func TestUserHistoryAndClearUseTheOwnerIndex(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: seeds a large history to explain its plans")
	}
	db := testdb.New(t)
	ctx := context.Background()
	st, err := Open(ctx, Config{DatabaseURL: db.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	admin, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	user := uuid.New()
	// Sessions 0 to 49 are the user's, of agents a0 to a3 in turn, 100 messages each, their
	// creation times interleaved; session 50 is the user's only session of agent "rare", with
	// 10 messages; sessions 51 to 1050 belong to 40 other users.
	for i, q := range []string{`
		insert into agentmem.sessions (id, tenant_id, user_id, agent, last_seq, expires_at)
		select md5('s' || s)::uuid, '', case when s <= 50 then $1::uuid else md5('u' || (s % 40))::uuid end,
		       case when s = 50 then 'rare' else 'a' || (s % 4) end,
		       case when s = 50 then 10 else 100 end, now() + interval '30 days'
		from generate_series(0, 1050) s`, `
		insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
		  token_estimate, created_at, expires_at)
		select s.id, m, gen_random_uuid(), '', s.user_id, s.agent, 'user', 'message ' || m, 3,
		       now() - interval '10 days' + make_interval(secs => m * 600 + (hashtext(s.id::text) & 511)),
		       now() + interval '30 days'
		from agentmem.sessions s, generate_series(1, s.last_seq::int) m`,
	} {
		args := []any{user}
		if i > 0 {
			args = nil
		}
		if _, err := admin.Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Exec(ctx, `vacuum (analyze) agentmem.messages, agentmem.sessions`); err != nil {
		t.Fatal(err)
	}
	var mid MessageKey
	if err := admin.QueryRow(ctx, `select created_at, session_id, seq from agentmem.messages where user_id = $1
		order by created_at desc, session_id desc, seq desc offset 2500 limit 1`, user).Scan(&mid.CreatedAt, &mid.SessionID, &mid.Seq); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-5 * 24 * time.Hour)

	explain := func(t *testing.T, analyze bool, q string, args ...any) planNode {
		t.Helper()
		opts := "format json"
		if analyze {
			opts = "analyze, buffers, format json"
		}
		return explainInScope(t, st, memory.Scope{UserID: user.String()}, opts, q, args...)
	}
	// check fails unless the plan reads messages through messages_owner_created_idx only (an
	// index-only scan when indexOnly), or one of others, with no sort and no scan of the table.
	check := func(t *testing.T, plan planNode, indexOnly bool, others ...string) {
		t.Helper()
		used := false
		plan.walk(func(n planNode) {
			switch {
			case n.NodeType == "Sort" || n.NodeType == "Incremental Sort":
				t.Errorf("the plan sorts:\n%s", plan)
			case n.RelationName == "messages" && n.NodeType == "Seq Scan":
				t.Errorf("the plan scans the table:\n%s", plan)
			case n.IndexName == "messages_owner_created_idx" || slices.Contains(others, n.IndexName):
				used = true
				if indexOnly && n.NodeType != "Index Only Scan" {
					t.Errorf("%s, want an index-only scan:\n%s", n.NodeType, plan)
				}
			case n.IndexName != "":
				t.Errorf("read through %s %s:\n%s", n.NodeType, n.IndexName, plan)
			}
		})
		if !used {
			t.Errorf("messages_owner_created_idx is not used:\n%s", plan)
		}
	}

	// A page of 50 reads about one buffer a message (the messages of a page lie on different
	// table pages) and a few index pages, wherever it starts. A rare agent's page reads the
	// user's index entries until it has found a page (here all 5,010 of them, a few dozen index
	// pages), but never the rows of other agents nor anything of other users.
	for _, c := range []struct {
		name    string
		p       UserHistoryParams
		buffers float64
	}{
		{"first page, newest", UserHistoryParams{Newest: true}, 70},
		{"first page, oldest", UserHistoryParams{}, 70},
		{"deep page, newest", UserHistoryParams{Newest: true, After: &mid}, 70},
		{"deep page, oldest", UserHistoryParams{After: &mid}, 70},
		{"one agent, deep page", UserHistoryParams{Newest: true, After: &mid, Scope: memory.Scope{Agent: "a1"}}, 70},
		{"a rare agent", UserHistoryParams{Newest: true, Scope: memory.Scope{Agent: "rare"}}, 120},
		{"since, deep page", UserHistoryParams{After: &mid, Since: &since}, 70},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			p.Scope.UserID, p.Limit = user.String(), 50
			page, count, args := userHistoryStatements(p)
			plan := explain(t, true, page, args...)
			check(t, plan, false)
			var b float64
			plan.walk(func(n planNode) {
				if n.IndexName == "messages_owner_created_idx" {
					b = n.SharedHit + n.SharedRead
				}
			})
			if b > c.buffers {
				t.Errorf("the index scan read %v buffers, want at most %v:\n%s", b, c.buffers, plan)
			}
			cp := explain(t, true, count, countArgs(p)...)
			check(t, cp, true)
			cp.walk(func(n planNode) {
				if n.HeapFetches != nil && *n.HeapFetches > 0 {
					t.Errorf("the count fetched %v rows from the table:\n%s", *n.HeapFetches, cp)
				}
			})
		})
	}
	for _, agent := range []string{"", "a2"} {
		t.Run("clear "+agent, func(t *testing.T) {
			q, args := clearMessagesAllSQL, []any{user, ""}
			if agent != "" {
				q, args = clearMessagesAgentSQL, append(args, agent)
			}
			if testdb.UserPartitions(t) > 1 {
				// Partitioned, the user's rows are a larger share of their partition (a fifth
				// of it here), which a scan of the partition may delete best.
				t.Skip("a premise of one table: the user's rows a small share of it")
			}
			// the user's rows through the owner index or the user's key of the word index
			// (their postings, in the table's order, which suits a delete of them all)
			check(t, explain(t, false, q, args...), false, "messages_user_fts_idx")
		})
	}
}
