-- Seeds the docker compose testbed's MariaDB as the local provider does
-- (testbed/local/mariadb.go): the replicas' user at '%' and
-- api.SeedStatementsMariaDB for 10,000 items. The mariadb image runs it
-- once, as root in the herdbench database (MARIADB_DATABASE). A test
-- checks it against api.SeedStatementsMariaDB and runs it on a real
-- MariaDB.

CREATE USER IF NOT EXISTS 'herdbench_app'@'%';
DROP TABLE IF EXISTS items;
CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT NOT NULL, payload TEXT NOT NULL) ENGINE=InnoDB;
INSERT INTO items SELECT seq, CONCAT('item ', seq), REPEAT(MD5(seq), 8) FROM seq_1_to_10000;
ANALYZE TABLE items;
GRANT SELECT ON items TO 'herdbench_app'@'%';
DROP TABLE IF EXISTS likes;
CREATE TABLE likes (item_id BIGINT PRIMARY KEY, n BIGINT NOT NULL, followers INT NOT NULL DEFAULT 0) ENGINE=InnoDB;
INSERT INTO likes (item_id, n) SELECT seq, 0 FROM seq_1_to_10000;
DROP TABLE IF EXISTS feed;
CREATE TABLE feed (item_id BIGINT NOT NULL, follower INT NOT NULL) ENGINE=InnoDB;
DROP TABLE IF EXISTS applied_writes;
CREATE TABLE applied_writes (write_id VARCHAR(255) PRIMARY KEY, item_id BIGINT NOT NULL) ENGINE=InnoDB;
GRANT SELECT, UPDATE ON likes TO 'herdbench_app'@'%';
GRANT SELECT, INSERT ON feed TO 'herdbench_app'@'%';
GRANT SELECT, INSERT ON applied_writes TO 'herdbench_app'@'%';
GRANT SELECT ON seq_1_to_4294967295 TO 'herdbench_app'@'%';
