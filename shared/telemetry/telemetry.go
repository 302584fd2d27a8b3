// Package telemetry exports agentmem's traces and metrics over OTLP/HTTP with the official
// OpenTelemetry Go SDK, configured only by the standard OpenTelemetry environment variables.
//
// # Configuration
//
// Telemetry is on when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT, or the
// per-signal OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) and
// OTEL_SDK_DISABLED is not "true". The exporters and the SDK read every other standard
// variable themselves: OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT,
// OTEL_EXPORTER_OTLP_COMPRESSION, OTEL_SERVICE_NAME (default [DefaultServiceName]),
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG. Without an
// endpoint nothing is installed: every helper of this package returns at its first line, so an
// unconfigured deployment pays one atomic load per helper and allocates nothing.
//
// # What is exported
//
// Spans:
//   - one server span per function call, named "agentmem.<function>" ([StartFunction]), with
//     agentmem.function, http.response.status_code, agentmem.error_code (the problem's code, on
//     failures), agentmem.request_id (the X-Request-Id that the logs carry too),
//     agentmem.caller_role (user or service) and http.request.body.size;
//   - child spans "store.tx" / "store.batch" for each database transaction ([StartStore]) and
//     "embedding.embed" for each embedding call with the number of texts ([StartEmbedding]);
//   - for the orchestrator, "memory.intent" ([StartIntent]: commit-turn's onTurnCommitted,
//     get-context's fetchContext, the intents function's types) and "adapter.<name>"
//     ([StartAdapter]): "adapter.supabase" for the intent's read or write in the database,
//     "adapter.redis", "adapter.webhook", "adapter.mem0" for each delivery of a job;
//   - "cache.get_context" for a get-context answered through the Redis adapter's cache
//     ([StartCache]), with agentmem.adapter and agentmem.cache.result (hit, miss, stale,
//     unavailable).
//
// Metrics:
//   - agentmem.requests (counter) and agentmem.request.duration (histogram, seconds) by
//     agentmem.function and http.response.status_code (and agentmem.error_code on failures);
//   - agentmem.jobs (counter) by agentmem.adapter and agentmem.job.status ([RecordJob]);
//   - agentmem.delivery.duration (histogram, seconds, commit to delivery) and
//     agentmem.delivery.failures (counter) by agentmem.adapter ([RecordDelivery]);
//   - agentmem.cache.lookups (counter) by agentmem.adapter and agentmem.cache.result
//     ([Span.EndCache]).
//
// No attribute, event or status ever carries content: no message or memory text, no token,
// no key, no error message (errors are recorded by their problem code only). User and tenant
// ids are left out too: user ids are pseudonymous UUIDs but still personal data, and tenant
// ids are chosen by the deployer and may be names. A trace is tied to a user through its
// request id, which the request log records.
//
// # Seam for the orchestrator
//
// The outbox code calls, per intent, ctx, sp := StartIntent(ctx, intentType) ... sp.End(err);
// per delivery attempt, ctx, sp := StartAdapter(ctx, adapter) ... sp.End(err), then
// RecordDelivery(ctx, adapter, time since the commit, err); and RecordJob(ctx, adapter, status)
// whenever a job enters a status (pending, delivered, retry, dead). Names of adapters, intent
// types and job statuses are fixed strings from code, never input.
//
// # Lambda
//
// On Lambda the process may be frozen as soon as an invocation returns, so spans are exported
// before it does: [Telemetry.Flush] force-flushes both providers and service.RunLambda calls it
// at the end of every invocation.
package telemetry

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentmem/agentmem/shared/apierror"
)

// DefaultServiceName is service.name when OTEL_SERVICE_NAME is unset.
const DefaultServiceName = "agentmem"

// instrumentationName names the tracer and meter.
const instrumentationName = "github.com/agentmem/agentmem"

// Telemetry is the installed providers; the zero value (and nil) is telemetry off.
type Telemetry struct {
	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
}

