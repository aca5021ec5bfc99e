-- Version 1: records as JSON documents by (kind, name), and the txn audit log.
CREATE TABLE entities (kind TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (kind, name));
CREATE TABLE txn (id BIGSERIAL PRIMARY KEY, time_ms BIGINT NOT NULL, actor TEXT NOT NULL,
  actor_uid BIGINT, verified BOOLEAN NOT NULL, peer TEXT NOT NULL, action TEXT NOT NULL, entity TEXT NOT NULL,
  name TEXT NOT NULL, outcome TEXT NOT NULL, info TEXT NOT NULL, source TEXT NOT NULL);
CREATE INDEX txn_time ON txn (time_ms);
