#!/usr/bin/env bash
# replica.sh is `make test-replica`: the read replica test. It starts a PRIVATE PostgreSQL 17
# primary and a streaming replica of it (pg_basebackup -R) on ports of their own, with data
# directories of their own, runs TestReadReplicas (shared/replicatest) against them, and removes
# them afterwards, also when the test fails or is interrupted. The shared server (54322) is not
# touched. The bench's replica workload (TestRunReplica, cmd/agentmem-bench) runs against them
# first.
#
# The test drives the replica itself through this script's subcommands:
#
#   replica.sh                  start, run the test, stop and remove (what make test-replica runs)
#   replica.sh pause | resume   pg_wal_replay_pause() / pg_wal_replay_resume() on the replica
#   replica.sh kill | start     pg_ctl stop -m immediate of the replica; start it again
#   replica.sh bench [ARGS]     start, run agentmem-bench -only replica against them, remove
#   replica.sh up | down        start or stop and remove the private servers by hand
#
# Both servers run from the Debian trixie root filesystem that localdb.sh provisions (provisioned
# here when it is missing), with their data under /var/lib/agentmem/replica-<port>/ inside it.
# When that root filesystem is missing and cannot be provisioned (not root, no apt-get), the run
# is skipped with a message and succeeds: there is no PostgreSQL to test with.
# AGENTMEM_REPLICA_PRIMARY_PORT (default 54350) and AGENTMEM_REPLICA_PORT (default 54351) move
# the ports; arguments after `--` go to go test (e.g. replica.sh -- -race).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PRIMARY_PORT=${AGENTMEM_REPLICA_PRIMARY_PORT:-54350}
REPLICA_PORT=${AGENTMEM_REPLICA_PORT:-54351}
ROOTFS=${AGENTMEM_PG_ROOTFS:-/var/lib/agentmem/pg17-trixie}
PGBIN=/usr/lib/postgresql/17/bin
# Paths seen from inside the root filesystem.
DIR_IN=/var/lib/agentmem/replica-${PRIMARY_PORT}
PRIMARY_IN=$DIR_IN/primary
REPLICA_IN=$DIR_IN/replica
# The whole run, the test included, ends within this many seconds.
BUDGET=${AGENTMEM_REPLICA_BUDGET:-240}
PRIMARY_URL="postgresql://postgres:postgres@127.0.0.1:${PRIMARY_PORT}/postgres"
REPLICA_URL="postgresql://postgres:postgres@127.0.0.1:${REPLICA_PORT}/postgres"

