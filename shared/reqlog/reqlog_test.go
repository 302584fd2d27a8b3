package reqlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/agentmem/agentmem/shared/reqlog"
)

// A line logged with a request's context carries its id, through derived loggers too; a line
// without one carries none.
func TestHandlerAddsTheRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(reqlog.NewHandler(slog.NewJSONHandler(&buf, nil))).With("fn", "recall").WithGroup("g")
	ctx := reqlog.WithRequestID(context.Background(), "rid-1")
	log.InfoContext(ctx, "with")
	log.InfoContext(context.Background(), "without")
	dec := json.NewDecoder(&buf)
	for _, want := range []string{"rid-1", ""} {
		var line map[string]any
		if err := dec.Decode(&line); err != nil {
			t.Fatal(err)
		}
		g, _ := line["g"].(map[string]any)
		got, _ := g["request_id"].(string)
		if got != want || line["fn"] != "recall" {
			t.Errorf("line %v: request_id %q, want %q", line, got, want)
		}
	}
	if reqlog.RequestID(context.Background()) != "" || reqlog.RequestID(ctx) != "rid-1" {
		t.Error("RequestID does not read back what WithRequestID stored")
	}
}
