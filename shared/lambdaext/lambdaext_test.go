package lambdaext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// extensionsAPI is Lambda's Extensions API (2020-01-01) as an extension sees it: register, a
// next that hands out the events a test queues, and exit/error.
type extensionsAPI struct {
	t        *testing.T
	events   chan event  // handed to the extension's next calls, in order
	asked    chan string // the identifier sent with each next call, as it arrives
	exited   chan string // the identifier and error type of each exit/error
	register func(w http.ResponseWriter, r *http.Request)
}

func newExtensionsAPI(t *testing.T) (*extensionsAPI, string) {
	api := &extensionsAPI{t: t, events: make(chan event, 4), asked: make(chan string, 8), exited: make(chan string, 2)}
	api.register = func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Events []string `json:"events"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.Header.Get("Lambda-Extension-Name") != Name ||
			len(body.Events) != 1 || body.Events[0] != "INVOKE" {
			t.Errorf("register: name %q, events %v, %v", r.Header.Get("Lambda-Extension-Name"), body.Events, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set(idHeader, "ext-1")
		fmt.Fprint(w, `{"functionName":"agentmem-commit-turn","functionVersion":"$LATEST","handler":"bootstrap"}`)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2020-01-01/extension/register", func(w http.ResponseWriter, r *http.Request) { api.register(w, r) })
	mux.HandleFunc("GET /2020-01-01/extension/event/next", func(w http.ResponseWriter, r *http.Request) {
		api.asked <- r.Header.Get(idHeader)
		select {
		case ev := <-api.events:
			if ev.EventType == "FAIL" {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			json.NewEncoder(w).Encode(ev) //nolint:errcheck
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /2020-01-01/extension/exit/error", func(w http.ResponseWriter, r *http.Request) {
		api.exited <- r.Header.Get(idHeader) + " " + r.Header.Get("Lambda-Extension-Function-Error-Type")
		w.WriteHeader(http.StatusAccepted)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return api, strings.TrimPrefix(srv.URL, "http://")
}

// nextAsked returns the identifier of the extension's next call, failing the test if none
// comes within a minute.
func (api *extensionsAPI) nextAsked() string {
	api.t.Helper()
	select {
	case id := <-api.asked:
		return id
	case <-time.After(time.Minute):
		api.t.Fatal("the extension did not ask for its next event")
		return ""
	}
}

// noNextYet fails the test if the extension has asked for its next event.
func (api *extensionsAPI) noNextYet(when string) {
	api.t.Helper()
	select {
	case <-api.asked:
		api.t.Fatalf("the extension asked for its next event %s", when)
	default:
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func invoke(requestID string, deadline time.Time) event {
	return event{EventType: "INVOKE", RequestID: requestID, DeadlineMs: deadline.UnixMilli()}
}

// After an invocation, the extension asks for its next event only once the invocation's
// handler has returned and the work after its answer is done: not after another invocation's
// handler, not while the work runs.
func TestTheEnvironmentWaitsForTheWorkAfterTheAnswer(t *testing.T) {
	api, addr := newExtensionsAPI(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, err := Register(ctx, addr, quiet())
	if err != nil {
		t.Fatal(err)
	}
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
	go e.Run(ctx, afterAnswer)
	if id := api.nextAsked(); id != "ext-1" {
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
	api.events <- invoke("r1", time.Now().Add(time.Minute))
	// A handler of another invocation returning does not end r1's wait: the work after the
	// answer does not start while r1's handler runs (given a tenth of a second to show it).
	e.handledBy("r0")
	select {
	case <-started:
		t.Fatal("the work after the answer was waited for while the handler ran")
	case <-time.After(100 * time.Millisecond):
	}
	api.noNextYet("while r1's handler runs")
	close(handled)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the work after the answer was not waited for")
	}
	api.noNextYet("while the work after the answer runs")
	close(release)
	if id := api.nextAsked(); id != "ext-1" {
		t.Errorf("next call sent identifier %q, want ext-1", id)
	}
}

// The wait after an invocation ends Margin before its deadline, the work unfinished: the
// extension then asks for its next event, so the invocation does not time out.
func TestTheWaitEndsBeforeTheDeadline(t *testing.T) {
	api, addr := newExtensionsAPI(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, err := Register(ctx, addr, quiet())
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go e.Run(ctx, func(ctx context.Context) { <-ctx.Done(); ended <- ctx.Err() })
	api.nextAsked()
	api.events <- invoke("r1", time.Now().Add(Margin+200*time.Millisecond))
	e.handledBy("r1")
	api.nextAsked()
	if err := <-ended; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the work's context ended with %v, want the deadline", err)
	}
	// A handler that never returns: the wait for it ends at the deadline too, and the work
	// after the answer is not waited for.
	api.events <- invoke("r2", time.Now().Add(Margin+200*time.Millisecond))
	api.nextAsked()
	select {
	case err := <-ended:
		t.Errorf("the work after r2 was waited for (%v) though its handler never returned", err)
	default:
	}
}

// A failing Extensions API is reported (exit/error, so that Lambda resets the environment),
// and a registration Lambda refuses is an error for the caller, which then serves without.
func TestFailures(t *testing.T) {
	api, addr := newExtensionsAPI(t)
	e, err := Register(context.Background(), addr, quiet())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { e.Run(context.Background(), func(context.Context) {}); close(done) }()
	api.nextAsked()
	api.events <- event{EventType: "FAIL"}
	<-done
	select {
	case got := <-api.exited:
		if got != "ext-1 Extension.NextFailed" {
			t.Errorf("exit/error: %q", got)
		}
	default:
		t.Error("a failed next call was not reported with exit/error")
	}

	api.register = func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"errorMessage":"Extension registration closed already","errorType":"Extension.RegistrationClosed"}`)
	}
	if _, err := Register(context.Background(), addr, quiet()); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a refused registration: %v", err)
	}
	api.register = func(w http.ResponseWriter, r *http.Request) {}
	if _, err := Register(context.Background(), addr, quiet()); err == nil || !strings.Contains(err.Error(), idHeader) {
		t.Errorf("a registration answered without an identifier: %v", err)
	}
}
