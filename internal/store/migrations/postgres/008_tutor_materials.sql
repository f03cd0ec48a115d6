-- The tutor's course materials and grade distributions (docs/tutor-data.md):
-- reference data shared by every workspace, imported with nexus import
-- tutor-materials and tutor-grades. A material is identified by its course
-- and URL, a distribution by its course, term and section ('' for the whole
-- course in the term): importing a file again changes nothing.

CREATE TABLE tn_materials (
    id          TEXT    PRIMARY KEY,
    institution TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    number      TEXT    NOT NULL,
    term        TEXT,
    kind        TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    url         TEXT    NOT NULL,
    details     TEXT    NOT NULL,
    source      TEXT    NOT NULL,
    updated_at  BIGINT  NOT NULL,
    UNIQUE (institution, subject, number, url)
);

CREATE TABLE tn_grades (
    id             TEXT    PRIMARY KEY,
    institution    TEXT    NOT NULL,
    subject        TEXT    NOT NULL,
    number         TEXT    NOT NULL,
    term           TEXT    NOT NULL,
    section        TEXT    NOT NULL,
    counts         TEXT    NOT NULL,
    average        DOUBLE PRECISION,
    average_scale  TEXT,
    details        TEXT    NOT NULL,
    source         TEXT    NOT NULL,
    updated_at     BIGINT  NOT NULL,
    UNIQUE (institution, subject, number, term, section)
);
