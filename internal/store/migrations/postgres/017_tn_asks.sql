-- tn_session_ask's idempotency (issue 11): a message asked with a
-- clientEventId is answered once; a retry gets the stored answer, and the
-- same id with another message is a CONFLICT.
CREATE TABLE tn_asks (
    conversation_id TEXT    NOT NULL,
    client_event_id TEXT    NOT NULL,
    message_hash    TEXT    NOT NULL,
    response        TEXT,
    events          TEXT    NOT NULL,
    created_at      BIGINT  NOT NULL,
    PRIMARY KEY (conversation_id, client_event_id)
);
