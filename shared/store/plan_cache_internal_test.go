package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/testdb"
)

// get-context's window runs the generic plan prepared once on the connection from its first
// call: left to choose, PostgreSQL plans it for the values of at least five calls and, on a large
// table (the bench's 400,000 messages), of every call, because it estimates "limit $5" and the
// optional filters dearer in the generic plan, which is the same plan; and planning it costs more
// than running it. The recall of the same batch is still planned for its values as PostgreSQL
// chooses: a generic plan cannot use its model's partial vector indexes.
func TestGetContextPlansItsWindowOnce(t *testing.T) {
	db := testdb.New(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// 200 sessions of 50 messages of one user, analysed.
	user := uuid.New()
	for _, q := range []string{`
		insert into agentmem.sessions (id, user_id, agent, last_seq, expires_at)
		select ('00000000-0000-4000-8000-' || lpad(s::text, 12, '0'))::uuid, $1, 'default', 50, now() + interval '1 day'
		from generate_series(1, 200) s`, `
		insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
		select ('00000000-0000-4000-8000-' || lpad(s::text, 12, '0'))::uuid, m, gen_random_uuid(), $1, 'default',
		  case when m % 2 = 1 then 'user' else 'assistant' end, 'message ' || m, 3, now() + interval '1 day'
		from generate_series(1, 200) s, generate_series(1, 50) m`,
	} {
		if _, err := admin.Exec(ctx, q, user); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Exec(ctx, `analyze agentmem.sessions, agentmem.messages`); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, Config{DatabaseURL: db.URL, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc := memory.Scope{UserID: user, Agent: "default"}
	if _, _, err := s.CommitTurn(ctx, CommitParams{Scope: sc, SessionID: uuid.MustParse("00000000-0000-4000-8000-000000000001"),
		TTL: time.Hour, Memories: []memory.NewMemory{{Content: "likes green tea"}},
		MemoryVectors: []*string{literal("likes green tea")}, Model: embedding.Hash{}.Model()}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12; i++ {
		sid := uuid.MustParse("00000000-0000-4000-8000-" + strings.Repeat("0", 9) + []string{"001", "002", "003"}[i%3])
		got, err := s.GetContext(ctx, ContextParams{Scope: sc, SessionID: sid, MaxMessages: 12,
			Query: "tea", RecallK: 3, QueryVector: literal("tea"), Model: embedding.Hash{}.Model()})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != 12 || got.Messages[11].Seq != 50 || len(got.Memories) != 1 {
			t.Fatalf("read %d messages (last %d) and %d memories, want 12 (last 50) and 1", len(got.Messages), got.Messages[len(got.Messages)-1].Seq, len(got.Memories))
		}
	}
	plans := map[string][2]int64{}
	rows, err := s.pool.Query(ctx, `select statement, generic_plans, custom_plans from pg_prepared_statements`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var st string
		var g, c int64
		if err := rows.Scan(&st, &g, &c); err != nil {
			t.Fatal(err)
		}
		plans[st] = [2]int64{g, c}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var window, recall [2]int64
	for st, n := range plans {
		switch {
		case strings.Contains(st, "order by seq desc"):
			window = n
		case st == recallSQL:
			recall = n
		}
	}
	if window != [2]int64{12, 0} {
		t.Errorf("the window ran %d generic and %d custom plans, want 12 generic", window[0], window[1])
	}
	// PostgreSQL plans a prepared statement for its values at least five times before it weighs
	// the generic plan; forced to the generic plan, it never does.
	if recall[0]+recall[1] != 12 || recall[1] < 5 {
		t.Errorf("the recall ran %d generic and %d custom plans, want at least 5 custom of 12", recall[0], recall[1])
	}
}

func literal(text string) *string {
	l := pgvector.NewVector(embedding.Hash{}.Vector(text)).String()
	return &l
}

// A session's history runs its generic plans too, and a page after a cursor is a range of the
// primary key that begins at the cursor: a deep page reads what the first does.
func TestSessionHistoryPagesRunGenericPlansFromTheCursor(t *testing.T) {
	db := testdb.New(t)
	ctx := context.Background()
	s, err := Open(ctx, Config{DatabaseURL: db.URL, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc := memory.Scope{UserID: uuid.New(), Agent: "default"}
	sid := uuid.New()
	msgs := make([]memory.NewMessage, 50)
	for i := range msgs {
		msgs[i] = memory.NewMessage{Role: "user", Content: fmt.Sprintf("message %d", i+1)}
	}
	if _, _, err := s.CommitTurn(ctx, CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	for _, newest := range []bool{false, true} {
		var after *int64
		var seen []int64
		for {
			page, err := s.SessionHistory(ctx, HistoryParams{Scope: sc, SessionID: sid, Limit: 7, Newest: newest, After: after})
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != 50 {
				t.Fatalf("total %d, want 50", page.Total)
			}
			for _, m := range page.Messages {
				seen = append(seen, m.Seq)
			}
			if page.Next == nil {
				break
			}
			after = page.Next
		}
		if len(seen) != 50 {
			t.Fatalf("newest %v: paged through %d messages, want 50", newest, len(seen))
		}
		for i, seq := range seen {
			want := int64(i + 1)
			if newest {
				want = int64(50 - i)
			}
			if seq != want {
				t.Fatalf("newest %v: message %d has seq %d, want %d", newest, i, seq, want)
			}
		}
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for q, cond := range map[string]string{historyOldestAfterSQL: "seq > $4", historyNewestAfterSQL: "seq < $4"} {
		var name string
		var generic, custom int64
		if err := conn.QueryRow(ctx, `select name, generic_plans, custom_plans from pg_prepared_statements where statement = $1`, q).
			Scan(&name, &generic, &custom); err != nil {
			t.Fatalf("the page after a cursor (%s) was not prepared: %v", cond, err)
		}
		if generic == 0 || custom != 0 {
			t.Errorf("the page after a cursor (%s) ran %d generic and %d custom plans, want only generic", cond, generic, custom)
		}
		var plan strings.Builder
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `set local plan_cache_mode = force_generic_plan`); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `explain execute `+pgx.Identifier{name}.Sanitize()+`($1, $2, '', 20, 8, null)`,
				pgx.QueryExecModeSimpleProtocol, sid, sc.UserID)
			if err != nil {
				return err
			}
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					return err
				}
				plan.WriteString(line + "\n")
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		want := "Index Cond: ((session_id = $1) AND (" + cond + "))"
		if !strings.Contains(plan.String(), want) {
			t.Errorf("the generic plan of the page after a cursor does not begin at it (%s):\n%s", want, plan.String())
		}
	}
}
