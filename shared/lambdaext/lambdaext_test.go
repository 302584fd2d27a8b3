package lambdaext

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/agentmem/agentmem/shared/lambdaext/lambdaexttest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// registered is an extension registered with an Extensions API of its own, and the context to
// run it in, which ends with the test.
func registered(t *testing.T) (*lambdaexttest.API, *Extension, context.Context) {
	t.Helper()
	api, addr := lambdaexttest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e, err := Register(ctx, addr, quiet())
	if err != nil {
		t.Fatal(err)
	}
	return api, e, ctx
}

// After an invocation, the extension asks for its next event only once the invocation's
// handler has returned and the work after its answer is done: not after another invocation's
// handler, not while the work runs.
func TestTheEnvironmentWaitsForTheWorkAfterTheAnswer(t *testing.T) {
	api, e, ctx := registered(t)
	started, release := make(chan struct{}, 1), make(chan struct{})
	var returned atomic.Bool // r1's handler has returned
	afterAnswer := func(ctx context.Context) {
		if !returned.Load() {
			t.Error("the work after the answer was waited for before the handler returned")
		}
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			t.Error("the wait for the work after the answer ended before the work")
		}
	}
	if name := <-api.Registered; name != Name {
		t.Errorf("registered as %q, want %q", name, Name)
	}
	go e.Run(ctx, afterAnswer)
	if id := api.NextAsked(); id != lambdaexttest.Identifier {
		t.Fatalf("the first next call sent identifier %q, want ext-1", id)
	}

	handled := make(chan struct{})
	handler := Wrap(e, func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-handled
		returned.Store(true)
		return "ok", nil
	})
	answered := make(chan error, 1)
	go func() {
		_, err := handler(lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "r1"}), nil)
		answered <- err
	}()
	api.Invoke("r1", time.Now().Add(time.Minute))
	// A handler of another invocation returning does not end r1's wait: the work after the
	// answer does not start while r1's handler runs (given a tenth of a second to show it).
	e.handledBy("r0")
	select {
	case <-started:
		t.Fatal("the work after the answer was waited for while the handler ran")
	case <-time.After(100 * time.Millisecond):
	}
	api.NoNextYet("while r1's handler runs")
	close(handled)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the work after the answer was not waited for")
	}
	api.NoNextYet("while the work after the answer runs")
	close(release)
	if id := api.NextAsked(); id != lambdaexttest.Identifier {
		t.Errorf("next call sent identifier %q, want ext-1", id)
	}
}

// The wait after an invocation ends Margin before its deadline, the work unfinished: the
// extension then asks for its next event, so the invocation does not time out.
func TestTheWaitEndsBeforeTheDeadline(t *testing.T) {
	api, e, ctx := registered(t)
	ended := make(chan error, 1)
	var by time.Time // the work's context's deadline
	go e.Run(ctx, func(ctx context.Context) { by, _ = ctx.Deadline(); <-ctx.Done(); ended <- ctx.Err() })
	api.NextAsked()
	deadline := time.Now().Add(Margin + 200*time.Millisecond)
	api.Invoke("r1", deadline)
	e.handledBy("r1")
	api.NextAsked()
	if err := <-ended; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the work's context ended with %v, want the deadline", err)
	}
	if by.IsZero() || by.After(deadline.Add(-Margin)) {
		t.Errorf("the work's context ends at %v, want by %v (Margin before the invocation's deadline)", by, deadline.Add(-Margin))
	}
	// A handler that never returns: the wait for it ends at the deadline too, and the work
	// after the answer is not waited for.
	api.Invoke("r2", time.Now().Add(Margin+200*time.Millisecond))
	api.NextAsked()
	select {
	case err := <-ended:
		t.Errorf("the work after r2 was waited for (%v) though its handler never returned", err)
	default:
	}
}

// A failing Extensions API is reported (exit/error, so that Lambda resets the environment),
// and a registration Lambda refuses is an error for the caller, which then serves without.
func TestFailures(t *testing.T) {
	api, addr := lambdaexttest.New(t)
	e, err := Register(context.Background(), addr, quiet())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { e.Run(context.Background(), func(context.Context) {}); close(done) }()
	api.NextAsked()
	api.Fail()
	<-done
	select {
	case got := <-api.Exited:
		if got != lambdaexttest.Identifier+" Extension.NextFailed" {
			t.Errorf("exit/error: %q", got)
		}
	default:
		t.Error("a failed next call was not reported with exit/error")
	}

	api.Refuse.Store(true)
	if _, err := Register(context.Background(), addr, quiet()); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a refused registration: %v", err)
	}
	// An answer without an identifier.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	if _, err := Register(context.Background(), strings.TrimPrefix(srv.URL, "http://"), quiet()); err == nil ||
		!strings.Contains(err.Error(), idHeader) {
		t.Errorf("a registration answered without an identifier: %v", err)
	}
}

// An asynchronous invocation's retry comes with the same request id: the extension waits for
// the retry's handler too, not only for the first's.
func TestARetryIsWaitedForToo(t *testing.T) {
	api, e, ctx := registered(t)
	works := make(chan struct{}, 4)
	go e.Run(ctx, func(context.Context) { works <- struct{}{} })
	api.NextAsked()
	e.handledBy("r1")
	api.Invoke("r1", time.Now().Add(time.Minute))
	api.NextAsked()
	<-works
	api.Invoke("r1", time.Now().Add(time.Minute)) // the retry, its handler running
	select {
	case <-works:
		t.Fatal("the work after the retry's answer ran before its handler returned")
	case <-time.After(100 * time.Millisecond):
	}
	e.handledBy("r1")
	api.NextAsked()
	<-works
}
