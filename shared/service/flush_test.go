package service

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentmem/agentmem/shared/lambdaext"
	"github.com/agentmem/agentmem/shared/lambdaext/lambdaexttest"
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

// Under the function's Lambda extension, an invocation's spans are exported after its
// answer, before the extension lets Lambda freeze the environment, and after the work the
// invocation left (whose spans go with them). Without the extension (Lambda refuses it), they
// are exported before the answer; with neither telemetry nor work after the answer, the
// handler is left as it is and no extension is registered.
func TestLambdaExportsAfterTheAnswer(t *testing.T) {
	handler := func(ctx context.Context, _ json.RawMessage) (any, error) {
		_, sp := telemetry.StartFunction(ctx, "commit-turn", "rid-after")
		sp.EndFunction(ctx, 201, "")
		return "done", nil
	}
	newTel := func() (*telemetry.Telemetry, *tracetest.InMemoryExporter) {
		spans := tracetest.NewInMemoryExporter()
		tel := telemetry.Install(sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans, sdktrace.WithBatchTimeout(time.Hour))), nil)
		t.Cleanup(func() { tel.Shutdown(context.Background()) }) //nolint:errcheck
		return tel, spans
	}
	log := slog.New(slog.DiscardHandler)
	invocation := func(ctx context.Context, id string) context.Context {
		return lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: id})
	}

	t.Run("with the extension", func(t *testing.T) {
		api, addr := lambdaexttest.New(t)
		t.Setenv("AWS_LAMBDA_RUNTIME_API", addr)
		tel, spans := newTel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		waited := make(chan struct{})
		wait := func(ctx context.Context) {
			_, sp := telemetry.StartFunction(ctx, "embed-later", "rid-later")
			sp.EndFunction(ctx, 200, "")
			close(waited)
		}
		h := withAfterAnswer(ctx, &Service{Telemetry: tel, Log: log}, handler, wait)
		if name := <-api.Registered; name != lambdaext.Name {
			t.Fatalf("registered %q", name)
		}
		api.NextAsked()
		// The handler answers before the extension has the invocation's event, so that
		// nothing it does after can be mistaken for the handler's own.
		if out, err := h(invocation(ctx, "r1"), nil); out != "done" || err != nil {
			t.Fatalf("invocation: %v, %v", out, err)
		}
		if got := spans.GetSpans(); len(got) != 0 {
			t.Errorf("exported before the answer: %v", got.Snapshots())
		}
		api.Invoke("r1", time.Now().Add(time.Minute))
		api.NextAsked()
		<-waited
		var names []string
		for _, sp := range spans.GetSpans() {
			names = append(names, sp.Name)
		}
		if slices.Sort(names); !slices.Equal(names, []string{"agentmem.commit-turn", "agentmem.embed-later"}) {
			t.Errorf("exported when the extension let the environment freeze: %v, want the invocation's and the work's after it", names)
		}
	})

	t.Run("refused", func(t *testing.T) {
		api, addr := lambdaexttest.New(t)
		api.Refuse.Store(true)
		t.Setenv("AWS_LAMBDA_RUNTIME_API", addr)
		tel, spans := newTel()
		h := withAfterAnswer(context.Background(), &Service{Telemetry: tel, Log: log}, handler, nil)
		if out, err := h(invocation(context.Background(), "r1"), nil); out != "done" || err != nil {
			t.Fatalf("invocation: %v, %v", out, err)
		}
		if got := spans.GetSpans(); len(got) != 1 {
			t.Errorf("exported at return without the extension: %v, want the invocation's span", got.Snapshots())
		}
	})

	t.Run("to a collector layer", func(t *testing.T) {
		api, addr := lambdaexttest.New(t)
		t.Setenv("AWS_LAMBDA_RUNTIME_API", addr)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318")
		tel, spans := newTel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := withAfterAnswer(ctx, &Service{Telemetry: tel, Log: log}, handler, func(context.Context) {})
		<-api.Registered
		if out, err := h(invocation(ctx, "r1"), nil); out != "done" || err != nil {
			t.Fatalf("invocation: %v, %v", out, err)
		}
		if got := spans.GetSpans(); len(got) != 1 {
			t.Errorf("exported at return to a collector in the environment: %v, want the invocation's span", got.Snapshots())
		}
	})

	t.Run("neither", func(t *testing.T) {
		api, addr := lambdaexttest.New(t)
		t.Setenv("AWS_LAMBDA_RUNTIME_API", addr)
		withAfterAnswer(context.Background(), &Service{Log: log}, handler, nil)
		select {
		case name := <-api.Registered:
			t.Errorf("registered %q with nothing to do after the answer", name)
		default:
		}
	})
}

type countingNotifier struct{ calls atomic.Int64 }

func (c *countingNotifier) Notify(context.Context) { c.calls.Add(1) }

// With JOBS_NOTIFY=lambda:..., a Lambda function with its extension starts delivery after the
// answer: the invocation's notes that it wrote jobs make one call of the Lambda API, once the
// handler has returned. Without the extension each note calls at once, in the request.
func TestLambdaStartsDeliveryAfterTheAnswer(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	newService := func() (*Service, *countingNotifier) {
		c := &countingNotifier{}
		return &Service{Log: log, notifyLater: &notifyLater{inner: c}}, c
	}
	invoke := func(svc *Service) func(context.Context, json.RawMessage) (any, error) {
		return func(ctx context.Context, _ json.RawMessage) (any, error) {
			svc.notifyLater.Notify(ctx) // a turn's jobs
			svc.notifyLater.Notify(ctx) // and its summary's
			return "done", nil
		}
	}
	call := func(h func(context.Context, json.RawMessage) (any, error), id string) {
		t.Helper()
		ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: id})
		if out, err := h(ctx, nil); out != "done" || err != nil {
			t.Fatalf("invocation: %v, %v", out, err)
		}
	}

	t.Run("with the extension", func(t *testing.T) {
		api, addr := lambdaexttest.New(t)
		t.Setenv("AWS_LAMBDA_RUNTIME_API", addr)
		svc, c := newService()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := withAfterAnswer(ctx, svc, invoke(svc), nil)
		<-api.Registered
		for i, id := range []string{"r1", "r2"} {
			api.NextAsked()
			call(h, id)
			if got := c.calls.Load(); got != int64(i) {
				t.Errorf("%s: %d calls when the handler returned, want %d (the calls before it)", id, got, i)
			}
			api.Invoke(id, time.Now().Add(time.Minute))
		}
		api.NextAsked()
		if got := c.calls.Load(); got != 2 {
			t.Errorf("%d calls after two invocations, want one each", got)
		}
	})

	t.Run("refused", func(t *testing.T) {
		api, addr := lambdaexttest.New(t)
		api.Refuse.Store(true)
		t.Setenv("AWS_LAMBDA_RUNTIME_API", addr)
		svc, c := newService()
		call(withAfterAnswer(context.Background(), svc, invoke(svc), nil), "r1")
		if got := c.calls.Load(); got != 2 {
			t.Errorf("%d calls when the handler returned without the extension, want 2", got)
		}
	})
}
