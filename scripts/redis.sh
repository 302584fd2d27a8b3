#!/usr/bin/env bash
# redis.sh makes sure a Redis server answers on 127.0.0.1:6380 for the tests and `make dev`
# (the Redis adapter's get-context cache; ADAPTERS=redis with REDIS_URL).
#
# Order of preference:
#   1. Something already listens on 127.0.0.1:${AGENTMEM_REDIS_PORT:-6380}: use it.
#   2. Start redis-server from Debian's package on this machine (installed with apt-get when
#      missing), in memory only (no RDB or AOF files), bound to the loopback interface, as the
#      `redis` user the package creates. The package's own service (port 6379) is not started.
#   3. Otherwise say what is missing and fail.
#
# The tests also start private servers from the same redis-server binary (a TLS one with a
# throwaway certificate, one they pause and stop), so the binary must be on PATH.
#
# `redis.sh stop` stops the server this script started. It is quick when Redis is already
# there, and safe to run again. It prints nothing on standard output.
set -euo pipefail

PORT=${AGENTMEM_REDIS_PORT:-6380}
DIR=/var/lib/agentmem/redis

log() { printf 'redis: %s\n' "$*" >&2; }
die() { printf 'redis: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=scripts/lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

if [ "${1:-}" = stop ]; then
	if [ -f "$DIR/redis.pid" ]; then
		pid=$(cat "$DIR/redis.pid")
		if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = redis-server ] && kill "$pid"; then
			log "stopped Redis on 127.0.0.1:${PORT} (pid $pid)"
		fi
		rm -f "$DIR/redis.pid"
	else
		log "Redis was not started by this script; nothing to stop"
	fi
	exit 0
fi

if ! command -v redis-server >/dev/null 2>&1; then
	[ "$(id -u)" = 0 ] || die "redis-server is missing and installing it needs root: apt-get install redis-server"
	command -v apt-get >/dev/null 2>&1 || die "redis-server is missing and there is no apt-get to install it"
	log "installing redis-server"
	# policy-rc.d is not touched: when the package's service starts, it listens on 6379, not here.
	(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null 2>&1) || {
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
	} || die "could not install redis-server"
fi

if port_open "$PORT"; then
	log "a server already listens on 127.0.0.1:${PORT}; using it"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "nothing listens on 127.0.0.1:${PORT}; start a Redis there (redis-server --port ${PORT}) or run this as root"
mkdir -p "$DIR"
user=root
if id redis >/dev/null 2>&1; then
	user=redis
	chown redis "$DIR"
fi
rm -f "$DIR/redis.pid"
log "starting Redis on 127.0.0.1:${PORT}"
su "$user" -s /bin/sh -c "redis-server --bind 127.0.0.1 --port ${PORT} --protected-mode yes --daemonize yes \
	--pidfile $DIR/redis.pid --logfile $DIR/redis.log --dir $DIR --save '' --appendonly no" ||
	die "Redis did not start; see $DIR/redis.log"
for _ in $(seq 1 50); do
	port_open "$PORT" && { log "ready: redis://127.0.0.1:${PORT}"; exit 0; }
	sleep 0.1
done
die "Redis does not answer on 127.0.0.1:${PORT}; see $DIR/redis.log"
