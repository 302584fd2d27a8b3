#!/usr/bin/env bash
# check-binaries.sh [-update]: every functions/<name> binary, built as Lambda runs it
# (scripts/build-function.sh: linux/arm64, stripped), holds its own function and nothing more, at
# every layer:
#
#   - nothing in it can look a method up by name at run time (reflect.Value.MethodByName with a
#     name the compiler cannot see, reflect.Value.Method, reflect.Type.Method). The linker marks
#     such a caller <ReflectMethod>; if one is reachable, it keeps every exported method of every
#     type stored in an interface, and each binary links the whole store and go-redis again.
#   - it links its own HTTP handler (an unexported method of httpapi.Server; commit-turn:
#     commitTurn) and no other function's;
#   - the exported methods of app.App (the use cases) and store.Store it links are exactly those
#     scripts/check-binaries.txt lists for it: what its use cases reach;
#   - it builds a part of the service (service.Parts: the embedder, the chat model, the notifier,
#     the adapters) exactly when its use cases reach what uses that part, as the "part" lines of
#     check-binaries.txt say: a function that needs a part has it, and the others leave it and
#     its SDK out;
#   - it is no larger than the ceiling check-binaries.txt gives it.
#
# What the linker keeps comes from its own account (go build -ldflags=-dumpdep: every reachable
# symbol, with the edge that reached it), not from the symbol table, so methods are counted
# whether or not the binary is stripped. -update writes the app and store lines of
# check-binaries.txt from the binaries (review the difference: a new line is a new dependency);
# it never raises a ceiling, except to give a new function one (its size plus 5%).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

update=0
case "${1:-}" in
-update) update=1 ;;
"") ;;
*) echo "usage: check-binaries.sh [-update]" >&2; exit 2 ;;
esac

LIST=scripts/check-binaries.txt
MOD=github.com/agentmem/agentmem
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# handler NAME: the handler method of function NAME (kebab-case to lower camelCase).
handler() { awk -F- '{ s = $1; for (i = 2; i <= NF; i++) s = s toupper(substr($i, 1, 1)) substr($i, 2); print s }' <<<"$1"; }

# listed FN KIND: the words of line "FN KIND ..." of the list.
listed() { awk -v fn="$1" -v kind="$2" '$1 == fn && $2 == kind { for (i = 3; i <= NF; i++) print $i }' "$LIST" 2>/dev/null | sort; }

# methods FILE TYPE: the exported methods of TYPE ("app.(*App)") among the symbols in FILE.
methods() {
	awk -v pre="$MOD/shared/$2." 'index($0, pre) == 1 { m = substr($0, length(pre) + 1); if (m ~ /^[A-Z][A-Za-z0-9_]*$/) print m }' "$1" | sort -u
}

# edges FILE: the linker's edges in FILE (go build -ldflags=-dumpdep prints "FROM [<Flags>] ->
# TO [<Flags>]" for each symbol it keeps) as FROM, TO and 1 when TO is flagged <ReflectMethod>.
edges() {
	awk -F' -> ' 'NF == 2 { sub(/ <.*/, "", $1); to = $2; sub(/ <.*/, "", $2); print $1 "\t" $2 "\t" (to ~ /<ReflectMethod>/) }' "$1"
}

