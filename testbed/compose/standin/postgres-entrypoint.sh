#!/bin/bash
# The stand-in postgres image's entrypoint, honouring the interface of the
# official image that docker-compose.yml relies on: on an empty data
# directory it creates the cluster with POSTGRES_USER as its superuser,
# POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust) for connections
# over TCP, POSTGRES_DB, and listening on every address, and runs
# /docker-entrypoint-initdb.d/*.sql and *.sh in name order on a server that
# listens on its socket only. Then it runs the command (postgres -c ...) in
# its place.
set -euo pipefail

if [[ ${1:-} == postgres && ! -s $PGDATA/PG_VERSION ]]; then
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
  pass=()
  if [[ -n ${POSTGRES_PASSWORD:-} ]]; then
    pwfile=$(mktemp)
    printf '%s' "$POSTGRES_PASSWORD" >"$pwfile"
    pass=(--pwfile="$pwfile")
  elif [[ $auth != trust ]]; then
    echo "postgres stand-in: POSTGRES_PASSWORD is empty: set it, or POSTGRES_HOST_AUTH_METHOD=trust" >&2
    exit 1
  fi
  initdb --username="$user" --auth-local=trust --auth-host="$auth" "${pass[@]}" -D "$PGDATA" >/dev/null
  [[ -n ${pwfile:-} ]] && rm -f "$pwfile"
  echo "host all all all $auth" >>"$PGDATA/pg_hba.conf"
  # the official image's configuration listens on every address, so other
  # containers reach the server; initdb's own default is localhost only
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  psql=(psql -v ON_ERROR_STOP=1 --no-psqlrc --username="$user")
  if [[ $db != postgres ]]; then
    "${psql[@]}" --dbname=postgres -c "CREATE DATABASE \"$db\"" >/dev/null
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case $f in
      *.sql) echo "postgres stand-in: running $f"; "${psql[@]}" --dbname="$db" -f "$f" >/dev/null ;;
      *.sh) echo "postgres stand-in: running $f"; . "$f" ;;
      *) [[ -e $f ]] && echo "postgres stand-in: ignoring $f" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "postgres stand-in: initialized $PGDATA for $user/$db"
fi
exec "$@"
