#!/usr/bin/env bash
# advisors.sh runs Supabase's database advisors (`supabase db advisors`, the CLI pinned in
# package.json) against DATABASE_URL (default: the local database, migrated by migrate.sh) and
# fails when any security finding is reported, whatever its level: row-level security off on an
# exposed table, a function with a mutable search_path, an extension in public, and so on.
# Which schemas count as exposed comes from [api] schemas in supabase/config.toml.
#
# Performance findings are printed as warnings and never fail. `unused_index` is left out: on a
# database that serves no traffic every index is unused. AGENTMEM_ADVISORS_ALL=1 prints it too.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

export DATABASE_URL=${DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:${AGENTMEM_DB_PORT:-54322}/postgres}
export SUPABASE_NO_UPDATE_NOTIFIER=1 SUPABASE_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1

log() { printf 'advisors: %s\n' "$*" >&2; }
die() { printf 'advisors: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"

ensure_supabase_cli

errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT
json=$(node_modules/.bin/supabase db advisors --remote="$DATABASE_URL" --type all --level info \
	--output-format json 2>"$errfile") || {
	cat "$errfile" >&2
	die "supabase db advisors failed"
}

printf '%s' "$json" | node -e '
const all = process.env.AGENTMEM_ADVISORS_ALL === "1";
let results;
try {
	const s = require("fs").readFileSync(0, "utf8");
	const doc = JSON.parse(s.slice(s.indexOf("{")));
	results = doc.results;
	if (!Array.isArray(results)) throw new Error("no results array");
} catch (e) {
	console.error("advisors: error: cannot read the advisors output: " + e.message);
	process.exit(2);
}
const order = { ERROR: 0, WARN: 1, INFO: 2 };
results.sort((a, b) => (order[a.level] ?? 3) - (order[b.level] ?? 3) || a.name.localeCompare(b.name));
const security = results.filter((r) => (r.categories || []).includes("SECURITY"));
const performance = results.filter((r) => !(r.categories || []).includes("SECURITY"));
const shown = performance.filter((r) => all || r.name !== "unused_index");
const show = (tag, r) => {
	console.log(`advisors: ${tag} ${r.level} ${r.name}: ${r.detail}`);
	if (r.remediation) console.log(`          ${r.remediation}`);
};
for (const r of security) show("SECURITY", r);
for (const r of shown) show("warning:", r);
const hidden = performance.length - shown.length;
console.log(`advisors: ${security.length} security finding(s), ${shown.length} performance warning(s)` +
	(hidden ? `, ${hidden} unused-index note(s) not shown` : ""));
process.exit(security.length ? 1 : 0);
'
