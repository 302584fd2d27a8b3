// Command mcp is the mcp function (an MCP server over Streamable HTTP) as an AWS Lambda (Function URL, API Gateway HTTP API).
package main

import (
	"net/http"

	"github.com/agentmem/agentmem/shared/lambdaentry"
	"github.com/agentmem/agentmem/shared/service"
)

func main() {
	// Its tools run the use cases of commit-turn, memories, recall and get-context, and no more
	// (scripts/check-binaries.sh checks it).
	parts := service.Parts{Embedder: service.NewEmbedder, Notifier: service.NewNotifier, Adapters: service.NewAdapters}
	service.RunLambda(parts, func(svc *service.Service) (http.Handler, lambdaentry.Options) {
		return svc.Server.MCP(), lambdaentry.Options{}
	})
}
