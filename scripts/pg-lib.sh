# Shell functions shared by scripts/pg-up.sh and scripts/pg-replica-up.sh
# (sourced, not run), and the settings both share.

# The PostgreSQL version, and the role, password and database every URL
# the scripts print names.
ver=${PG_VERSION:-15}
user=cryptointel
pass=cryptointel
name=${PG_DATABASE:-cryptointel}

# pg_url prints the URL of the database on a local cluster's port.
pg_url() {
  echo "postgres://$user:$pass@127.0.0.1:$1/$name?sslmode=disable"
}

# as_postgres runs a command as the postgres OS user, from a directory that
# user can read (avoids "could not change directory" warnings).
as_postgres() {
  if [ "$(id -u)" = 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    (cd / && sudo -n -u postgres -- "$@")
  fi
}

# as_root runs a cluster-management command with the rights it needs.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n -- "$@"; fi
}
