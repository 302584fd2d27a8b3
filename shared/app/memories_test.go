package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
)

// memories create validates everything before storing anything; agent defaults to that of a
// turn without one, so the same fact from a turn and from create is one memory.
func TestCreateMemoryThroughTheUseCase(t *testing.T) {
	t.Parallel()
	a, count := newApp(t)
	ctx := context.Background()
	u := user()
	key := func(k string) *app.IdempotencyKey {
		return &app.IdempotencyKey{Key: k, Present: true, RequestHash: app.RequestHash([]byte(k))}
	}
	for _, c := range []struct {
		name  string
		in    app.CreateMemoryInput
		field string
	}{
		{"no content", app.CreateMemoryInput{}, "content"},
		{"blank content", app.CreateMemoryInput{Content: ptr(" \n\t")}, "content"},
		{"long content", app.CreateMemoryInput{Content: ptr(strings.Repeat("é", 20_001))}, "content"},
		{"metadata not an object", app.CreateMemoryInput{Content: ptr("x"), Metadata: []byte(`[1]`)}, "metadata"},
		{"metadata too large", app.CreateMemoryInput{Content: ptr("x"), Metadata: []byte(`{"a":"` + strings.Repeat("x", 16<<10) + `"}`)}, "metadata"},
		{"ttl 0", app.CreateMemoryInput{Content: ptr("x"), TTLSeconds: ptr(int64(0))}, "ttl_seconds"},
		{"agent", app.CreateMemoryInput{Content: ptr("x"), Agent: ptr("no spaces")}, "agent"},
		{"idempotency key", app.CreateMemoryInput{Content: ptr("x"), Idempotency: key("")}, "Idempotency-Key"},
		{"idempotency key not ASCII", app.CreateMemoryInput{Content: ptr("x"), Idempotency: key("ключ")}, "Idempotency-Key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := a.CreateMemory(ctx, u, c.in)
			wantField(t, c.name, err, c.field)
		})
	}
	if n := count(`select count(*) from agentmem.memories where user_id = $1`, u.UserID); n != 0 {
		t.Fatalf("refused requests stored %d memories", n)
	}
	out, err := a.CreateMemory(ctx, u, app.CreateMemoryInput{Content: ptr("Prefers metric units"), Metadata: []byte(`{"kind":"preference"}`),
		TTLSeconds: ptr(int64(3600))})
	if err != nil || out.Merged {
		t.Fatalf("create: %+v, %v", out, err)
	}
	res, err := a.CommitTurn(ctx, u, app.CommitTurnInput{SessionID: ptr(uuid.NewString()),
		Messages: []app.MessageInput{{Role: ptr("user"), Content: json.RawMessage(`"I like metric"`)}},
		Memories: []app.MemoryInput{{Content: ptr("prefers metric units.")}}})
	if err != nil || len(res.Memories) != 1 || res.Memories[0].ID != out.ID {
		t.Errorf("the same fact in a turn without agent: %+v, %v; want memory %s", res.Memories, err, out.ID)
	}
	if n := count(`select count(*) from agentmem.memories where user_id = $1 and agent = 'default'
		and expires_at > now() + interval '29 days'`, u.UserID); n != 1 {
		t.Errorf("the turn's default retention did not extend the memory: %d rows", n)
	}
	again, err := a.CreateMemory(ctx, u, app.CreateMemoryInput{Content: ptr("Prefers metric units")})
	if err != nil || !again.Merged || again.ID != out.ID || again.Replayed {
		t.Errorf("create again: %+v, %v", again, err)
	}
}
