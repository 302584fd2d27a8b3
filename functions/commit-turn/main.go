// Command commit-turn is the commit-turn function as an AWS Lambda (Function URL, API Gateway HTTP API).
package main

import (
	"net/http"

	"github.com/agentmem/agentmem/shared/lambdaentry"
	"github.com/agentmem/agentmem/shared/service"
)

func main() {
	// What its use cases use of the service, and no more (scripts/check-binaries.sh checks it).
	parts := service.Parts{Embedder: service.NewEmbedder, Notifier: service.NewNotifier}
	service.RunLambda(parts, func(svc *service.Service) (http.Handler, lambdaentry.Options) {
		return svc.Server.CommitTurn(), lambdaentry.Options{AfterAnswer: svc.AfterAnswer()}
	})
}
