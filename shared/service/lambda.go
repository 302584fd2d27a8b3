package service

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/lambdaentry"
	"github.com/agentmem/agentmem/shared/lambdaext"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// Entry picks, from a started service, the one handler a Lambda binary serves and the options
// of its entry (a scheduled event, for the functions that take one).
type Entry func(svc *Service) (http.Handler, lambdaentry.Options)

// RunLambda starts a function as a Lambda: the service is built once per container (cold
// start) with parts, what the function's use cases need, entry picks the function's handler,
// and the pool is closed when the runtime sends SIGTERM.
func RunLambda(parts Parts, entry Entry) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	svc, err := StartParts(ctx, parts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: start: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
	go func() {
		<-ctx.Done()
		svc.Close()
	}()
	h, opts := entry(svc)
	lambda.Start(withAfterAnswer(ctx, svc, lambdaentry.Handler(h, opts), opts.AfterAnswer))
}

// withAfterAnswer returns handler with what the invocation leaves for after its answer: the
// call that starts delivering the jobs it wrote (JOBS_NOTIFY=lambda:...), wait
// (lambdaentry.Options.AfterAnswer), then the export of its spans and metrics. All run after
// the answer, before Lambda may freeze the environment, under an internal Lambda extension
// (shared/lambdaext) registered here, before the runtime asks for the first invocation, and all
// end lambdaext.Margin before the invocation's deadline. If Lambda refuses the extension, the
// call and the export run before the answer, as they did, and the work of wait goes on when the
// environment next thaws. So does the export when it goes to a collector in the environment
// (telemetry.ToLocalCollector).
func withAfterAnswer(ctx context.Context, svc *Service, handler func(context.Context, json.RawMessage) (any, error),
	wait func(context.Context)) func(context.Context, json.RawMessage) (any, error) {
	exports := svc.Telemetry != nil && !telemetry.ToLocalCollector(os.Getenv)
	if wait == nil && !exports && svc.notifyLater == nil {
		return flushing(handler, svc)
	}
	after := func(ctx context.Context) {
		if svc.notifyLater != nil {
			svc.notifyLater.flush(ctx)
		}
		if wait != nil {
			wctx := ctx
			if d, ok := ctx.Deadline(); ok && exports {
				var cancel context.CancelFunc
				wctx, cancel = context.WithDeadline(ctx, d.Add(-flushBudget))
				defer cancel()
			}
			wait(wctx)
		}
		if exports {
			flush(ctx, svc)
		}
	}
	ext, err := lambdaext.Register(ctx, os.Getenv("AWS_LAMBDA_RUNTIME_API"), svc.Log)
	if err != nil {
		svc.Log.Warn("no Lambda extension: delivery is started and telemetry exported before each answer, and work after an answer waits for the next invocation or the scheduled run",
			"error", err.Error())
		return flushing(handler, svc)
	}
	if svc.notifyLater != nil {
		svc.notifyLater.deferring.Store(true)
	}
	go ext.Run(ctx, after)
	if !exports {
		handler = flushing(handler, svc) // the collector's export, if any, before the answer
	}
	return lambdaext.Wrap(ext, handler)
}

// flushBudget is the time the export after an answer keeps for itself.
const flushBudget = time.Second

// AfterAnswer is what a Lambda that commits turns waits for once an invocation has answered
// (lambdaentry.Options.AfterAnswer): the embedding of the turns' messages when they are
// embedded after the answer (MESSAGE_EMBEDDING=deferred), for at most EMBEDDING_TIMEOUT (one
// request to the provider: with the provider down, the messages are left to the scheduled run
// rather than holding every invocation to its deadline); nil when they are embedded before.
func (s *Service) AfterAnswer() func(context.Context) {
	if s.Config.MessageEmbedding != memory.MessageEmbeddingDeferred {
		return nil
	}
	budget := s.Config.EmbeddingTimeout
	return func(ctx context.Context) {
		if budget > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, budget)
			defer cancel()
		}
		s.App.WaitEmbeddedContext(ctx) //nolint:errcheck // what is left goes on later
	}
}

// afterAnswerFunctions are the functions whose use cases commit turns, and so may leave their
// messages to embed after the answer; TestAfterAnswerEntries keeps this list, their binaries
// and scripts/check-binaries.txt in step.
var afterAnswerFunctions = []string{"commit-turn", "mcp"}

// AfterAnswerFunctions names the functions that wait for their work after the answer, sorted.
func AfterAnswerFunctions() []string { return slices.Clone(afterAnswerFunctions) }

// flushing runs handler and then exports the invocation's spans and metrics before it
// returns, for a function without its Lambda extension: Lambda may then freeze the process as
// soon as the invocation has answered, so nothing exported later is certain to leave. Without
// telemetry it adds nothing.
func flushing(handler func(context.Context, json.RawMessage) (any, error), svc *Service) func(context.Context, json.RawMessage) (any, error) {
	if svc.Telemetry == nil {
		return handler
	}
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		out, err := handler(ctx, raw)
		flush(ctx, svc)
		return out, err
	}
}

// flush exports the spans and metrics ended so far. It gets up to a second, even when ctx is
// already done.
func flush(ctx context.Context, svc *Service) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := svc.Telemetry.Flush(fctx); err != nil {
		svc.Log.WarnContext(ctx, "telemetry flush", "error", err)
	}
}

// scheduledEntry is a function's scheduled entry (an EventBridge rule's event), on a service.
type scheduledEntry func(svc *Service) func(ctx context.Context, _ events.EventBridgeEvent) (any, error)

// scheduledEntries are the scheduled entries of the functions that take one, as the
// functions/<name> binaries wire them; TestScheduledEntries keeps this table, those binaries
// and template.yaml's Schedule events in step. It is a function, not a variable, so that a
// binary that never asks for it links neither entry.
func scheduledEntries() map[string]scheduledEntry {
	return map[string]scheduledEntry{
		"sweep-expired": func(svc *Service) func(ctx context.Context, _ events.EventBridgeEvent) (any, error) {
			return func(ctx context.Context, _ events.EventBridgeEvent) (any, error) { return svc.App.ScheduledSweep(ctx) }
		},
		"process-jobs": func(svc *Service) func(ctx context.Context, _ events.EventBridgeEvent) (any, error) {
			return func(ctx context.Context, _ events.EventBridgeEvent) (any, error) {
				return svc.App.ScheduledProcessJobs(ctx)
			}
		},
	}
}

// ScheduledFunctions names the functions that take a scheduled event, sorted.
func ScheduledFunctions() []string {
	return slices.Sorted(maps.Keys(scheduledEntries()))
}

// EntryByName is the Entry of the named function, for the container image, which holds every
// function and runs the one its configuration names (agentmem lambda NAME). The functions/<name>
// binaries wire their own Entry instead, so that each links only its handler.
func EntryByName(name string) (Entry, bool) {
	if !slices.Contains(httpapi.FunctionNames(), name) {
		return nil, false
	}
	return func(svc *Service) (http.Handler, lambdaentry.Options) {
		var opts lambdaentry.Options
		if scheduled, ok := scheduledEntries()[name]; ok {
			opts.Scheduled = scheduled(svc)
		}
		if slices.Contains(afterAnswerFunctions, name) {
			opts.AfterAnswer = svc.AfterAnswer()
		}
		for _, rt := range svc.Server.Routes() {
			if rt.Name == name {
				return rt.Handler, opts
			}
		}
		panic("service: no route for function " + name) // FunctionNames lists the routes
	}, true
}
