package store_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// Whether a scope is small (ranked exactly) is whether it has fewer rows than the limit, at
// every limit around its size, whichever of its rows are counted in its words' totals and
// which are pending, expired or deleted, beside the same user's rows in another tenant and
// another user's, for messages and memories; and once the totals reach the limit, the rows are
// not counted.
func TestAScopeIsSmallBelowTheLimitAlone(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := t.Context()
	user := uuid.New()
	claims := map[string]any{"role": "authenticated", "sub": user.String()}
	check := func(stage string) {
		t.Helper()
		for _, tc := range []struct{ fn, table string }{
			{"agentmem.message_scope_is_small", "agentmem.messages"},
			{"agentmem.memory_scope_is_small", "agentmem.memories"},
		} {
			var rows int
			if err := e.conn.QueryRow(ctx, `select count(*) from `+tc.table+` where user_id = $1 and tenant_id = ''`, user.String()).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			err := asRole(t, e.conn, store.CallerRole, claims, func(tx pgx.Tx) error {
				for limit := 1; limit <= rows+2; limit++ {
					var small bool
					if err := tx.QueryRow(ctx, `select `+tc.fn+`($1, '', $2)`, user.String(), limit).Scan(&small); err != nil {
						return err
					}
					if small != (rows < limit) {
						t.Errorf("%s: %s says small %v at limit %d, with %d rows", stage, tc.fn, small, limit, rows)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	sc := memory.Scope{UserID: user.String(), Agent: "chat"}
	commit := func(agent string, n int) memory.CommitResult {
		t.Helper()
		var msgs []memory.NewMessage
		var facts []string
		for i := range n {
			msgs = append(msgs, msg(memory.RoleUser, fmt.Sprintf("message %d about %s", i, rankWords[i%len(rankWords)])))
			facts = append(facts, fmt.Sprintf("fact %d about %s", i, rankWords[(i*7)%len(rankWords)]))
		}
		s := sc
		s.Agent = agent
		return commitMessages(t, e.st, s, uuid.New(), msgs, facts...)
	}
	// The same user in another tenant, and another user, hold more rows than the limits asked.
	for _, other := range []memory.Scope{{UserID: user.String(), TenantID: "acme", Agent: "chat"}, {UserID: uuid.NewString(), Agent: "chat"}} {
		var msgs []memory.NewMessage
		var facts []string
		for i := range 40 {
			msgs = append(msgs, msg(memory.RoleUser, fmt.Sprintf("other message %d", i)))
			facts = append(facts, fmt.Sprintf("other fact %d", i))
		}
		commitMessages(t, e.st, other, uuid.New(), msgs, facts...)
	}
	commit("chat", 12)
	commit("support", 9)
	check("committed")
	e.exec(t, foldEveryScope)
	check("folded")
	pending := commit("chat", 5)
	check("some pending")
	e.exec(t,
		sqlStep{`update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1`, []any{pending.SessionID}},
		sqlStep{`update agentmem.memories set expires_at = now() - interval '1 second' where content like 'fact 1%'`, nil},
	)
	check("some expired")
	e.exec(t,
		sqlStep{`delete from agentmem.messages where user_id = $1 and seq <= 3`, []any{user.String()}},
		sqlStep{`delete from agentmem.memories where user_id = $1 and content like 'fact 2%'`, []any{user.String()}},
	)
	check("some deleted")

	// Totals at the limit answer alone: raised above the rows (which no write through the
	// triggers does), they make the scope large at a limit its rows do not reach.
	e.exec(t,
		sqlStep{`update agentmem.message_words set docs = docs + 1000 where user_id = $1 and lexeme = ''`, []any{user.String()}},
		sqlStep{`update agentmem.memory_words set docs = docs + 1000 where user_id = $1 and lexeme = ''`, []any{user.String()}},
	)
	err := asRole(t, e.conn, store.CallerRole, claims, func(tx pgx.Tx) error {
		for _, fn := range []string{"agentmem.message_scope_is_small", "agentmem.memory_scope_is_small"} {
			var small bool
			if err := tx.QueryRow(ctx, `select `+fn+`($1, '', 500)`, user.String()).Scan(&small); err != nil {
				return err
			}
			if small {
				t.Errorf("%s counted the rows though the totals reach the limit", fn)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
