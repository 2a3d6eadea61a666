#!/usr/bin/env bash
# Brings up PostgreSQL for `make run` and `make test` and prints the
# DATABASE_URL to use on stdout (diagnostics go to stderr).
#
# With DATABASE_URL already set, it only waits for that server. Otherwise it
# starts the local cluster 15/main (installed but stopped on a fresh machine),
# creates the role and database `cryptointel`, and prints their URL.
set -euo pipefail

if [ -n "${DATABASE_URL:-}" ]; then
  echo "$DATABASE_URL"
  exit 0
fi

ver=${PG_VERSION:-15}
cluster=${PG_CLUSTER:-main}
port=${PG_PORT:-5432}
user=cryptointel
pass=cryptointel
name=${PG_DATABASE:-cryptointel}

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi
}

if ! pg_lsclusters -h 2>/dev/null | awk -v v="$ver" -v c="$cluster" '$1==v && $2==c' | grep -q online; then
  echo "starting PostgreSQL cluster $ver/$cluster" >&2
  if ! pg_lsclusters -h 2>/dev/null | awk -v v="$ver" -v c="$cluster" '$1==v && $2==c' | grep -q .; then
    pg_createcluster "$ver" "$cluster" >&2
  fi
  pg_ctlcluster "$ver" "$cluster" start >&2 || true
fi
for _ in $(seq 1 60); do
  as_postgres pg_isready -q -p "$port" && break
  sleep 0.5
done
as_postgres pg_isready -p "$port" >&2

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
echo "postgres://$user:$pass@127.0.0.1:$port/$name?sslmode=disable"
