#!/bin/sh
# Run once in a container of the base (images.sh), with this folder
# mounted at /standin: everything the stand-ins add to Debian's packages,
# in one layer that every stand-in image shares. Each image is then that
# layer with its own user, entrypoint and command (images.sh: images), the
# way the official images it stands in for set them.
set -eu
for name in redis postgres memcached mariadb; do
  install -m 0755 "/standin/$name-entrypoint.sh" "/usr/local/bin/$name-entrypoint.sh"
done
# toxiproxy, built from the Go module go.mod pins
install -m 0755 /standin/toxiproxy-server /toxiproxy
install -m 0755 /standin/toxiproxy-cli /toxiproxy-cli
# postgres:15's data directory and socket directory
mkdir -p /var/lib/postgresql/data /run/postgresql /docker-entrypoint-initdb.d
chown postgres:postgres /var/lib/postgresql/data /run/postgresql
chmod 0700 /var/lib/postgresql/data
# mariadb:10.11's, listening beyond loopback as the official image does
mkdir -p /var/lib/mysql /run/mysqld
chown mysql:mysql /var/lib/mysql /run/mysqld
printf '[mariadbd]\nbind-address = 0.0.0.0\nskip-name-resolve\n' >/etc/mysql/mariadb.conf.d/99-standin.cnf
# prometheus:v2's storage
mkdir -p /prometheus
chown nobody:nogroup /prometheus
