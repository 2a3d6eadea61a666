# Shell functions shared by scripts/pg-up.sh and scripts/pg-replica-up.sh
# (sourced, not run).

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