// Enabled reports whether the environment configures an export: an OTLP endpoint for traces
// or metrics, and OTEL_SDK_DISABLED not "true".
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" ||
		getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
}

// ToLocalCollector reports whether the environment's OTLP endpoint is on the loopback: a
// collector in the same environment (on Lambda, a layer: ADOT's collector, OpenTelemetry's),
// which exports what it holds once the function has answered.
func ToLocalCollector(getenv func(string) string) bool {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		u, err := url.Parse(getenv(v))
		if err != nil {
			continue
		}
		if h := u.Hostname(); h == "localhost" {
			return true
		} else if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return true
		}
	}
	return false
}

// Setup installs OTLP/HTTP trace and metric providers when [Enabled]; otherwise it installs
// nothing and returns a nil *Telemetry, whose methods do nothing. The exporters read the
// standard variables from the process environment.
func Setup(ctx context.Context, getenv func(string) string) (*Telemetry, error) {
	if !Enabled(getenv) {
		return nil, nil
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", serviceName(getenv))))
	if err != nil {
		return nil, err
	}
	t := &Telemetry{}
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, err
		}
		// The sampler comes from OTEL_TRACES_SAMPLER (default parentbased_always_on).
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "" {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, err
		}
		// The periodic reader exports every minute (OTEL_METRIC_EXPORT_INTERVAL); Flush
		// exports at the end of each Lambda invocation as well.
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
	}
	t.install()
	return t, nil
}

// serviceName is OTEL_SERVICE_NAME or DefaultServiceName; OTEL_RESOURCE_ATTRIBUTES'
// service.name, if any, is overridden only by OTEL_SERVICE_NAME, as the specification says.
func serviceName(getenv func(string) string) string {
	if n := getenv("OTEL_SERVICE_NAME"); n != "" {
		return n
	}
	for _, kv := range strings.Split(getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(k) == "service.name" && v != "" {
			return strings.TrimSpace(v)
		}
	}
	return DefaultServiceName
}

// Install makes tp and mp the providers of this package (and OpenTelemetry's globals), as
// Setup does with its exporters; for tests that export to an in-memory exporter or reader.
// Either may be nil. It returns a Telemetry whose Flush and Shutdown act on them.
func Install(tp *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider) *Telemetry {
	t := &Telemetry{tp: tp, mp: mp}
	t.install()
	return t
}

func (t *Telemetry) install() {
	in := &instruments{}
	if t.tp != nil {
		otel.SetTracerProvider(t.tp)
		in.tracer = t.tp.Tracer(instrumentationName)
	}
	if t.mp != nil {
		otel.SetMeterProvider(t.mp)
		in.meter(t.mp.Meter(instrumentationName))
	}
	current.Store(in)
}

// Flush exports every finished span and the current metrics before it returns.
func (t *Telemetry) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.ForceFlush(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.ForceFlush(ctx))
	}
	return errors.Join(errs...)
}

// Shutdown flushes and stops the providers and uninstalls them from this package.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	current.Store(nil)
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// instruments are the tracer and metric instruments in use; nil fields are off.
type instruments struct {
	tracer           trace.Tracer
	requests         metric.Int64Counter
	requestDuration  metric.Float64Histogram
	jobs             metric.Int64Counter
	deliveryDuration metric.Float64Histogram
	deliveryFailures metric.Int64Counter
	cacheLookups     metric.Int64Counter
}

// meter creates the metric instruments; an instrument the SDK refuses stays nil (off).
func (in *instruments) meter(m metric.Meter) {
	in.requests, _ = m.Int64Counter("agentmem.requests", metric.WithDescription("Function calls."), metric.WithUnit("{request}"))
	in.requestDuration, _ = m.Float64Histogram("agentmem.request.duration", metric.WithDescription("Duration of function calls."), metric.WithUnit("s"))
	in.jobs, _ = m.Int64Counter("agentmem.jobs", metric.WithDescription("Outbox jobs entering a status."), metric.WithUnit("{job}"))
	in.deliveryDuration, _ = m.Float64Histogram("agentmem.delivery.duration", metric.WithDescription("Time from commit to delivery to an adapter."), metric.WithUnit("s"))
	in.deliveryFailures, _ = m.Int64Counter("agentmem.delivery.failures", metric.WithDescription("Failed delivery attempts."), metric.WithUnit("{attempt}"))
	in.cacheLookups, _ = m.Int64Counter("agentmem.cache.lookups", metric.WithDescription("get-context cache look-ups, by result."), metric.WithUnit("{lookup}"))
}

