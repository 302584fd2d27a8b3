package service

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/agentmem/agentmem/shared/lambdaentry"
)

// Entry picks, from a started service, the one handler a Lambda binary serves and the options
// of its entry (a scheduled event, for the functions that take one).
type Entry func(svc *Service) (http.Handler, lambdaentry.Options)

// RunLambda starts a function as a Lambda: the service is built once per container (cold
// start), entry picks the function's handler, and the pool is closed when the runtime sends
// SIGTERM.
func RunLambda(entry Entry) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	svc, err := Start(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: start: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
	go func() {
		<-ctx.Done()
		svc.Close()
	}()
	h, opts := entry(svc)
	lambdaentry.Start(h, opts)
}
