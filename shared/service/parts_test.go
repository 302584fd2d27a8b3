package service_test

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/service"
)

// A binary built without the embedder (a function that embeds nothing) names the model the
// configuration gives, as the built embedder does, so that what it reads and writes is of
// that model; asked to embed, it fails rather than inventing vectors.
func TestAnUnbuiltEmbedderNamesTheConfiguredModel(t *testing.T) {
	t.Parallel()
	for _, vars := range []map[string]string{
		{},
		{"EMBEDDING_PROVIDER": "local"},
		{"EMBEDDING_PROVIDER": "openai", "EMBEDDING_BASE_URL": "http://127.0.0.1:1"},
		{"EMBEDDING_PROVIDER": "openai", "EMBEDDING_BASE_URL": "http://127.0.0.1:1", "EMBEDDING_MODEL": "text-embedding-3-large",
			"EMBEDDING_DIMENSIONS": "3072"},
		{"EMBEDDING_PROVIDER": "openai", "EMBEDDING_BASE_URL": "http://127.0.0.1:1", "EMBEDDING_MODEL": "nomic-embed-text",
			"EMBEDDING_DIMENSIONS": "768"},
		{"EMBEDDING_PROVIDER": "bedrock", "AWS_REGION": "us-east-1"},
		{"EMBEDDING_PROVIDER": "bedrock", "AWS_REGION": "us-east-1", "EMBEDDING_DIMENSIONS": "512"},
	} {
		t.Run(fmt.Sprint(vars), func(t *testing.T) {
			t.Parallel()
			// A database nobody listens on: the service connects on first use only.
			vars["DATABASE_URL"] = "postgresql://postgres:postgres@127.0.0.1:1/postgres?connect_timeout=1"
			cfg, err := config.Load(func(k string) string { return vars[k] })
			if err != nil {
				t.Fatal(err)
			}
			log := slog.New(slog.DiscardHandler)
			built, err := service.NewParts(t.Context(), cfg, log, service.Parts{Embedder: service.NewEmbedder})
			if err != nil {
				t.Fatal(err)
			}
			defer built.Close()
			unbuilt, err := service.NewParts(t.Context(), cfg, log, service.Parts{})
			if err != nil {
				t.Fatal(err)
			}
			defer unbuilt.Close()
			b, u := built.App.Embedder(), unbuilt.App.Embedder()
			if u.Model() != b.Model() || u.Dimensions() != b.Dimensions() {
				t.Errorf("without the embedder: %s, %d dimensions; built: %s, %d", u.Model(), u.Dimensions(), b.Model(), b.Dimensions())
			}
			if v, err := u.Embed(t.Context(), []string{"a text"}); err == nil {
				t.Errorf("the unbuilt embedder embedded: %d vectors, no error", len(v))
			}
		})
	}
}
