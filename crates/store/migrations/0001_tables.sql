-- mcpflow's store in PostgreSQL, migration 1: the same data as the sled trees
-- (crates/store/src/keys.rs), one table each.
--
-- Ids and names compare byte by byte (COLLATE "C"), so listings come in the order sled's
-- keys give them. Values are the JSON mcpflow wrote, in type `json`, which keeps the
-- text as written (key order, numbers): a value reads back byte for byte, as from sled.
-- Columns beside a value (a run's blueprint and status) are what queries select on.

CREATE TABLE mcpflow_meta (
    key   text COLLATE "C" PRIMARY KEY,
    value json NOT NULL
);

CREATE TABLE revisions (
    blueprint text COLLATE "C" NOT NULL,
    rev       bigint NOT NULL CHECK (rev BETWEEN 1 AND 4294967295),
    saved_at  text NOT NULL,
    doc       json NOT NULL,
    PRIMARY KEY (blueprint, rev)
);

-- The current revision of each blueprint.
CREATE TABLE blueprints (
    id  text COLLATE "C" PRIMARY KEY,
    rev bigint NOT NULL
);

CREATE TABLE runs (
    id        text COLLATE "C" PRIMARY KEY,
    blueprint text COLLATE "C" NOT NULL,
    status    text NOT NULL,
    record    json NOT NULL
);
CREATE INDEX runs_by_blueprint ON runs (blueprint, id);
CREATE INDEX runs_unfinished ON runs (id) WHERE status IN ('running', 'waiting');

CREATE TABLE events (
    run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    bigint NOT NULL CHECK (seq >= 0),
    event  json NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE saved (
    blueprint text COLLATE "C" NOT NULL,
    name      text COLLATE "C" NOT NULL,
    value     json NOT NULL,
    PRIMARY KEY (blueprint, name)
);

CREATE TABLE servers (
    name   text COLLATE "C" PRIMARY KEY,
    config json NOT NULL
);

CREATE TABLE consents (
    hash    text COLLATE "C" PRIMARY KEY,
    consent json NOT NULL
);

CREATE TABLE schedules (
    blueprint text COLLATE "C" PRIMARY KEY,
    state     json NOT NULL
);
