#!/usr/bin/env bash
# check-template.sh checks that template.yaml and functions/*/ name the same functions.
#
# Usage: scripts/check-template.sh [repo-root]     (default: the directory above scripts/)
#
# A function of template.yaml is a resource under Resources whose CodeUri is build/<name>/
# (what `make build` writes for functions/<name>/). The check fails, listing every problem, when
#   - a functions/<name>/ directory has no such resource;
#   - a resource's function has no functions/<name>/ directory and is not on the template's
#     planned line: "# check-template: planned <name> <name> ...";
#   - two resources build the same function, a CodeUri is not build/<name>/, or a function's
#     resource has no HttpApi route Path /v1/<name>.
# A planned function whose directory exists is only reported: take it off the planned line.
#
# Only POSIX shell tools (awk, sort): it runs anywhere `make lint` does.
set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
template=$root/template.yaml
if [ ! -f "$template" ]; then
	echo "check-template: $template not found" >&2
	exit 1
fi

# One line per resource with a CodeUri: "<resource> <CodeUri> <Path>...".
resources=$(awk '
	/^[^[:space:]#]/ { section = $1; next }
	section != "Resources:" { next }
	/^  [A-Za-z0-9]+:[[:space:]]*$/ { res = $1; sub(/:$/, "", res); next }
	/^[[:space:]]+CodeUri:/ { v = $2; gsub(/["\047]/, "", v); code[res] = v; order[++n] = res; next }
	/^[[:space:]]+Path:/ { v = $2; gsub(/["\047]/, "", v); paths[res] = paths[res] " " v }
	END { for (i = 1; i <= n; i++) { r = order[i]; print r, code[r] paths[r] } }
' "$template")

planned=" $(awk '$1 == "#" && $2 == "check-template:" && $3 == "planned" {
	for (i = 4; i <= NF; i++) printf "%s ", $i
}' "$template")"

dirs=" "
if [ -d "$root/functions" ]; then
	for d in "$root"/functions/*/; do
		[ -d "$d" ] || continue
		d=${d%/}
		dirs="$dirs${d##*/} "
	done
fi

errors=0
fail() {
	echo "check-template: $*" >&2
	errors=$((errors + 1))
}

names=" "
count=0
while read -r res code routes; do
	[ -n "$res" ] || continue
	name=${code#build/}
	name=${name%/}
	case $code in
	build/*/ | build/*) ;;
	*) name="" ;;
	esac
	case $name in
	"" | */* | *[!a-z0-9-]*)
		fail "$res: CodeUri $code is not build/<name>/"
		continue
		;;
	esac
	count=$((count + 1))
	case $names in
	*" $name "*) fail "$res: function $name is built by two resources" ;;
	esac
	names="$names$name "
	case " $routes " in
	*" /v1/$name "*) ;;
	*) fail "$res: no HttpApi route Path /v1/$name" ;;
	esac
	case $dirs in
	*" $name "*)
		case $planned in
		*" $name "*) echo "check-template: $name exists now; take it off the planned line" >&2 ;;
		esac
		;;
	*)
		case $planned in
		*" $name "*) ;;
		*) fail "$res: no functions/$name/ directory (nor on the planned line)" ;;
		esac
		;;
	esac
done <<EOF
$resources
EOF

for name in $dirs; do
	case $names in
	*" $name "*) ;;
	*) fail "functions/$name/ has no resource in template.yaml (CodeUri: build/$name/)" ;;
	esac
done

if [ "$errors" -gt 0 ]; then
	echo "check-template: $errors problem(s) in $template" >&2
	exit 1
fi
echo "check-template: $count functions in template.yaml match functions/*/"
