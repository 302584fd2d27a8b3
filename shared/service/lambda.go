package service

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentmem/agentmem/shared/lambdaentry"
)

// ScheduledFunction is the function that also takes scheduled events.
const ScheduledFunction = "sweep-expired"

// RunLambda starts the named function as a Lambda: the service is built once per container
// (cold start) and its pool closed when the runtime sends SIGTERM.
func RunLambda(name string) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	svc, err := Start(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: start: %v\n", name, err)
		os.Exit(1)
	}
	go func() {
		<-ctx.Done()
		svc.Close()
	}()
	var opts lambdaentry.Options
	if name == ScheduledFunction {
		opts.Scheduled = func(ctx context.Context, _ events.EventBridgeEvent) (any, error) {
			return svc.Server.ScheduledSweep(ctx)
		}
	}
	lambdaentry.Start(svc.Server.Handler(name), opts)
}
