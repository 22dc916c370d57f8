#!/bin/bash
# The stand-in mariadb image's entrypoint, honouring the interface of the
# official image that docker-compose.yml relies on: a command that starts
# with an option is mariadbd's; on an empty data directory it creates the
# grant tables, root at MARIADB_ROOT_HOST (default %) with
# MARIADB_ROOT_PASSWORD or, given MARIADB_ALLOW_EMPTY_ROOT_PASSWORD, none,
# the database MARIADB_DATABASE, and runs /docker-entrypoint-initdb.d/*.sql
# (in that database, as root) and *.sh in name order, on a server that
# listens on its socket only. Then it runs the command in its place.
set -euo pipefail

case "${1:-}" in
-*) set -- mariadbd "$@" ;;
esac

datadir=/var/lib/mysql
if [[ ${1:-} == mariadbd && ! -d $datadir/mysql ]]; then
  if [[ -z ${MARIADB_ROOT_PASSWORD:-} && -z ${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:-} ]]; then
    echo "mariadb stand-in: MARIADB_ROOT_PASSWORD is empty: set it, or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1" >&2
    exit 1
  fi
  mariadb-install-db --datadir="$datadir" --auth-root-authentication-method=normal --skip-test-db >/dev/null
  socket=/run/mysqld/init.sock
  "$@" --skip-networking --socket="$socket" &
  pid=$!
  mysql=(mariadb --protocol=socket --socket="$socket" -uroot)
  # ready within a minute, or the container fails with the server's output
  for _ in $(seq 600); do
    "${mysql[@]}" -e 'SELECT 1' >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { echo "mariadb stand-in: mariadbd exited while initializing" >&2; exit 1; }
    sleep 0.1
  done
  "${mysql[@]}" -e 'SELECT 1' >/dev/null
  host=${MARIADB_ROOT_HOST:-%}
  pass=${MARIADB_ROOT_PASSWORD:-}
  db=${MARIADB_DATABASE:-}
  {
    if [[ $host != localhost ]]; then
      echo "CREATE USER 'root'@'${host//\'/\'\'}' IDENTIFIED BY '${pass//\'/\'\'}';"
      echo "GRANT ALL PRIVILEGES ON *.* TO 'root'@'${host//\'/\'\'}' WITH GRANT OPTION;"
    fi
    [[ -n $db ]] && echo "CREATE DATABASE IF NOT EXISTS \`$db\`;"
    true
  } | "${mysql[@]}"
  for f in /docker-entrypoint-initdb.d/*; do
    case $f in
      *.sql) echo "mariadb stand-in: running $f"; "${mysql[@]}" ${db:+--database="$db"} <"$f" ;;
      *.sh) echo "mariadb stand-in: running $f"; . "$f" ;;
      *) [[ -e $f ]] && echo "mariadb stand-in: ignoring $f" ;;
    esac
  done
  kill "$pid"
  wait "$pid" || true
  echo "mariadb stand-in: initialized $datadir"
fi
exec "$@"