log() { printf 'replica: %s\n' "$*" >&2; }
die() { printf 'replica: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"

# have_binaries reports whether the root filesystem holds PostgreSQL 17 with pgvector.
have_binaries() {
	[ -x "$ROOTFS$PGBIN/postgres" ] && [ -x "$ROOTFS$PGBIN/pg_basebackup" ] &&
		[ -f "$ROOTFS/usr/share/postgresql/17/extension/vector.control" ]
}

# ensure_binaries provisions the root filesystem as make test does, when it can; it returns 1
# (after saying why) only when there are no binaries and no way to install them.
ensure_binaries() {
	have_binaries && return 0
	if [ "$(id -u)" != 0 ]; then
		log "skip: no PostgreSQL 17 with pgvector in $ROOTFS, and installing it needs root"
		return 1
	fi
	if ! command -v debootstrap >/dev/null 2>&1 && ! command -v apt-get >/dev/null 2>&1; then
		log "skip: no PostgreSQL 17 with pgvector in $ROOTFS, and neither debootstrap nor apt-get to install it"
		return 1
	fi
	log "no PostgreSQL 17 with pgvector in $ROOTFS yet: provisioning the local stack first"
	"$ROOT/scripts/localdb.sh"
	have_binaries || die "no PostgreSQL 17 in $ROOTFS (another server on 127.0.0.1:54322?); set AGENTMEM_PG_ROOTFS"
}

pg_ctl_cmd() { printf '%s/pg_ctl -D %s -l %s/server.log -w -t 60 %s' "$PGBIN" "$1" "$1" "$2"; }

# replica_sql runs one statement on the replica as the superuser.
replica_sql() {
	in_chroot env PGPASSWORD=postgres "$PGBIN/psql" -X -q -At -h 127.0.0.1 -p "$REPLICA_PORT" -U postgres -d postgres -c "$1"
}

up() {
	[ "$(id -u)" = 0 ] || die "the private servers run from a chroot: this needs root"
	have_binaries || die "no PostgreSQL 17 with pgvector in $ROOTFS"
	port_open "$PRIMARY_PORT" && die "127.0.0.1:${PRIMARY_PORT} is taken; set AGENTMEM_REPLICA_PRIMARY_PORT"
	port_open "$REPLICA_PORT" && die "127.0.0.1:${REPLICA_PORT} is taken; set AGENTMEM_REPLICA_PORT"
	mount_rootfs

	# Fresh clusters every run: nothing is left from an earlier run, passed or failed.
	rm -rf --one-file-system "${ROOTFS:?}$DIR_IN"
	mkdir -p "$ROOTFS$PRIMARY_IN"
	in_chroot chown -R postgres:postgres "$DIR_IN"
	printf 'postgres\n' >"$ROOTFS$DIR_IN/pwfile"
	in_chroot chown postgres "$DIR_IN/pwfile"
	log "initialising a private primary in $ROOTFS$PRIMARY_IN"
	as_postgres "$PGBIN/initdb -D $PRIMARY_IN -U postgres --pwfile=$DIR_IN/pwfile -A scram-sha-256 -E UTF8 --locale=C.UTF-8" >/dev/null
	rm -f "$ROOTFS$DIR_IN/pwfile"
	# initdb's pg_hba.conf already lets 127.0.0.1 connect for replication with a password.
	cat >>"$ROOTFS$PRIMARY_IN/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = ${PRIMARY_PORT}
unix_socket_directories = '${DIR_IN}'
max_connections = 60
shared_buffers = 32MB
fsync = on
synchronous_commit = on
wal_level = replica
max_wal_senders = 4
wal_keep_size = 256MB
log_min_messages = warning
EOF
	log "starting the primary on 127.0.0.1:${PRIMARY_PORT}"
	as_postgres "$(pg_ctl_cmd "$PRIMARY_IN" start)" >/dev/null || die "the primary did not start; see $ROOTFS$PRIMARY_IN/server.log"
	wait_port "$PRIMARY_PORT" || die "the primary does not answer on 127.0.0.1:${PRIMARY_PORT}"

	log "copying it into a streaming replica (pg_basebackup -R)"
	in_chroot su postgres -s /bin/sh -c "PGPASSWORD=postgres $PGBIN/pg_basebackup -h 127.0.0.1 -p $PRIMARY_PORT -U postgres -D $REPLICA_IN -R -X stream -c fast" >/dev/null ||
		die "pg_basebackup failed"
	# The copy carries the primary's settings; the replica's own come last and win. Its queries
	# are not cancelled for the replay's sake while it replays (hot_standby_feedback).
	cat >>"$ROOTFS$REPLICA_IN/postgresql.conf" <<EOF
port = ${REPLICA_PORT}
hot_standby = on
hot_standby_feedback = on
EOF
	log "starting the replica on 127.0.0.1:${REPLICA_PORT}"
	as_postgres "$(pg_ctl_cmd "$REPLICA_IN" start)" >/dev/null || die "the replica did not start; see $ROOTFS$REPLICA_IN/server.log"
	wait_port "$REPLICA_PORT" || die "the replica does not answer on 127.0.0.1:${REPLICA_PORT}"
	[ "$(replica_sql 'select pg_is_in_recovery()')" = t ] || die "the server on ${REPLICA_PORT} is not in recovery"
}

down() {
	[ -d "$ROOTFS$DIR_IN" ] || return 0
	mount_rootfs
	for d in "$REPLICA_IN" "$PRIMARY_IN"; do
		if [ -f "$ROOTFS$d/postmaster.pid" ]; then
			as_postgres "$PGBIN/pg_ctl -D $d -m immediate -w -t 30 stop" >/dev/null 2>&1 || true
		fi
	done
	rm -rf --one-file-system "${ROOTFS:?}$DIR_IN"
	log "stopped and removed the private servers"
}

# locked runs the rest of the script holding the run's lock, with the servers up, and removes
# them on exit.
locked_up() {
	command -v flock >/dev/null 2>&1 || die "flock is missing (util-linux)"
	mkdir -p /var/lib/agentmem
	exec 9>"/var/lib/agentmem/replica-${PRIMARY_PORT}.lock"
	flock -n 9 || die "another replica run uses port ${PRIMARY_PORT}"
	trap down EXIT
	trap 'exit 130' INT TERM
	up
}

cmd=${1:-run}
case $cmd in -*) cmd=run && set -- run "$@" ;; esac
case $cmd in
pause) replica_sql 'select pg_wal_replay_pause()' >/dev/null ;;
resume) replica_sql 'select pg_wal_replay_resume()' >/dev/null ;;
kill) as_postgres "$PGBIN/pg_ctl -D $REPLICA_IN -m immediate -w -t 30 stop" >/dev/null ;;
start)
	as_postgres "$(pg_ctl_cmd "$REPLICA_IN" start)" >/dev/null || die "the replica did not start; see $ROOTFS$REPLICA_IN/server.log"
	wait_port "$REPLICA_PORT" || die "the replica does not answer on 127.0.0.1:${REPLICA_PORT}"
	;;
up) ensure_binaries || exit 0; up ;;
down) down ;;
run | bench)
	shift || true
	[ "${1:-}" != -- ] || shift
	command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
	command -v go >/dev/null 2>&1 || die "go is missing; install Go (see go.mod for the version)"
	ensure_binaries || exit 0
	started=$(date +%s)
	locked_up
	cd "$ROOT"
	set +e
	if [ "$cmd" = bench ]; then
		log "agentmem-bench -only replica"
		go run ./cmd/agentmem-bench -only replica -database-url "$PRIMARY_URL" -replica-url "$REPLICA_URL" "$@"
	else
		# The bench's replica workload first: the test ends by killing the replica.
		log "go test -run TestRunReplica ./cmd/agentmem-bench/, then -run TestReadReplicas ./shared/replicatest/"
		export AGENTMEM_REPLICA_CTL="$ROOT/scripts/replica.sh" AGENTMEM_REPLICA_PRIMARY_URL="$PRIMARY_URL" AGENTMEM_REPLICA_URL="$REPLICA_URL"
		timeout -k 10 "$BUDGET" go test -count=1 -timeout "$((BUDGET - 20))s" -run '^TestRunReplica$' "$@" ./cmd/agentmem-bench/ &&
			timeout -k 10 "$BUDGET" go test -count=1 -timeout "$((BUDGET - 20))s" -run '^TestReadReplicas$' -v "$@" ./shared/replicatest/
	fi
	status=$?
	set -e
	if [ "$status" = 0 ]; then
		log "PASS in $(($(date +%s) - started))s"
	else
		log "FAIL (status $status) in $(($(date +%s) - started))s; the servers' logs:"
		tail -n 20 "$ROOTFS$PRIMARY_IN/server.log" >&2 || true
		tail -n 20 "$ROOTFS$REPLICA_IN/server.log" >&2 || true
	fi
	exit "$status"
	;;
*) die "unknown command $1 (run, pause, resume, kill, start, bench, up, down)" ;;
esac
