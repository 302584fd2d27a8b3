package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/lambdaentry"
)

// isoEvent reads a saved event from testdata.
func isoEvent(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// isoHTTPEvent fills a saved HTTP event (payload 2.0) with a token, a body and, behind API
// Gateway, the route of fn.
func isoHTTPEvent(t *testing.T, name, fn, token string, body any, base64Body bool) json.RawMessage {
	t.Helper()
	ev := isoEvent(t, name)
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	h := obj(ev["headers"])
	h["authorization"] = "Bearer " + token
	h["content-length"] = strconv.Itoa(len(raw))
	ev["body"] = string(raw)
	ev["isBase64Encoded"] = base64Body
	if base64Body {
		ev["body"] = base64.StdEncoding.EncodeToString(raw)
	}
	if ev["rawPath"] != "/" { // API Gateway routes by path; a Function URL has only "/"
		ev["rawPath"] = "/v1/" + fn
		ev["routeKey"] = "POST /v1/" + fn
		rc := obj(ev["requestContext"])
		rc["routeKey"] = "POST /v1/" + fn
		obj(rc["http"])["path"] = "/v1/" + fn
	}
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// isoLambdaCtx is an invocation context with a deadline, as Lambda gives.
func isoLambdaCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// isoInvoke runs fn's handler as Lambda would on the event and checks what every answer
// carries: the request id of the event, CORS for its origin, a JSON content type.
func isoInvoke(t *testing.T, e *env, fn string, event json.RawMessage, wantStatus int) (lambdaentry.HTTPResponse, map[string]any) {
	t.Helper()
	out, err := lambdaentry.Handler(routeHandler(e.srv, fn), lambdaentry.Options{})(isoLambdaCtx(t, 30*time.Second), event)
	if err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	res, ok := out.(lambdaentry.HTTPResponse)
	if !ok {
		t.Fatalf("%s: answer of type %T", fn, out)
	}
	if res.StatusCode != wantStatus {
		t.Fatalf("%s: status %d, want %d: %s", fn, res.StatusCode, wantStatus, res.Body)
	}
	var ev map[string]any
	_ = json.Unmarshal(event, &ev)
	hdr := obj(ev["headers"])
	if got, want := res.Headers["X-Request-Id"], str(hdr["x-request-id"]); got != want || want == "" {
		t.Errorf("%s: X-Request-Id %q, want %q", fn, got, want)
	}
	if got := res.Headers["Access-Control-Allow-Origin"]; got != str(hdr["origin"]) || got == "" {
		t.Errorf("%s: Access-Control-Allow-Origin %q for origin %q", fn, got, hdr["origin"])
	}
	var body map[string]any
	if res.StatusCode != http.StatusNoContent {
		wantCT := "application/json"
		if res.StatusCode >= 400 {
			wantCT = "application/problem+json"
		}
		if res.Headers["Content-Type"] != wantCT || res.IsBase64Encoded {
			t.Errorf("%s: Content-Type %q (base64 %v), want %s", fn, res.Headers["Content-Type"], res.IsBase64Encoded, wantCT)
		}
		if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
			t.Fatalf("%s: body %q: %v", fn, res.Body, err)
		}
	}
	return res, body
}

// Each function answers through the Lambda entry point from a Function URL and from API
// Gateway's HTTP API, as it does over HTTP.
func TestLambdaHTTPEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	for _, name := range []string{"lambda-function-url.json", "lambda-http-api-v2.json"} {
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			t.Parallel()
			e := *e
			e.t = t
			u := e.newUser("")
			ev := func(fn, token string, body any) json.RawMessage {
				return isoHTTPEvent(t, name, fn, token, body, fn == "commit-turn" && name == "lambda-http-api-v2.json")
			}

			_, b := isoInvoke(t, &e, "active-session", ev("active-session", u.token, map[string]any{"agent": "lambda-bot", "mode": "new"}), http.StatusCreated)
			sid := str(b["session_id"])
			if b["created"] != true || b["agent"] != "lambda-bot" {
				t.Fatalf("active-session: %v", b)
			}

			turn := map[string]any{"session_id": sid, "agent": "lambda-bot",
				"messages": []any{map[string]any{"role": "user", "content": "Grüße, I grow kiwi fruit."}},
				"memories": []any{map[string]any{"content": "The user grows kiwi fruit."}}}
			res, b := isoInvoke(t, &e, "commit-turn", ev("commit-turn", u.token, turn), http.StatusCreated)
			if m := list(b["messages"]); len(m) != 1 || obj(m[0])["seq"] != float64(1) || len(list(b["memories"])) != 1 {
				t.Errorf("commit-turn: %s", res.Body)
			}
			// The saved events carry an Idempotency-Key: the same event again is a replay.
			res, b2 := isoInvoke(t, &e, "commit-turn", ev("commit-turn", u.token, turn), http.StatusCreated)
			if res.Headers["Idempotent-Replayed"] != "true" || str(obj(list(b2["messages"])[0])["id"]) != str(obj(list(b["messages"])[0])["id"]) {
				t.Errorf("retried commit-turn: %v %s", res.Headers, res.Body)
			}
			if n := e.count("messages", "session_id = $1", uuid.MustParse(sid)); n != 1 {
				t.Errorf("%d messages stored, want 1", n)
			}

			_, b = isoInvoke(t, &e, "get-context", ev("get-context", u.token, map[string]any{"session_id": sid, "agent": "lambda-bot", "query": "kiwi"}), http.StatusOK)
			if m := list(b["messages"]); len(m) != 1 || obj(m[0])["content"] != "Grüße, I grow kiwi fruit." || len(list(b["memories"])) != 1 {
				t.Errorf("get-context: %v", b)
			}

			_, b = isoInvoke(t, &e, "recall", ev("recall", u.token, map[string]any{"query": "kiwi", "agent": "lambda-bot"}), http.StatusOK)
			if r := list(b["results"]); len(r) != 1 || obj(r[0])["content"] != "The user grows kiwi fruit." {
				t.Errorf("recall: %v", b)
			}

			_, b = isoInvoke(t, &e, "sweep-expired", ev("sweep-expired", e.serviceToken(), map[string]any{"dry_run": true}), http.StatusOK)
			for _, k := range []string{"messages", "memories", "sessions", "idempotency_keys"} {
				if _, ok := obj(b["deleted"])[k].(float64); !ok {
					t.Errorf("sweep-expired: deleted.%s missing: %v", k, b)
				}
			}
			_, b = isoInvoke(t, &e, "sweep-expired", ev("sweep-expired", u.token, map[string]any{}), http.StatusForbidden)
			if b["code"] != "forbidden" {
				t.Errorf("user sweep: %v", b)
			}

			// Errors carry the same headers.
			for _, fn := range isoFunctions {
				_, b = isoInvoke(t, &e, fn, ev(fn, "not.a.token", map[string]any{}), http.StatusUnauthorized)
				if b["code"] != "unauthenticated" || b["request_id"] == "" {
					t.Errorf("%s with a bad token: %v", fn, b)
				}
			}
		})
	}
}

