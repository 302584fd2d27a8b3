// Command sweep-expired is the sweep-expired function as an AWS Lambda (Function URL, API Gateway HTTP API, EventBridge schedule).
package main

import "github.com/agentmem/agentmem/shared/service"

func main() { service.RunLambda("sweep-expired") }
