-- Version 2: the leader lease of several controllers on one database (ha/lease.rs).
-- One row: the epoch grows by one at each takeover, and every write of the
-- leader checks it (store/fence.rs). pid is the holder's lease session.
CREATE TABLE leader (id INTEGER PRIMARY KEY CHECK (id = 1), epoch BIGINT NOT NULL, holder TEXT NOT NULL,
  addr TEXT NOT NULL, pid INTEGER NOT NULL, expires_at TIMESTAMPTZ NOT NULL);
INSERT INTO leader (id, epoch, holder, addr, pid, expires_at) VALUES (1, 0, '', '', 0, '-infinity')