names=()
for dir in functions/*/; do names+=("$(basename "$dir")"); done
failed=0
fail() { echo "check-binaries: $*" >&2; failed=1; }
newlist="$out/list"
: >"$newlist"
for fn in "${names[@]}"; do
	EXTRA_LDFLAGS=-dumpdep scripts/build-function.sh "$fn" "$out/$fn" 2>"$out/$fn.dep" || {
		grep -v -- ' -> ' "$out/$fn.dep" >&2
		exit 1
	}
	edges "$out/$fn.dep" >"$out/$fn.edges"
	# Every symbol the linker kept, without its flags.
	cut -f2 "$out/$fn.edges" | sort -u >"$out/$fn.syms"
	size=$(($(stat -c %s "$out/$fn/bootstrap") / 1024))

	# Run-time method look-ups: the chain from main to each, so that it can be cut.
	if awk -F'\t' '$3 == 1 { found = 1 } END { exit !found }' "$out/$fn.edges"; then
		# A method kept for its type (an edge from type:...) is kept because of another.
		awk -F'\t' '!($2 in p) { p[$2] = $1 } $3 == 1 { r[$2] = 1 }
			END { for (s in r) { chain = s; for (i = 0; i < 64 && (s in p); i++) { s = p[s]; chain = s " -> " chain }
				all = all "  " chain "\n"; if (chain !~ / -> type:/) { print "  " chain; n++ } }
				if (!n) printf "%s", all }' "$out/$fn.edges" >"$out/$fn.reflect"
		fail "$fn reaches a method look-up by name, so it keeps every exported method of every type in an interface:"
		cat "$out/$fn.reflect" >&2
	fi

	own=$(handler "$fn")
	grep -qxF "$MOD/shared/httpapi.(*Server).$own" "$out/$fn.syms" || fail "$fn does not link its handler $own"
	for other in "${names[@]}"; do
		[ "$other" = "$fn" ] && continue
		o=$(handler "$other")
		if grep -qxF "$MOD/shared/httpapi.(*Server).$o" "$out/$fn.syms"; then
			fail "$fn links the handler of $other ($o)"
		fi
	done

	for layer in app store; do
		case $layer in app) typ='app.(*App)' ;; store) typ='store.(*Store)' ;; esac
		methods "$out/$fn.syms" "$typ" >"$out/$fn.$layer"
		printf '%s %s %s\n' "$fn" "$layer" "$(paste -sd' ' "$out/$fn.$layer")" >>"$newlist"
		[ "$update" = 1 ] && continue
		if ! listed "$fn" "$layer" | diff -q - "$out/$fn.$layer" >/dev/null; then
			fail "$fn links other $layer methods than $LIST lists (+ linked, not listed; - listed, not linked):"
			listed "$fn" "$layer" | diff - "$out/$fn.$layer" | sed -n 's/^> /  + /p; s/^< /  - /p' >&2
		fi
	done

	# part CONSTRUCTOR CONSUMER...: built exactly when a consumer is linked.
	while read -r _ ctor consumers; do
		has=0
		grep -qxF "$MOD/shared/$ctor" "$out/$fn.syms" && has=1
		used=
		for c in $consumers; do
			if grep -qxF "$MOD/shared/$c" "$out/$fn.syms"; then
				used=${used:-$c}
				printf '%s\n' "$c" >>"$out/consumers"
			fi
		done
		if [ -n "$used" ] && [ "$has" = 0 ]; then
			fail "$fn reaches $used, but its main.go does not build $ctor (service.Parts)"
		elif [ -z "$used" ] && [ "$has" = 1 ]; then
			fail "$fn builds $ctor (service.Parts), which none of its use cases uses: leave it out"
		fi
	done < <(awk '$1 == "part"' "$LIST")

	max=$(listed "$fn" max)
	if [ -z "$max" ]; then
		max=$(((size * 105 / 100 + 255) / 256 * 256))
		[ "$update" = 1 ] || fail "$fn has no size ceiling in $LIST (add: $fn max $max)"
	elif [ "$size" -gt "$max" ]; then
		fail "$fn is $size KiB, over its ceiling of $max KiB in $LIST"
	fi
	printf '%s max %s\n' "$fn" "$max" >>"$newlist"
	printf '  %-16s %6s KiB (ceiling %s), %2s app and %2s store methods, handler %s only\n' "$fn" "$size" "$max" \
		"$(grep -c . "$out/$fn.app" || true)" "$(grep -c . "$out/$fn.store" || true)" "$own"
done

# A consumer no binary links was renamed or inlined: the part lines must name another.
for c in $(awk '$1 == "part" { for (i = 3; i <= NF; i++) print $i }' "$LIST"); do
	grep -qxF "$c" "$out/consumers" 2>/dev/null || fail "no binary links $c, which $LIST names as a part's consumer (renamed or inlined?)"
done

if [ "$update" = 1 ]; then
	{
		sed -n '/^#/p; /^part /p' "$LIST" 2>/dev/null
		sort -s -k1,1 "$newlist"
	} >"$out/new"
	mv "$out/new" "$LIST"
	echo "check-binaries: wrote $LIST"
fi
[ "$failed" = 0 ] || exit 1
echo "check-binaries: each of ${#names[@]} functions links its own handler, use cases and store methods only"
