package service_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/service"
)

// An embedder whose vectors the schema cannot store stops start-up, before any connection,
// with a message that says why.
func TestStartRefusesVectorsTheSchemaCannotStore(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		vars map[string]string
		want []string
	}{
		{map[string]string{"EMBEDDING_PROVIDER": "openai", "EMBEDDING_BASE_URL": "http://127.0.0.1:1",
			"EMBEDDING_MODEL": "text-embedding-3-large", "EMBEDDING_DIMENSIONS": "3072"},
			[]string{"3072", "vector(384)", "EMBEDDING_DIMENSIONS"}},
		{map[string]string{"EMBEDDING_PROVIDER": "bedrock", "AWS_REGION": "us-east-1"},
			[]string{"1024", "vector(384)", "Titan", "bedrock"}},
		{map[string]string{"EMBEDDING_PROVIDER": "bedrock", "AWS_REGION": "us-east-1", "EMBEDDING_DIMENSIONS": "384"},
			[]string{"256, 512 or 1024"}},
		{map[string]string{"EMBEDDING_MODEL": "all-minilm"}, []string{"local embedder"}},
	} {
		vars := tc.vars
		// A database nobody listens on: start-up must fail before it is needed.
		vars["DATABASE_URL"] = "postgresql://postgres:postgres@127.0.0.1:1/postgres?connect_timeout=1"
		cfg, err := config.Load(func(k string) string { return vars[k] })
		if err != nil {
			t.Fatal(err)
		}
		svc, err := service.New(context.Background(), cfg, log)
		if err == nil {
			svc.Close()
			t.Errorf("%v: started", tc.vars)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %q", tc.vars, err, w)
			}
		}
	}
}