// current is the installed instruments, nil when telemetry is off.
var current atomic.Pointer[instruments]

// Span is a span started by this package; the zero value (telemetry off) does nothing.
type Span struct {
	span  trace.Span
	in    *instruments
	start time.Time
	fn    string
}

func start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, Span) {
	in := current.Load()
	if in == nil {
		return ctx, Span{}
	}
	sp := Span{in: in, start: time.Now()}
	if in.tracer != nil {
		ctx, sp.span = in.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	}
	return ctx, sp
}

// StartFunction starts the server span of one call of the function fn ("commit-turn").
// End it with [Span.EndFunction].
func StartFunction(ctx context.Context, fn, requestID string) (context.Context, Span) {
	if current.Load() == nil {
		return ctx, Span{}
	}
	ctx, sp := start(ctx, "agentmem."+fn, trace.SpanKindServer,
		attribute.String("agentmem.function", fn), attribute.String("agentmem.request_id", requestID))
	sp.fn = fn
	return ctx, sp
}

// SetCaller records the caller's role (user or service) and the request body's size in bytes.
func (s Span) SetCaller(role string, bodySize int) {
	if s.span == nil {
		return
	}
	s.span.SetAttributes(attribute.String("agentmem.caller_role", role), attribute.Int("http.request.body.size", bodySize))
}

// EndFunction ends a function's span with the answer's status and, for a failure, its problem
// code, and records the call's metrics.
func (s Span) EndFunction(ctx context.Context, status int, code apierror.Code) {
	if s.in == nil {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("agentmem.function", s.fn), attribute.Int("http.response.status_code", status)}
	if code != "" {
		attrs = append(attrs, attribute.String("agentmem.error_code", string(code)))
	}
	if s.span != nil {
		s.span.SetAttributes(attrs[1:]...)
		if status >= 500 {
			// The description is the code, never the error's text.
			s.span.SetStatus(codes.Error, string(code))
		}
		s.span.End()
	}
	set := metric.WithAttributes(attrs...)
	if s.in.requests != nil {
		s.in.requests.Add(ctx, 1, set)
	}
	if s.in.requestDuration != nil {
		s.in.requestDuration.Record(ctx, time.Since(s.start).Seconds(), set)
	}
}

// spanCoder is an error that names its kind for a span itself: the store's, which know no
// problem codes.
type spanCoder interface {
	error
	SpanCode() string
}

// End ends a span started by StartStore, StartEmbedding, StartIntent or StartAdapter. A
// non-nil err marks the span failed with the error's problem code only (or the store's kind).
func (s Span) End(err error) {
	if s.span == nil {
		return
	}
	if err != nil {
		code := string(apierror.As(err).Code)
		if _, ok := errors.AsType[*apierror.Error](err); !ok {
			if sc, ok := errors.AsType[spanCoder](err); ok {
				code = sc.SpanCode()
			}
		}
		s.span.SetAttributes(attribute.String("agentmem.error_code", code))
		s.span.SetStatus(codes.Error, code)
	}
	s.span.End()
}

// StartStore starts the span of one database transaction or batch; op is "tx" or "batch".
func StartStore(ctx context.Context, op string) (context.Context, Span) {
	if current.Load() == nil {
		return ctx, Span{}
	}
	return start(ctx, "store."+op, trace.SpanKindClient, attribute.String("db.system.name", "postgresql"))
}

