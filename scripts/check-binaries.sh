#!/usr/bin/env bash
# check-binaries.sh: every functions/<name> binary links its own handler and no other function's.
#
# Each handler is an unexported method of httpapi.Server (commit-turn: commitTurn), reached from
# its main.go by plain code references; the linker drops what no reference reaches, so a binary
# that holds another function's handler is wired through something shared (a registry, a name
# lookup) again.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# handler NAME: the handler method of function NAME (kebab-case to lower camelCase).
handler() { awk -F- '{ s = $1; for (i = 2; i <= NF; i++) s = s toupper(substr($i, 1, 1)) substr($i, 2); print s }' <<<"$1"; }

names=()
for dir in functions/*/; do names+=("$(basename "$dir")"); done
failed=0
for fn in "${names[@]}"; do
	CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -o "$out/$fn" "./functions/$fn"
	syms=$(go tool nm "$out/$fn" | awk '{ print $NF }' | grep -F 'agentmem/shared/httpapi.(*Server).' || true)
	own=$(handler "$fn")
	if ! grep -qxF "github.com/agentmem/agentmem/shared/httpapi.(*Server).$own" <<<"$syms"; then
		echo "check-binaries: $fn does not link its handler $own" >&2
		failed=1
	fi
	for other in "${names[@]}"; do
		[ "$other" = "$fn" ] && continue
		o=$(handler "$other")
		if grep -qxF "github.com/agentmem/agentmem/shared/httpapi.(*Server).$o" <<<"$syms"; then
			echo "check-binaries: $fn links the handler of $other ($o)" >&2
			failed=1
		fi
	done
	printf '  %-16s %6s KiB, handler %s only\n' "$fn" "$(($(stat -c %s "$out/$fn") / 1024))" "$own"
done
[ "$failed" = 0 ] || exit 1
echo "check-binaries: each of ${#names[@]} functions links its own handler only"
