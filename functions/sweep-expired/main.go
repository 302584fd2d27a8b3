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
	service.RunLambda(func(svc *service.Service) (http.Handler, lambdaentry.Options) {
		return svc.Server.SweepExpired(), lambdaentry.Options{
			Scheduled: func(ctx context.Context, _ events.EventBridgeEvent) (any, error) {
				return svc.App.ScheduledSweep(ctx)
			},
		}
	})
}
