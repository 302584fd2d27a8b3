// Command sweep-expired is the sweep-expired function as an AWS Lambda (Function URL, API Gateway HTTP API, EventBridge schedule).
package main

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentmem/agentmem/shared/lambdaentry"
	"github.com/agentmem/agentmem/shared/service"
)

func main() {
	// What its use cases use of the service, and no more (scripts/check-binaries.sh checks it).
	parts := service.Parts{Embedder: service.NewEmbedder}
	service.RunLambda(parts, func(svc *service.Service) (http.Handler, lambdaentry.Options) {
		return svc.Server.SweepExpired(), lambdaentry.Options{
			Scheduled: func(ctx context.Context, _ events.EventBridgeEvent) (any, error) {
				return svc.App.ScheduledSweep(ctx)
			},
		}
	})
}
