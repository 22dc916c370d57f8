-- Seeds the docker compose testbed's Postgres as the local provider does
-- (testbed/local/postgres.go): pg_stat_statements, the app role, and
-- api.SeedStatements for 10,000 items. The postgres image runs it once, as
-- the herdbench superuser in the herdbench database. A test checks it
-- against api.SeedStatements and runs it on a real Postgres.

CREATE EXTENSION IF NOT EXISTS pg_stat_statements;

DO $$
BEGIN
  CREATE ROLE herdbench_app LOGIN;
EXCEPTION WHEN duplicate_object THEN
  NULL;
END
$$;

DROP TABLE IF EXISTS items;
CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, payload text NOT NULL);
INSERT INTO items SELECT g, 'item ' || g, repeat(md5(g::text), 8) FROM generate_series(1, 10000) AS g;
ANALYZE items;
GRANT SELECT ON items TO "herdbench_app";
DROP TABLE IF EXISTS likes;
CREATE TABLE likes (item_id bigint PRIMARY KEY, n bigint NOT NULL, followers int NOT NULL DEFAULT 0);
INSERT INTO likes SELECT g, 0 FROM generate_series(1, 10000) AS g;
DROP TABLE IF EXISTS feed;
CREATE TABLE feed (item_id bigint NOT NULL, follower int NOT NULL);
DROP TABLE IF EXISTS applied_writes;
CREATE TABLE applied_writes (write_id text PRIMARY KEY, item_id bigint NOT NULL);
GRANT SELECT, UPDATE ON likes TO "herdbench_app";
GRANT SELECT, INSERT ON feed TO "herdbench_app";
GRANT SELECT, INSERT ON applied_writes TO "herdbench_app";
