#!/usr/bin/env bash
# Brings up PostgreSQL for `make run` and `make test` and prints the
# DATABASE_URL to use on stdout (diagnostics go to stderr).
#
# With DATABASE_URL already set, it only waits (up to 30 s) for that server
# and prints it. Otherwise it starts the local Debian cluster 15/main
# (installed but stopped on a fresh machine; created if missing), creates
# the role and database `cryptointel`, and prints their URL. It is
# idempotent: on a machine where all that is done it only prints the URL.
#
# Overrides: PG_VERSION (15), PG_CLUSTER (main), PG_PORT (5432),
# PG_DATABASE (cryptointel).
set -euo pipefail

wait_ready() { # args: pg_isready arguments; gives up after about 30 s
  for _ in $(seq 1 30); do
    if pg_isready -q -t 1 "$@" 2>/dev/null; then return 0; fi
    sleep 1
  done
  pg_isready -t 1 "$@" >&2
}

if [ -n "${DATABASE_URL:-}" ]; then
  if command -v pg_isready >/dev/null; then
    wait_ready -d "$DATABASE_URL" || { echo "pg-up: DATABASE_URL does not answer" >&2; exit 1; }
  fi
  echo "$DATABASE_URL"
  exit 0
fi

# shellcheck source=scripts/pg-lib.sh
. "$(dirname "$0")/pg-lib.sh"
cluster=${PG_CLUSTER:-main}
port=${PG_PORT:-5432}

if ! command -v pg_lsclusters >/dev/null; then
  echo "pg-up: PostgreSQL is not installed (no pg_lsclusters); install postgresql-$ver or set DATABASE_URL" >&2
  exit 1
fi

status=$(pg_lsclusters -h 2>/dev/null | awk -v v="$ver" -v c="$cluster" '$1==v && $2==c {print $4}')
if [ "$status" != "online" ]; then
  if [ -z "$status" ]; then
    echo "pg-up: creating PostgreSQL cluster $ver/$cluster" >&2
    as_root pg_createcluster --port "$port" "$ver" "$cluster" >&2
  fi
  echo "pg-up: starting PostgreSQL cluster $ver/$cluster" >&2
  if ! as_root pg_ctlcluster "$ver" "$cluster" start >&2; then
    # A stale pid file after an unclean stop, or no systemd: start it as
    # its owner directly.
    as_postgres pg_ctlcluster "$ver" "$cluster" start >&2 || true
  fi
fi
if ! wait_ready -h 127.0.0.1 -p "$port"; then
  echo "pg-up: PostgreSQL $ver/$cluster did not come up; see /var/log/postgresql/postgresql-$ver-$cluster.log" >&2
  exit 1
fi

as_postgres psql -q -p "$port" -v ON_ERROR_STOP=1 >&2 <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$user') THEN
    CREATE ROLE $user LOGIN SUPERUSER PASSWORD '$pass';
  END IF;
END \$\$;
SQL
if ! as_postgres psql -p "$port" -tAc "SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1; then
  as_postgres createdb -p "$port" -O "$user" "$name" >&2
fi
pg_url "$port"
