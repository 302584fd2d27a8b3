// Command mcp is the mcp function (an MCP server over Streamable HTTP) as an AWS Lambda (Function URL, API Gateway HTTP API).
package main

import (
	"net/http"

	"github.com/agentmem/agentmem/shared/lambdaentry"
	"github.com/agentmem/agentmem/shared/mcpserver"
	"github.com/agentmem/agentmem/shared/service"
)

func main() {
	// What its use cases use of the service, and no more (scripts/check-binaries.sh checks it):
	// its tools store, recall and read context, so they embed, notify delivery and use the
	// adapters (the get-context cache, Mem0's recall).
	parts := service.Parts{Embedder: service.NewEmbedder, Notifier: service.NewNotifier, Adapters: service.NewAdapters,
		MCP: mcpserver.Handler}
	service.RunLambda(parts, func(svc *service.Service) (http.Handler, lambdaentry.Options) {
		return svc.Server.MCP(), lambdaentry.Options{AfterAnswer: svc.AfterAnswer()}
	})
}
