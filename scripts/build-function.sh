#!/usr/bin/env bash
# build-function.sh NAME OUT_DIR builds one function for Lambda (provided.al2023) into
# OUT_DIR/bootstrap: static (CGO_ENABLED=0), linux/$GOARCH (default arm64, as template.yaml's
# Architectures), paths and symbols stripped, with the build tags of TAGS below:
#
#   - lambda.norpc leaves out the go1.x runtime's RPC mode, which provided.al2023 never uses;
#   - grpcnotrace leaves out golang.org/x/net/trace, which grpc (imported by the OTLP exporters
#     for its status codes) links for its debug pages. Its templates call
#     reflect.Value.MethodByName, and a binary that can reach that keeps every exported method of
#     every type it puts in an interface: each binary would link all of store.Store and
#     go-redis's command set whatever its function uses (36.5 MB instead of 23).
#     scripts/check-binaries.sh fails when anything reaches such a call again.
#
# NAME is the function's folder (recall, active-session) or its template logical id without
# "Function" (Recall, ActiveSession), as `sam build` passes it through `make build-<LogicalId>`.
# EXTRA_LDFLAGS adds linker flags (check-binaries.sh: -dumpdep).
set -euo pipefail

# TAGS are the build tags of every Lambda binary (the container image and the bench's W6 use
# the same, see TestBuildTags).
TAGS=lambda.norpc,grpcnotrace

[ $# -eq 2 ] && [ -n "$2" ] || { echo "usage: build-function.sh NAME OUT_DIR" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

# ActiveSession -> active-session; recall stays recall.
name=$(printf '%s' "$1" | sed -E 's/([a-z0-9])([A-Z])/\1-\2/g' | tr '[:upper:]' '[:lower:]')
[ -f "$ROOT/functions/$name/main.go" ] || { echo "build-function: no functions/$name (from $1)" >&2; exit 1; }

mkdir -p "$2"
cd "$ROOT"
GOOS=linux GOARCH=${GOARCH:-arm64} CGO_ENABLED=0 go build -tags "$TAGS" -trimpath \
	-ldflags="-s -w${EXTRA_LDFLAGS:+ $EXTRA_LDFLAGS}" -o "$2/bootstrap" "./functions/$name"
