#!/bin/bash
# Run once by the postgres image when it initializes its data directory:
# lets the compose file's streaming replica connect for replication (as the
# superuser, whose password is the postgres_password secret).
set -euo pipefail
echo "host replication postgres all scram-sha-256" >> "$PGDATA/pg_hba.conf"
