package service

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentmem/agentmem/shared/telemetry"
)

// A Lambda invocation's spans are exported before it returns, although the batching
// processor would otherwise hold them for seconds; without telemetry the handler is unwrapped.
func TestLambdaFlushesEveryInvocation(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tel := telemetry.Install(sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans, sdktrace.WithBatchTimeout(time.Hour))), nil)
	defer tel.Shutdown(context.Background()) //nolint:errcheck
	handler := func(ctx context.Context, _ json.RawMessage) (any, error) {
		_, sp := telemetry.StartFunction(ctx, "commit-turn", "rid-flush")
		sp.EndFunction(ctx, 201, "")
		return "done", nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // an invocation whose context is already done still flushes
	out, err := flushing(handler, &Service{Telemetry: tel, Log: slog.New(slog.DiscardHandler)})(ctx, nil)
	if out != "done" || err != nil {
		t.Fatalf("invocation: %v, %v", out, err)
	}
	if got := spans.GetSpans(); len(got) != 1 || got[0].Name != "agentmem.commit-turn" {
		t.Errorf("exported at return: %v, want the invocation's span", got.Snapshots())
	}
	if flushing(handler, &Service{}) == nil {
		t.Error("no handler without telemetry")
	}
}
