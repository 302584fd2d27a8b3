// Command process-jobs is the process-jobs function as an AWS Lambda (Function URL, API Gateway
// HTTP API, EventBridge schedule, and the asynchronous invocations of the functions that write
// jobs).
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
	parts := service.AllParts()
	service.RunLambda(parts, func(svc *service.Service) (http.Handler, lambdaentry.Options) {
		return svc.Server.ProcessJobs(), lambdaentry.Options{
			Scheduled: func(ctx context.Context, _ events.EventBridgeEvent) (any, error) {
				return svc.App.ScheduledProcessJobs(ctx)
			},
		}
	})
}
