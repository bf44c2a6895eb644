-- mcpflow's store in PostgreSQL, migration 4: the fires of the one scheduler of a team's
-- workers (issue 34).
--
-- One worker at a time fires the stored blueprints' schedules (the one holding the
-- scheduler's advisory lock); when it dies another takes the lock over and goes on from
-- the schedule states it left in `schedules`. A fire queues a run and records its slot
-- here in the same transaction, so a slot is fired once even when the worker that fired
-- it died before it could save its schedule's state and the next one fires it again.

CREATE TABLE schedule_fires (
    blueprint text COLLATE "C" NOT NULL,
    slot      timestamptz NOT NULL,
    run_id    text COLLATE "C" NOT NULL,
    PRIMARY KEY (blueprint, slot)
);
