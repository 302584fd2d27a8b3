package app_test

import (
	"testing"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/store"
)

func TestCheckEmbedder(t *testing.T) {
	t.Parallel()
	if err := app.CheckEmbedder(embedding.Hash{}); err != nil {
		t.Errorf("Hash: %v", err)
	}
	for _, tc := range []struct {
		model string
		dims  int
		ok    bool
	}{
		{"text-embedding-3-large", 3072, true},
		{"amazon.titan-embed-text-v2:0", 1024, true},
		{"too-large", store.MaxDimensions + 1, false},
		{"", 384, false},
	} {
		t.Run(tc.model, func(t *testing.T) {
			e, err := embedding.NewOpenAI(embedding.OpenAIConfig{Model: tc.model, Dimensions: tc.dims})
			if err != nil {
				if !tc.ok {
					return // refused earlier: fine
				}
				t.Fatal(err)
			}
			if err := app.CheckEmbedder(e); (err == nil) != tc.ok {
				t.Errorf("%s at %d dimensions: CheckEmbedder = %v, want ok %v", tc.model, tc.dims, err, tc.ok)
			}
		})
	}
}

// The store's bound on dimensions is pgvector's, as the embedders know it.
func TestMaxDimensionsAgree(t *testing.T) {
	t.Parallel()
	if store.MaxDimensions != embedding.MaxDimensions {
		t.Errorf("store.MaxDimensions = %d, embedding.MaxDimensions = %d", store.MaxDimensions, embedding.MaxDimensions)
	}
}
