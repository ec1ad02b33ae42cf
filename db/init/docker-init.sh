#!/bin/sh
# Postgres container init (docker-entrypoint-initdb.d): the same SQL scripts/services runs.
set -eu
psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres -f /shipyard-init/roles.sql
for db in shipyard shipyard_test shipyard_test_restore; do
  psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres -c "create database $db owner shipyard_owner"
  psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$db" -f /shipyard-init/database.sql
done
