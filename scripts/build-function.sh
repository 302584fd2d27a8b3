#!/usr/bin/env bash
# build-function.sh NAME OUT_DIR builds one function for Lambda (provided.al2023) into
# OUT_DIR/bootstrap: static (CGO_ENABLED=0), linux/$GOARCH (default arm64, as template.yaml's
# Architectures), without the go1.x RPC mode (-tags lambda.norpc), paths and symbols stripped.
#
# NAME is the function's folder (recall, active-session) or its template logical id without
# "Function" (Recall, ActiveSession), as `sam build` passes it through `make build-<LogicalId>`.
set -euo pipefail

[ $# -eq 2 ] && [ -n "$2" ] || { echo "usage: build-function.sh NAME OUT_DIR" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

# ActiveSession -> active-session; recall stays recall.
name=$(printf '%s' "$1" | sed -E 's/([a-z0-9])([A-Z])/\1-\2/g' | tr '[:upper:]' '[:lower:]')
[ -f "$ROOT/functions/$name/main.go" ] || { echo "build-function: no functions/$name (from $1)" >&2; exit 1; }

mkdir -p "$2"
cd "$ROOT"
GOOS=linux GOARCH=${GOARCH:-arm64} CGO_ENABLED=0 go build -tags lambda.norpc -trimpath \
	-ldflags='-s -w' -o "$2/bootstrap" "./functions/$name"
