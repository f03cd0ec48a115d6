-- Hardening (issue 21, item 3): the chat turns running at once per user are
-- capped across replicas (internal/quota, TurnSlots). A user has N slots
-- (--max-turns); a running turn holds one row, (user_id, slot), with the
-- holder's id and a lease (expires_at, Unix microseconds) that its replica
-- renews while the turn runs. A slot whose lease has passed is free: a
-- replica killed during a turn frees its slots when their leases pass.
-- quota.PruneTurnSlots deletes the rows of passed leases. UNLOGGED as
-- rate_limits is: after a crash of the database every slot is free.
CREATE UNLOGGED TABLE turn_slots (
    user_id    TEXT NOT NULL,
    slot       INTEGER NOT NULL,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, slot)
);