func TestLambdaPreflight(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	raw, err := json.Marshal(isoEvent(t, "lambda-http-api-v2-preflight.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := lambdaentry.Handler(routeHandler(e.srv, "recall"), lambdaentry.Options{})(isoLambdaCtx(t, 5*time.Second), raw)
	if err != nil {
		t.Fatal(err)
	}
	res := out.(lambdaentry.HTTPResponse)
	if res.StatusCode != http.StatusNoContent || res.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" ||
		!isoHasTokens(res.Headers["Access-Control-Allow-Headers"], "Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id") ||
		res.Headers["X-Request-Id"] == "" {
		t.Errorf("preflight: %d %v", res.StatusCode, res.Headers)
	}
}

// isoScheduled is the wiring of shared/service for the scheduled function.
func isoScheduled(e *env) lambdaentry.Options {
	return lambdaentry.Options{Scheduled: func(ctx context.Context, _ events.EventBridgeEvent) (any, error) {
		return e.app.ScheduledSweep(ctx)
	}}
}

// The scheduler's event sweeps with the contract's defaults and returns the counts.
func TestLambdaScheduledSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	db := isoAdmin(t, e)
	want, kept := isoSweepSeed(t, e, db)
	before := isoTotals(db)
	event, err := json.Marshal(isoEvent(t, "lambda-eventbridge-scheduled.json"))
	if err != nil {
		t.Fatal(err)
	}

	out, err := lambdaentry.Handler(routeHandler(e.srv, "sweep-expired"), isoScheduled(e))(isoLambdaCtx(t, 30*time.Second), event)
	if err != nil {
		t.Fatalf("scheduled sweep: %v", err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var got isoSweepAnswer
	if err := json.Unmarshal(raw, &got); err != nil || got.More == nil || got.DurationMS == nil {
		t.Fatalf("scheduled sweep answered %s (%v)", raw, err)
	}
	if got.Deleted != want || *got.More || got.Batches < 1 {
		t.Errorf("scheduled sweep: %s, want deleted %+v", raw, want)
	}
	if gone := before.minus(isoTotals(db)); gone != want {
		t.Errorf("%+v rows gone, want %+v", gone, want)
	}
	for _, s := range kept {
		if db.count("sessions", "id = $1", s) != 1 {
			t.Errorf("kept session %s was swept", s)
		}
	}
	// The same function still serves HTTP, with its rules.
	u := e.newUser("")
	_, b := isoInvoke(t, e, "sweep-expired", isoHTTPEvent(t, "lambda-function-url.json", "sweep-expired", u.token, map[string]any{}, false), http.StatusForbidden)
	if b["code"] != "forbidden" {
		t.Errorf("user sweep through the scheduled function: %v", b)
	}
}

// An invocation deadline shorter than the sweep's budget ends the sweep in time to answer:
// with expired rows left over, the answer says more: true and comes before the deadline.
func TestLambdaSweepBoundedByDeadline(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: sweeps a large seed against an invocation deadline")
	}
	e := newEnv(t, true)
	db := isoAdmin(t, e)
	const expired = 50_000
	sid, uid := uuid.New(), uuid.New()
	db.exec(`insert into agentmem.sessions (id, user_id, agent, expires_at)
		values ($1, $2, 'default', now() + interval '1 hour')`, sid, uid)
	db.exec(`insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
		select $1, g, gen_random_uuid(), $2, 'default', 'user', 'expired ' || g, 1, now() - interval '1 minute'
		from generate_series(1, $3::int) g`, sid, uid, expired)

	// Batches of 5 rows: finishing would take 10,000 statements in under two seconds.
	const deadline = 2 * time.Second
	ctx := isoLambdaCtx(t, deadline)
	end, _ := ctx.Deadline()
	event := isoHTTPEvent(t, "lambda-function-url.json", "sweep-expired", e.serviceToken(), map[string]any{"batch_size": 5}, false)
	out, err := lambdaentry.Handler(routeHandler(e.srv, "sweep-expired"), lambdaentry.Options{})(ctx, event)
	returned := time.Now()
	if err != nil {
		t.Fatalf("sweep under a short deadline: %v", err)
	}
	if !returned.Before(end) {
		t.Errorf("the sweep answered %v after the invocation's deadline", returned.Sub(end))
	}
	res, ok := out.(lambdaentry.HTTPResponse)
	if !ok || res.StatusCode != http.StatusOK {
		t.Fatalf("sweep under a short deadline: %#v", out)
	}
	var got isoSweepAnswer
	if err := json.Unmarshal([]byte(res.Body), &got); err != nil || got.More == nil {
		t.Fatalf("sweep answered %s (%v)", res.Body, err)
	}
	if !*got.More || got.Deleted.Messages == 0 || got.Deleted.Messages >= expired {
		t.Errorf("sweep under a short deadline: %s; want more: true and some of %d messages deleted", res.Body, expired)
	}
	if left := db.count("messages", "session_id = $1", sid); int64(left) != expired-got.Deleted.Messages {
		t.Errorf("%d messages left, want %d", left, expired-got.Deleted.Messages)
	}
}

// A scheduled event reaches only a function wired for it.
func TestLambdaScheduledEventRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	event, err := json.Marshal(isoEvent(t, "lambda-eventbridge-scheduled.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range isoFunctions {
		out, err := lambdaentry.Handler(routeHandler(e.srv, fn), lambdaentry.Options{})(isoLambdaCtx(t, 5*time.Second), event)
		if !errors.Is(err, lambdaentry.ErrUnsupportedEvent) {
			t.Errorf("%s without Scheduled: %v, %v; want ErrUnsupportedEvent", fn, out, err)
		}
	}
	out, err := lambdaentry.Handler(routeHandler(e.srv, "sweep-expired"), isoScheduled(e))(isoLambdaCtx(t, 5*time.Second), json.RawMessage(`{"source":"aws.events","detail-type":"Object Created"}`))
	if !errors.Is(err, lambdaentry.ErrUnsupportedEvent) {
		t.Errorf("another EventBridge event: %v, %v; want ErrUnsupportedEvent", out, err)
	}
}

// routeHandler is the handler Routes gives the named function, as its Lambda binary serves it.
func routeHandler(srv *httpapi.Server, name string) http.Handler {
	for _, rt := range srv.Routes() {
		if rt.Name == name {
			return rt.Handler
		}
	}
	panic("no function " + name)
}
