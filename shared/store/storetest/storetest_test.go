package storetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// The factories write what they say: the store reads back the turn, the memory and the
// document, with the built-in embedder's vectors where they give one, and the seeded rows are
// the user's, ten messages to a session.
func TestFactoriesWriteTheirRows(t *testing.T) {
	t.Parallel()
	e := storetest.New(t, storetest.MaxConns(2))
	ctx := context.Background()
	admin := e.Admin(t)
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := admin.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	sc := storetest.Scope("bot")
	sid := uuid.New()
	res := storetest.Commit(t, e.Store, sc, sid, storetest.Messages(3, "line"), "User likes tea.")
	if len(res.Messages) != 3 || res.Messages[2].Seq != 3 {
		t.Fatalf("commit: %+v", res)
	}
	got, err := e.Store.GetContext(ctx, store.ContextParams{Scope: sc, SessionID: sid, MaxMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	var contents, roles []string
	for _, m := range got.Messages {
		contents, roles = append(contents, m.Content), append(roles, m.Role)
	}
	if want := []string{"line 1", "line 2", "line 3"}; len(contents) != 3 || contents[0] != want[0] || contents[2] != want[2] {
		t.Errorf("messages %v, want %v", contents, want)
	}
	if roles[0] != memory.RoleUser || roles[1] != memory.RoleAssistant {
		t.Errorf("roles %v, want user and assistant in turn", roles)
	}

	m := storetest.Memory(t, e.Store, sc, "User lives in Porto.", json.RawMessage(`{"k":1}`))
	item, err := e.Store.GetMemory(ctx, sc, m.ID)
	if err != nil || item.Content != "User lives in Porto." || string(item.Metadata) != `{"k": 1}` {
		t.Errorf("memory %+v, %v", item, err)
	}
	if n := count(`select count(*) from agentmem.memories where id = $1 and embedding_model = $2 and embedding is not null`,
		m.ID, embedding.Hash{}.Model()); n != 1 {
		t.Errorf("%d memories with the built-in embedder's vector, want 1", n)
	}

	ing := storetest.Knowledge(t, e.Store, "t1", "handbook.md", "Refunds within 14 days.", "Support on weekdays.")
	if ing.Chunks != 2 {
		t.Errorf("ingest: %+v", ing)
	}
	v := storetest.HashLiteral("Support on weekdays.")
	hits, err := e.Store.SearchKnowledge(ctx, store.KnowledgeSearchParams{TenantID: "t1", Query: "Support on weekdays.", K: 1,
		Mode: memory.ModeVector, QueryVector: &v, Model: embedding.Hash{}.Model()})
	if err != nil || len(hits) != 1 || hits[0].Content != "Support on weekdays." {
		t.Errorf("knowledge search: %+v, %v", hits, err)
	}

	user := uuid.New()
	storetest.SeedMemories(t, admin, user.String(), "a", []string{"one", "two"}, []string{`{}`, `{"i": 1}`})
	texts := make([]string, 12)
	meta := make([]string, 12)
	for i := range texts {
		texts[i], meta[i] = fmt.Sprintf("message %d", i), `{}`
	}
	storetest.SeedMessages(t, admin, user.String(), "a", texts, meta)
	if n := count(`select count(*) from agentmem.memories where user_id = $1 and agent = 'a' and embedding is not null`, user); n != 2 {
		t.Errorf("%d seeded memories, want 2", n)
	}
	if n := count(`select count(*) from agentmem.messages where user_id = $1 and embedding is not null`, user); n != 12 {
		t.Errorf("%d seeded messages, want 12", n)
	}
	if n := count(`select count(*) from agentmem.sessions where user_id = $1`, user); n != 2 {
		t.Errorf("%d sessions for 12 seeded messages, want 2", n)
	}
}
