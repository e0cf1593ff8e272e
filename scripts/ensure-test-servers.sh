#!/bin/sh
# Makes sure the real servers the store and hand-off tests start are installed: redis-server,
# PostgreSQL (initdb, pg_ctl, postgres) and nats-server (JetStream). Installs what is missing with
# apt-get when running as root. Exit status 0 when all are available afterwards, 1 otherwise (the test
# setup then fails in CI).
set -u

have_redis() { command -v redis-server >/dev/null 2>&1; }
have_nats() { command -v nats-server >/dev/null 2>&1; }
have_postgres() {
  command -v initdb >/dev/null 2>&1 && return 0
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}

missing=""
have_redis || missing="$missing redis-server"
have_postgres || missing="$missing postgresql"
have_nats || missing="$missing nats-server"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-test-servers: missing:$missing (install them, or run as root on a Debian/Ubuntu machine)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Package lists are often absent on fresh images: update once, then install.
if ! apt-get install -y --no-install-recommends $missing >/dev/null 2>&1; then
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y --no-install-recommends $missing >&2 || exit 1
fi
# The Debian package starts a redis-server service on 6379; the tests start their own on a free port.
if have_redis && command -v service >/dev/null 2>&1; then service redis-server stop >/dev/null 2>&1 || true; fi
have_redis && have_postgres && have_nats
