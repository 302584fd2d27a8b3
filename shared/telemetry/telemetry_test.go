package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/telemetry"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://collector:4318/v1/metrics"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "TRUE"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "false"}, true},
	} {
		t.Run(fmt.Sprint(c.env), func(t *testing.T) {
			if got := telemetry.Enabled(env(c.env)); got != c.want {
				t.Errorf("Enabled(%v) = %v, want %v", c.env, got, c.want)
			}
		})
	}
	tel, err := telemetry.Setup(context.Background(), env(map[string]string{}))
	if tel != nil || err != nil {
		t.Errorf("Setup without an endpoint: %v, %v; want nothing installed", tel, err)
	}
	if err := tel.Flush(context.Background()); err != nil {
		t.Errorf("Flush of no telemetry: %v", err)
	}
}

// oneCall is what one function call does with this package.
func oneCall(ctx context.Context) {
	ctx, sp := telemetry.StartFunction(ctx, "commit-turn", "rid-1")
	sp.SetCaller("user", 512)
	_, st := telemetry.StartStore(ctx, "tx")
	st.End(nil)
	_, em := telemetry.StartEmbedding(ctx, "model", 2)
	em.End(nil)
	sp.EndFunction(ctx, 201, "")
}

// Without telemetry a call allocates nothing in this package.
func TestOffAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	down := errors.New("down")
	if n := testing.AllocsPerRun(100, func() {
		oneCall(ctx)
		_, in := telemetry.StartIntent(ctx, "syncSession")
		_, ad := telemetry.StartAdapter(ctx, "redis")
		ad.End(down)
		in.End(nil)
		telemetry.RecordJob(ctx, "redis", "delivered")
		telemetry.RecordDelivery(ctx, "redis", time.Millisecond, nil)
	}); n != 0 {
		t.Errorf("%v allocations per call with telemetry off, want 0", n)
	}
}

// The orchestrator's helpers make memory.intent and adapter.<name> spans and job metrics;
// a failure is recorded by its problem code only.
func TestOrchestratorSeam(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	tel := telemetry.Install(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	defer tel.Shutdown(context.Background()) //nolint:errcheck
	ctx := context.Background()
	ictx, in := telemetry.StartIntent(ctx, "syncSession")
	_, ad := telemetry.StartAdapter(ictx, "webhook")
	ad.End(apierror.New(apierror.Unavailable, "receiver at secret-host.example said no"))
	in.End(nil)
	telemetry.RecordJob(ctx, "webhook", "retry")
	telemetry.RecordDelivery(ctx, "webhook", 0, errors.New("refused"))
	telemetry.RecordDelivery(ctx, "webhook", 40*time.Millisecond, nil)

	got := spans.GetSpans()
	if len(got) != 2 || got[0].Name != "adapter.webhook" || got[1].Name != "memory.intent" ||
		got[0].Parent.SpanID() != got[1].SpanContext.SpanID() {
		t.Fatalf("spans %v, want adapter.webhook inside memory.intent", got.Snapshots())
	}
	if d := got[0].Status.Description; d != string(apierror.Unavailable) {
		t.Errorf("adapter span status %q, want the problem code only", d)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			seen[m.Name] = true
		}
	}
	for _, n := range []string{"agentmem.jobs", "agentmem.delivery.failures", "agentmem.delivery.duration"} {
		if !seen[n] {
			t.Errorf("no metric %s; got %v", n, seen)
		}
	}
}

// BenchmarkCall measures what one function call costs in this package, off and on (an SDK
// provider with a batching exporter that drops everything).
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	b.Run("off", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			oneCall(ctx)
		}
	})
	b.Run("on", func(b *testing.B) {
		tel := telemetry.Install(sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{})),
			sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
		defer tel.Shutdown(ctx) //nolint:errcheck
		b.ReportAllocs()
		for b.Loop() {
			oneCall(ctx)
		}
	})
}

type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// A collector on the environment's loopback (a Lambda layer's) is told apart from one elsewhere.
func TestToLocalCollector(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://[::1]:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otlp.eu01.nr-data.net"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://api.honeycomb.io:443"}, false},
		{map[string]string{}, false},
	} {
		if got := telemetry.ToLocalCollector(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.env, got, tc.want)
		}
	}
}