// StartEmbedding starts the span of one embedding call of n texts with the model model.
func StartEmbedding(ctx context.Context, model string, n int) (context.Context, Span) {
	if current.Load() == nil {
		return ctx, Span{}
	}
	return start(ctx, "embedding.embed", trace.SpanKindClient,
		attribute.String("gen_ai.request.model", model), attribute.Int("agentmem.embedding.texts", n))
}

// StartIntent starts the span of handling one intent of the type intentType ("syncSession").
func StartIntent(ctx context.Context, intentType string) (context.Context, Span) {
	if current.Load() == nil {
		return ctx, Span{}
	}
	return start(ctx, "memory.intent", trace.SpanKindInternal, attribute.String("agentmem.intent", intentType))
}

// AdapterSupabase names the authoritative store in StartAdapter: an intent's own read or
// write in the database ("adapter.supabase"), beside the deliveries to the other adapters.
const AdapterSupabase = "supabase"

// StartAdapter starts the span of one delivery attempt to the adapter ("redis", "webhook",
// "mem0"), or of an intent's work in the database (AdapterSupabase): the span is named
// "adapter.<adapter>".
func StartAdapter(ctx context.Context, adapter string) (context.Context, Span) {
	if current.Load() == nil {
		return ctx, Span{}
	}
	return start(ctx, "adapter."+adapter, trace.SpanKindClient, attribute.String("agentmem.adapter", adapter))
}

// StartCache starts the span of one get-context answered through the cache of the adapter
// ("redis"): "cache.get_context". End it with [Span.EndCache].
func StartCache(ctx context.Context, adapter string) (context.Context, Span) {
	if current.Load() == nil {
		return ctx, Span{}
	}
	ctx, sp := start(ctx, "cache.get_context", trace.SpanKindInternal, attribute.String("agentmem.adapter", adapter))
	sp.fn = adapter
	return ctx, sp
}

// The results of a cache look-up (EndCache).
const (
	// CacheHit: the window came from the cache.
	CacheHit = "hit"
	// CacheMiss: the database answered and the cache was filled.
	CacheMiss = "miss"
	// CacheStale: a cached window was there but a change may be missing from it (a job not
	// delivered yet, a message expired since); the database answered.
	CacheStale = "stale"
	// CacheUnavailable: the cache did not answer in time or is resting after a failure; the
	// database answered.
	CacheUnavailable = "unavailable"
)

// EndCache ends a span started by StartCache with the look-up's result (CacheHit...) and
// counts it.
func (s Span) EndCache(ctx context.Context, result string) {
	if s.in == nil {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("agentmem.adapter", s.fn), attribute.String("agentmem.cache.result", result)}
	if s.span != nil {
		s.span.SetAttributes(attrs[1])
		s.span.End()
	}
	if s.in.cacheLookups != nil {
		s.in.cacheLookups.Add(ctx, 1, metric.WithAttributes(attrs...))
	}
}

// RecordJob counts a job of the adapter entering status (pending, delivered, retry, dead).
func RecordJob(ctx context.Context, adapter, status string) {
	in := current.Load()
	if in == nil || in.jobs == nil {
		return
	}
	in.jobs.Add(ctx, 1, metric.WithAttributes(attribute.String("agentmem.adapter", adapter), attribute.String("agentmem.job.status", status)))
}

// RecordDelivery records one delivery attempt to the adapter: on success its latency from the
// commit, on failure (err non-nil) one failure.
func RecordDelivery(ctx context.Context, adapter string, sinceCommit time.Duration, err error) {
	in := current.Load()
	if in == nil {
		return
	}
	set := metric.WithAttributes(attribute.String("agentmem.adapter", adapter))
	if err != nil {
		if in.deliveryFailures != nil {
			in.deliveryFailures.Add(ctx, 1, set)
		}
		return
	}
	if in.deliveryDuration != nil {
		in.deliveryDuration.Record(ctx, sinceCommit.Seconds(), set)
	}
}
