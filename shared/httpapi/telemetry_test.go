package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/telemetry"
	"github.com/agentmem/agentmem/shared/testdb"
)

// telemetrySecrets are what the telemetry traffic sends: none may appear in anything exported.
var telemetrySecrets = []string{
	"Zanzibar-fixture-7731", "Memory-fixture-9034", "Metadata-fixture-5512", "Query-fixture-2290",
	"jane.doe.fixture@example.com", "Idem-fixture-6617", "Tenant-fixture-acme", "Field-fixture-3141",
}

// telemetryTraffic runs commit-turn, get-context, recall and a few refusals with known
// content, an email and the user's token, and returns the secrets that must not be exported.
func telemetryTraffic(t *testing.T, e *env, prefix string) []string {
	t.Helper()
	u := e.newUser("Tenant-fixture-acme")
	sid := uuid.New()
	turn := map[string]any{
		"session_id": sid.String(), "agent": "support-bot",
		"messages": []any{
			map[string]any{"role": "user", "content": "Zanzibar-fixture-7731, mail me at jane.doe.fixture@example.com",
				"metadata": map[string]any{"note": "Metadata-fixture-5512"}},
			map[string]any{"role": "assistant", "content": "Zanzibar-fixture-7731 noted."},
		},
		"memories": []any{map[string]any{"content": "Memory-fixture-9034: jane.doe.fixture@example.com"}},
	}
	e.call(u.token, "commit-turn", turn, "X-Request-Id", prefix+"-commit", "Idempotency-Key", "Idem-fixture-6617").
		must(t, http.StatusCreated)
	e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "agent": "support-bot",
		"query": "Query-fixture-2290 jane.doe.fixture@example.com"}, "X-Request-Id", prefix+"-context").must(t, http.StatusOK)
	e.call(u.token, "recall", map[string]any{"query": "Query-fixture-2290 Zanzibar-fixture-7731"},
		"X-Request-Id", prefix+"-recall").must(t, http.StatusOK)
	e.call(u.token, "commit-turn", map[string]any{"session_id": sid.String(), "Field-fixture-3141": "jane.doe.fixture@example.com"},
		"X-Request-Id", prefix+"-400").must(t, http.StatusBadRequest)
	e.call("Zanzibar-fixture-7731.x.y", "recall", `{}`, "X-Request-Id", prefix+"-401").must(t, http.StatusUnauthorized)
	sig := u.token[strings.LastIndex(u.token, ".")+1:]
	return append([]string{u.token, sig, u.id.String(), e.serviceToken()[:40]}, telemetrySecrets...)
}

