#!/usr/bin/env bash
# Brings up a streaming replica of the local PostgreSQL cluster (the one
# scripts/pg-up.sh starts) for `make test` and `make bench`, and prints the
# replica's URL on stdout (diagnostics go to stderr): the same role,
# password and database as pg-up.sh's, on the replica's port. A database
# created on the primary appears on the replica by itself, under the same
# name.
#
# The replica is a second Debian cluster, 15/replica on port 5433, made with
# `pg_basebackup -R` from 15/main (as the postgres user over the local
# socket, which Debian's pg_hba.conf allows for replication) and started as
# a hot standby. The primary's configuration is never changed and it is
# never restarted: Debian's defaults (wal_level=replica, max_wal_senders=10,
# the local replication line of pg_hba.conf) are all a replica needs, and
# the script stops with a clear message when they are missing.
#
# The replica streams through a permanent replication slot on the primary
# (cryptointel_replica_5433), which keeps the WAL it has not received yet:
# a busy primary would otherwise recycle it before the replica connects.
# The slot holds WAL only while the replica is behind or stopped; drop it
# (pg_drop_replication_slot) if you drop the replica by hand.
#
# It is idempotent and safe to run from several checkouts at once (a lock
# serializes them): a replica that is up and streaming is only printed; one
# that is stopped is started; one that cannot stream is dropped with its
# slot and made again, which copies the primary once (seconds on a fresh
# machine, a few minutes for gigabytes).
#
# With TEST_DATABASE_READ_URL set it only prints that URL. With DATABASE_URL
# set (an external primary) it cannot make a replica and says so.
#
# Overrides: PG_VERSION (15), PG_CLUSTER (main), PG_PORT (5432),
# PG_REPLICA_CLUSTER (replica), PG_REPLICA_PORT (5433), PG_DATABASE
# (cryptointel).
set -euo pipefail

if [ -n "${TEST_DATABASE_READ_URL:-}" ]; then
  echo "$TEST_DATABASE_READ_URL"
  exit 0
fi
if [ -n "${DATABASE_URL:-}" ]; then
  echo "pg-replica-up: DATABASE_URL names an external primary; set TEST_DATABASE_READ_URL to a streaming replica of it" >&2
  exit 1
fi

# shellcheck source=scripts/pg-lib.sh
. "$(dirname "$0")/pg-lib.sh"
primary=${PG_CLUSTER:-main}
pport=${PG_PORT:-5432}
cluster=${PG_REPLICA_CLUSTER:-replica}
port=${PG_REPLICA_PORT:-5433}
slot=cryptointel_${cluster}_$port
psql_at() { # port, sql: one value, as postgres over the local socket
  as_postgres psql -X -q -p "$1" -d postgres -tAc "$2" 2>/dev/null
}
cluster_status() {
  pg_lsclusters -h 2>/dev/null | awk -v v="$ver" -v c="$cluster" '$1==v && $2==c {print $4}'
}
# streaming: the replica is up, in recovery and its WAL receiver streams.
streaming() {
  [ "$(psql_at "$port" "SELECT pg_is_in_recovery()")" = "t" ] &&
    [ "$(psql_at "$port" "SELECT status FROM pg_stat_wal_receiver")" = "streaming" ]
}
wait_streaming() { # seconds
  for _ in $(seq 1 "$1"); do
    if streaming; then return 0; fi
    sleep 1
  done
  return 1
}
start_cluster() {
  # 9>&-: the server must not inherit the lock, or holds it for its life.
  if ! as_root pg_ctlcluster "$ver" "$cluster" start >&2 9>&-; then
    as_postgres pg_ctlcluster "$ver" "$cluster" start >&2 9>&- || true
  fi
}
print_url() {
  pg_url "$port"
}

if ! pg_isready -q -h 127.0.0.1 -p "$pport"; then
  echo "pg-replica-up: the primary $ver/$primary does not answer on port $pport; run scripts/pg-up.sh first" >&2
  exit 1
fi
wal_level=$(psql_at "$pport" "SHOW wal_level")
senders=$(psql_at "$pport" "SHOW max_wal_senders")
if [ "$wal_level" != "replica" ] && [ "$wal_level" != "logical" ] || [ "${senders:-0}" -lt 2 ]; then
  echo "pg-replica-up: $ver/$primary has wal_level=$wal_level and max_wal_senders=$senders; a streaming replica needs wal_level=replica and max_wal_senders >= 2 (both need a restart of the primary, which this script never does)" >&2
  exit 1
fi

lockdir=${XDG_RUNTIME_DIR:-/tmp}
exec 9>"$lockdir/cryptointel-pg-replica-$ver-$cluster.lock"
flock 9

# pg_lsclusters says online,recovery / down,recovery for a standby.
status=$(cluster_status)
if [[ "$status" == online* ]] && wait_streaming 5; then
  print_url
  exit 0
fi
if [[ "$status" == down* ]]; then
  echo "pg-replica-up: starting the replica $ver/$cluster" >&2
  start_cluster
  if wait_streaming 30; then
    print_url
    exit 0
  fi
fi

# Missing, or unable to stream: make it afresh.
if [ -n "$status" ]; then
  echo "pg-replica-up: $ver/$cluster does not stream from $ver/$primary; making it again" >&2
  as_root pg_dropcluster --stop "$ver" "$cluster" >&2
fi
psql_at "$pport" "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$slot' AND NOT active" >/dev/null || true
echo "pg-replica-up: creating the streaming replica $ver/$cluster on port $port (pg_basebackup -R from $ver/$primary)" >&2
as_root pg_createcluster --port "$port" "$ver" "$cluster" >&2
datadir=$(pg_lsclusters -h | awk -v v="$ver" -v c="$cluster" '$1==v && $2==c {print $6}')
confdir=/etc/postgresql/$ver/$cluster
# A hot standby needs these at least as high as the primary's.
settings=""
for s in max_connections max_worker_processes max_wal_senders max_prepared_transactions max_locks_per_transaction; do
  settings+="$s = $(psql_at "$pport" "SHOW $s")"$'\n'
done
as_root tee "$confdir/conf.d/cryptointel-replica.conf" >/dev/null <<CONF
# Written by scripts/pg-replica-up.sh: a hot standby of $ver/$primary.
hot_standby = on
# The primary keeps the rows a standby query still reads, instead of the
# standby cancelling the query when it replays their removal.
hot_standby_feedback = on
listen_addresses = 'localhost'
$settings
CONF
as_root find "$datadir" -mindepth 1 -delete
# A permanent replication slot keeps the WAL the replica still needs (a busy
# primary recycles it within seconds otherwise, before the new replica has
# even connected). It holds WAL only while the replica is behind or
# stopped; it is dropped with the replica.
as_postgres pg_basebackup -p "$pport" -D "$datadir" -R -X stream -c fast -C -S "$slot" >&2
start_cluster
if ! wait_streaming 60; then
  echo "pg-replica-up: the replica $ver/$cluster does not stream; see /var/log/postgresql/postgresql-$ver-$cluster.log" >&2
  exit 1
fi
print_url
