-- Version 2: the leader lease (PostgreSQL only: one controller uses an SQLite
-- file, and a second is refused at start). The table exists on both
-- back-ends so that the schema versions mean the same.
CREATE TABLE leader (id INTEGER PRIMARY KEY CHECK (id = 1), epoch INTEGER NOT NULL, holder TEXT NOT NULL,
  addr TEXT NOT NULL, pid INTEGER NOT NULL, expires_at TEXT NOT NULL);
INSERT INTO leader (id, epoch, holder, addr, pid, expires_at) VALUES (1, 0, '', '', 0, '')