// Every function call is one server span named after the function, with its status and
// problem code, and child spans for its database work; request metrics count them; and no
// attribute, event or status holds content, PII, a token or an id of the user or tenant.
func TestTelemetrySpansHoldNoContent(t *testing.T) {
	// Not parallel: the providers are process-wide.
	e := newEnv(t, false)
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	tel := telemetry.Install(tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	defer tel.Shutdown(context.Background()) //nolint:errcheck

	secrets := telemetryTraffic(t, e, "rid-tel")
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}

	got := spans.GetSpans()
	byRID := map[string]tracetest.SpanStub{}
	for _, s := range got {
		checkNoSecrets(t, s.Name, secrets)
		checkNoSecrets(t, s.Status.Description, secrets)
		for _, a := range s.Attributes {
			checkNoSecrets(t, string(a.Key)+"="+a.Value.String(), secrets)
		}
		for _, ev := range s.Events {
			checkNoSecrets(t, ev.Name, secrets)
			for _, a := range ev.Attributes {
				checkNoSecrets(t, string(a.Key)+"="+a.Value.String(), secrets)
			}
		}
		if rid := spanAttr(s.Attributes, "agentmem.request_id"); strings.HasPrefix(rid, "rid-tel-") {
			byRID[rid] = s
		}
	}
	for _, c := range []struct {
		rid, name, code string
		status          int64
	}{
		{"rid-tel-commit", "agentmem.commit-turn", "", 201},
		{"rid-tel-context", "agentmem.get-context", "", 200},
		{"rid-tel-recall", "agentmem.recall", "", 200},
		{"rid-tel-400", "agentmem.commit-turn", "invalid_request", 400},
		{"rid-tel-401", "agentmem.recall", "unauthenticated", 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, ok := byRID[c.rid]
			if !ok {
				t.Errorf("no span for %s", c.rid)
				return
			}
			if s.Name != c.name || s.SpanKind.String() != "server" {
				t.Errorf("%s: span %q kind %s, want %q server", c.rid, s.Name, s.SpanKind, c.name)
			}
			if v, _ := attrValue(s.Attributes, "http.response.status_code"); v.AsInt64() != c.status {
				t.Errorf("%s: status attribute %v, want %d", c.rid, v.String(), c.status)
			}
			if code := spanAttr(s.Attributes, "agentmem.error_code"); code != c.code {
				t.Errorf("%s: error code %q, want %q", c.rid, code, c.code)
			}
		})
	}
	// commit-turn's database work is a child span of its server span.
	if commit, ok := byRID["rid-tel-commit"]; ok {
		children := 0
		for _, s := range got {
			if s.Parent.SpanID() == commit.SpanContext.SpanID() && strings.HasPrefix(s.Name, "store.") {
				children++
			}
		}
		if children == 0 {
			t.Errorf("commit-turn's span has no store child span")
		}
	}

	counted := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "agentmem.requests" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				fn, _ := dp.Attributes.Value("agentmem.function")
				st, _ := dp.Attributes.Value("http.response.status_code")
				counted[fn.AsString()+" "+st.String()] += dp.Value
				for _, kv := range dp.Attributes.ToSlice() {
					checkNoSecrets(t, string(kv.Key)+"="+kv.Value.String(), secrets)
				}
			}
		}
	}
	for _, k := range []string{"commit-turn 201", "get-context 200", "recall 200", "commit-turn 400", "recall 401"} {
		if counted[k] < 1 {
			t.Errorf("agentmem.requests has no count for %s: %v", k, counted)
		}
	}
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, Setup exports over OTLP/HTTP: a receiver decoding
// the protobuf requests gets the function spans and request metrics on Flush, and no byte of
// what it received is content, PII or a token.
func TestTelemetryExportsOverOTLPHTTP(t *testing.T) {
	// Not parallel: t.Setenv, and the providers are process-wide.
	var mu sync.Mutex
	var raw [][]byte
	var traces []*coltracepb.ExportTraceServiceRequest
	var metrics []*colmetricpb.ExportMetricsServiceRequest
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if r.Header.Get("Authorization") != "Basic collector-fixture" {
			http.Error(w, "no OTEL_EXPORTER_OTLP_HEADERS", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		raw = append(raw, body)
		switch r.URL.Path {
		case "/v1/traces":
			m := &coltracepb.ExportTraceServiceRequest{}
			if err := proto.Unmarshal(body, m); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			traces = append(traces, m)
			b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Write(b) //nolint:errcheck
		case "/v1/metrics":
			m := &colmetricpb.ExportMetricsServiceRequest{}
			if err := proto.Unmarshal(body, m); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			metrics = append(metrics, m)
			b, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Write(b) //nolint:errcheck
		default:
			http.NotFound(w, r)
		}
	}))
	defer recv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic collector-fixture")
	t.Setenv("OTEL_SERVICE_NAME", "agentmem-test")
	t.Setenv("OTEL_SDK_DISABLED", "")

	ctx := context.Background()
	tel, err := telemetry.Setup(ctx, os.Getenv)
	if err != nil || tel == nil {
		t.Fatalf("Setup with an endpoint: %v, %v", tel, err)
	}
	defer tel.Shutdown(ctx) //nolint:errcheck
	e := newEnv(t, false)
	secrets := telemetryTraffic(t, e, "rid-otlp")
	if err := tel.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, b := range raw {
		checkNoSecrets(t, string(b), secrets)
	}
	names := map[string]bool{}
	service := ""
	for _, req := range traces {
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.Resource.Attributes {
				if a.Key == "service.name" {
					service = a.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					for _, a := range s.Attributes {
						if a.Key == "agentmem.request_id" && strings.HasPrefix(a.Value.GetStringValue(), "rid-otlp-") {
							names[s.Name] = true
						}
					}
				}
			}
		}
	}
	if service != "agentmem-test" {
		t.Errorf("service.name %q, want OTEL_SERVICE_NAME", service)
	}
	for _, n := range []string{"agentmem.commit-turn", "agentmem.get-context", "agentmem.recall"} {
		if !names[n] {
			t.Errorf("the receiver got no span %s; got %v", n, names)
		}
	}
	requests := false
	for _, req := range metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					requests = requests || m.Name == "agentmem.requests"
				}
			}
		}
	}
	if !requests {
		t.Errorf("the receiver got no agentmem.requests metric")
	}
}

func checkNoSecrets(t *testing.T, exported string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(exported, s) {
			t.Errorf("exported telemetry contains %q", s)
		}
	}
}

func attrValue(attrs []attribute.KeyValue, key string) (attribute.Value, bool) {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

func spanAttr(attrs []attribute.KeyValue, key string) string {
	v, _ := attrValue(attrs, key)
	return v.AsString()
}

// benchUserStateGet is the benchmark loop of a small read through the whole handler h: a
// user-state get with token tok, which finds no state (404).
func benchUserStateGet(b *testing.B, h http.Handler, tok string) {
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/user-state", strings.NewReader(`{"op": "get"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkTelemetry measures what telemetry adds to a request: the same small read
// (user-state get) through the whole handler, with telemetry off (no endpoint configured) and
// on (an SDK provider whose batching exporter drops everything).
func BenchmarkTelemetry(b *testing.B) {
	db := testdb.New(b)
	c := envConfig{maxConns: 4, log: discardLog}
	_, srv := c.serve(b, c.openStore(b, db), io.Discard)
	h := srv.Mux()
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: uuid.NewString(), TTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	request := func(b *testing.B) {
		b.ReportAllocs()
		benchUserStateGet(b, h, tok)
	}

	b.Run("off", request)
	b.Run("on", func(b *testing.B) {
		tel := telemetry.Install(sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{})),
			sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
		defer tel.Shutdown(context.Background()) //nolint:errcheck
		request(b)
	})
}

type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }
