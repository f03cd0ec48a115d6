-- The tutor (seed 001): institutions, courses, sections and transfer rules
-- are reference data shared by every workspace; tutoring sessions are
-- conversations, whose pending messages (drafts not yet sent) wait in
-- tn_pending until they are sent or cancelled.

CREATE TABLE tn_pending (
    id              TEXT    PRIMARY KEY,
    conversation_id TEXT    NOT NULL REFERENCES conversations (id),
    workspace       TEXT    NOT NULL,
    role            TEXT    NOT NULL,
    content         TEXT    NOT NULL,
    created_at      BIGINT  NOT NULL
);
CREATE INDEX tn_pending_conversation ON tn_pending (conversation_id, created_at);

CREATE TABLE tn_institutions (
    key        TEXT PRIMARY KEY,
    code       TEXT NOT NULL,
    name       TEXT NOT NULL,
    aliases    TEXT NOT NULL,
    source     TEXT NOT NULL,
    updated_at BIGINT  NOT NULL
);

CREATE TABLE tn_courses (
    seq         BIGSERIAL PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    institution TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    number      TEXT    NOT NULL,
    level       BIGINT  NOT NULL,
    title       TEXT    NOT NULL,
    description TEXT    NOT NULL,
    credits     DOUBLE PRECISION,
    details     TEXT    NOT NULL,
    source      TEXT    NOT NULL,
    updated_at  BIGINT  NOT NULL,
    UNIQUE (institution, subject, number)
);

CREATE TABLE tn_sections (
    id          TEXT    PRIMARY KEY,
    institution TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    number      TEXT    NOT NULL,
    term        TEXT    NOT NULL,
    crn         TEXT    NOT NULL,
    section     TEXT    NOT NULL,
    details     TEXT    NOT NULL,
    source      TEXT    NOT NULL,
    updated_at  BIGINT  NOT NULL,
    UNIQUE (institution, term, crn)
);
CREATE INDEX tn_sections_course ON tn_sections (institution, subject, number, term);
CREATE INDEX tn_sections_term ON tn_sections (institution, term, subject, number, section);

CREATE TABLE tn_transfer_rules (
    id                 TEXT    PRIMARY KEY,
    row_key            TEXT    NOT NULL UNIQUE,
    source_institution TEXT    NOT NULL,
    target_institution TEXT    NOT NULL,
    subject            TEXT    NOT NULL,
    number             TEXT    NOT NULL,
    effective_start    TEXT    NOT NULL,
    effective_end      TEXT,
    outcome            TEXT    NOT NULL,
    parsed             BIGINT  NOT NULL,
    rule               TEXT    NOT NULL,
    source             TEXT    NOT NULL,
    updated_at         BIGINT  NOT NULL
);
CREATE INDEX tn_transfer_rules_pair ON tn_transfer_rules (source_institution, target_institution, subject, number);
CREATE INDEX tn_transfer_rules_target ON tn_transfer_rules (target_institution, source_institution);

-- Every course a rule names, on either side, for lookups by course.
CREATE TABLE tn_transfer_rule_courses (
    course  TEXT NOT NULL,
    rule_id TEXT NOT NULL REFERENCES tn_transfer_rules (id) ON DELETE CASCADE,
    side    TEXT NOT NULL,
    PRIMARY KEY (course, rule_id, side)
);
CREATE INDEX tn_transfer_rule_courses_rule ON tn_transfer_rule_courses (rule_id);
