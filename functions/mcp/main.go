// Command mcp is the mcp function (an MCP server over Streamable HTTP) as an AWS Lambda (Function URL, API Gateway HTTP API).
package main

import (
	"net/http"

	"github.com/agentmem/agentmem/shared/lambdaentry"
	"github.com/agentmem/agentmem/shared/service"
)

func main() {
	service.RunLambda(func(svc *service.Service) (http.Handler, lambdaentry.Options) {
		return svc.Server.MCP(), lambdaentry.Options{}
	})
}
