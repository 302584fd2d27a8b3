// Package lambdaext is an internal AWS Lambda extension (the Extensions API, 2020-01-01): a
// goroutine of the function's own process that keeps its execution environment running once
// an invocation has answered, until the work the invocation left for after its answer is done.
//
// Lambda freezes an environment when its runtime and every extension registered in it have
// asked for their next event. The runtime asks as soon as it has posted the invocation's
// answer, and the caller has that answer then; this extension asks only once the invocation's
// handler has returned and the work after it is done, or when the invocation's deadline is
// near. That time is part of the invocation's duration, and the environment takes no other
// invocation meanwhile.
package lambdaext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

const (
	// Name is the extension's name in the Extensions API.
	Name = "agentmem-after-answer"
	// Margin is how long before an invocation's deadline the work after its answer must end
	// (the context Run gives it ends then): the work still left goes on when the environment
	// next thaws. Lambda's timeout covers the whole invocation, this work included.
	Margin = time.Second
	// registerTimeout bounds the registration, so that a Runtime API that does not answer
	// cannot hold the environment's Init (next calls are never bounded: they wait for events).
	registerTimeout = 5 * time.Second

	idHeader = "Lambda-Extension-Identifier"
)

// Extension is a registered extension. Its methods are safe for concurrent use.
type Extension struct {
	base   string // http://host:port/2020-01-01/extension
	id     string
	client *http.Client
	log    *slog.Logger

	mu      sync.Mutex
	handled string        // the request id of the invocation whose handler returned last
	wake    chan struct{} // signalled when handled changes
}

// Register registers an extension for INVOKE events with the Extensions API of runtimeAPI
// (AWS_LAMBDA_RUNTIME_API: host and port). It must return before the runtime first asks for
// an invocation: Lambda takes extensions only in an environment's Init phase, which ends then.
func Register(ctx context.Context, runtimeAPI string, log *slog.Logger) (*Extension, error) {
	// One handler at a time: with several invocations at once in an environment (Lambda
	// Managed Instances), the environment is not frozen between them, and one invocation's
	// wait would be another's.
	if n := lambdacontext.MaxConcurrency(); n > 1 {
		return nil, fmt.Errorf("the environment runs %d invocations at once", n)
	}
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	e := &Extension{base: "http://" + runtimeAPI + "/2020-01-01/extension", client: &http.Client{}, log: log,
		wake: make(chan struct{}, 1)}
	// An internal extension cannot take SHUTDOWN events: the runtime's process ends with it.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/register", strings.NewReader(`{"events":["INVOKE"]}`))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Lambda-Extension-Name", Name)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("register the Lambda extension: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16)) //nolint:errcheck // the answer's body says nothing this needs
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("register the Lambda extension: %s", resp.Status)
	}
	if e.id = resp.Header.Get(idHeader); e.id == "" {
		return nil, errors.New("register the Lambda extension: the answer has no " + idHeader)
	}
	return e, nil
}

// Wrap returns handler, telling the extension when it has returned.
func Wrap[E, R any](e *Extension, handler func(context.Context, E) (R, error)) func(context.Context, E) (R, error) {
	return func(ctx context.Context, event E) (R, error) {
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			defer e.handledBy(lc.AwsRequestID)
		}
		return handler(ctx, event)
	}
}

func (e *Extension) handledBy(requestID string) {
	e.mu.Lock()
	e.handled = requestID
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// event is an event of the Extensions API's next.
type event struct {
	EventType  string `json:"eventType"`
	RequestID  string `json:"requestId"`
	DeadlineMs int64  `json:"deadlineMs"`
}

// Run takes Lambda's events until ctx ends. After each invocation it waits until the
// invocation's handler has returned (Wrap), then runs afterAnswer, and then asks for the next
// event. Both end Margin before the invocation's deadline: afterAnswer's context ends then, and
// afterAnswer must return by then. If the Extensions API fails, Run reports it (exit/error:
// Lambda then resets the environment) and returns.
func (e *Extension) Run(ctx context.Context, afterAnswer func(context.Context)) {
	for {
		ev, err := e.next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				e.log.Error("Lambda extension: the next event", "error", err.Error())
				e.exitError(ctx)
			}
			return
		}
		if ev.EventType != "INVOKE" {
			continue
		}
		wctx, cancel := context.WithDeadline(ctx, time.UnixMilli(ev.DeadlineMs).Add(-Margin))
		if e.waitHandled(wctx, ev.RequestID) {
			afterAnswer(wctx)
		}
		cancel()
	}
}

// waitHandled reports whether the handler of invocation requestID returned before ctx ended.
func (e *Extension) waitHandled(ctx context.Context, requestID string) bool {
	for {
		e.mu.Lock()
		done := e.handled == requestID
		if done {
			// an asynchronous invocation's retry has the same request id, and may come to
			// this environment
			e.handled = ""
		}
		e.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-e.wake:
		case <-ctx.Done():
			return false
		}
	}
}

func (e *Extension) next(ctx context.Context) (event, error) {
	var ev event
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/event/next", nil)
	if err != nil {
		return ev, err
	}
	req.Header.Set(idHeader, e.id)
	resp, err := e.client.Do(req)
	if err != nil {
		return ev, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ev, errors.New(resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ev); err != nil {
		return ev, fmt.Errorf("the event: %w", err)
	}
	return ev, nil
}

// exitError tells Lambda the extension failed (best effort: the process goes on serving).
func (e *Extension) exitError(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/exit/error", strings.NewReader(`{}`))
	if err != nil {
		return
	}
	req.Header.Set(idHeader, e.id)
	req.Header.Set("Lambda-Extension-Function-Error-Type", "Extension.NextFailed")
	if resp, err := e.client.Do(req); err == nil {
		resp.Body.Close()
	}
}
