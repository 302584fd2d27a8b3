// Command memories is the memories function as an AWS Lambda (Function URL, API Gateway HTTP API).
package main

import "github.com/agentmem/agentmem/shared/service"

func main() { service.RunLambda("memories") }
