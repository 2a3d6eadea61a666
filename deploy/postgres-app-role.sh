#!/bin/bash
# Run once by the postgres image when it initializes its data directory:
# creates cryptointel_app, the role the service connects as, with the
# password of the app_pgpass secret (libpq's pgpass format,
# host:port:database:user:password). It owns the cryptointel database, so
# it can migrate it (its extensions are trusted ones), and nothing else:
# not a superuser, it cannot create roles or databases.
set -euo pipefail
password=$(cut -d: -f5- /run/secrets/app_pgpass | head -n 1)
if [ -z "$password" ]; then
  echo "app_pgpass holds no password (want host:port:database:cryptointel_app:password)" >&2
  exit 1
fi
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -v password="$password" <<'SQL'
CREATE ROLE cryptointel_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD :'password';
ALTER DATABASE cryptointel OWNER TO cryptointel_app;
ALTER SCHEMA public OWNER TO cryptointel_app;
SQL
