package service_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/embedding/embeddingtest"
	"github.com/agentmem/agentmem/shared/service"
	"github.com/agentmem/agentmem/shared/testdb"
)

// What a Lambda that commits turns waits for after an answer: the turn's messages embedded, for
// at most EMBEDDING_TIMEOUT. With the provider not answering, the wait ends while the messages
// are still being embedded (they are left to later); with MESSAGE_EMBEDDING=commit there is
// nothing to wait for.
func TestAfterAnswerWaitsForEmbeddingsWithinTheirBudget(t *testing.T) {
	db := testdb.New(t)
	const model, dims = "fake-embed-8", 8
	emb := embeddingtest.New(t, model, dims)
	held, release := make(chan struct{}, 64), make(chan struct{})
	emb.Before = func(*http.Request, []string) { held <- struct{}{}; <-release }
	t.Cleanup(func() { close(release) }) // before the provider closes: cleanups run last first
	vars := map[string]string{
		"DATABASE_URL": db.URL, "SUPABASE_JWT_SECRET": config.LocalJWTSecret, "EMBEDDING_PROVIDER": "openai",
		"EMBEDDING_BASE_URL": emb.URL, "EMBEDDING_MODEL": model, "EMBEDDING_DIMENSIONS": "8",
		"EMBEDDING_TIMEOUT": "200ms", "EMBEDDING_MAX_RETRY_TIME": "10m",
	}
	load := func(extra map[string]string) config.Config {
		cfg, err := config.Load(func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return vars[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)

	committing, err := service.New(ctx, load(map[string]string{"MESSAGE_EMBEDDING": "commit"}), log)
	if err != nil {
		t.Fatal(err)
	}
	defer committing.Close()
	if committing.AfterAnswer() != nil {
		t.Error("MESSAGE_EMBEDDING=commit leaves something to wait for after the answer")
	}

	svc, err := service.New(ctx, load(nil), log)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	content := []byte(`"I moved to Lisbon"`)
	role := "user"
	sid := uuid.NewString()
	if _, err := svc.App.CommitTurn(ctx, auth.Principal{Role: auth.RoleUser, UserID: uuid.NewString()},
		app.CommitTurnInput{SessionID: &sid, Messages: []app.MessageInput{{Role: &role, Content: content}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(time.Minute):
		t.Fatal("the message was not embedded after the answer")
	}
	waited := make(chan struct{})
	go func() { svc.AfterAnswer()(ctx); close(waited) }()
	select {
	case <-waited:
	case <-time.After(time.Minute):
		t.Fatal("the wait after the answer did not end while the provider did not answer")
	}
	// It ended on its budget: the message is still being embedded.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := svc.App.WaitEmbeddedContext(done); err == nil {
		t.Error("the wait after the answer ended once the message was embedded or given up, not on its budget")
	}
}
