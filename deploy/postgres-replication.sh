#!/bin/bash
# Run once by the postgres image when it initializes its data directory:
# lets the compose file's streaming replica connect for replication.
set -euo pipefail
echo "host replication cryptointel all scram-sha-256" >> "$PGDATA/pg_hba.conf"
