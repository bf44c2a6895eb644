-- mcpflow's store in PostgreSQL, migration 3: the run queue of `mcpflow worker` (issue 34).
--
-- A queued run is a row of `runs` with status `queued`; what it runs is in its record
-- (`definition`: the blueprint JSON, `inputs`), as for any run of a document given whole,
-- so it is not kept twice. A worker claims the oldest queued run (`FOR UPDATE SKIP
-- LOCKED`), which makes it `running` under the worker's lease: `lease_owner` names the
-- worker, `lease_until` is when the run is the reaper's unless the worker renews it first.
-- `attempts` counts the claims of a run and of the runs resuming it.

ALTER TABLE runs
    ADD COLUMN queued_at   timestamptz,
    ADD COLUMN lease_owner text,
    ADD COLUMN lease_until timestamptz,
    ADD COLUMN attempts    integer NOT NULL DEFAULT 0;

-- What a claim reads: the queued runs, oldest first.
CREATE INDEX runs_queued ON runs (queued_at, id) WHERE status = 'queued';
-- What the reaper reads: the leases of runs in flight.
CREATE INDEX runs_leased ON runs (lease_until) WHERE lease_until IS NOT NULL;
