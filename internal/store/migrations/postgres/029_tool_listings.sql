-- Each downstream server's tools as it last listed them (issue 27), so that
-- search_tools covers a toolbox before it is opened, on every replica and
-- after a restart. fingerprint identifies the server's configuration the
-- listing belongs to; tools is the JSON array of the tools served.
CREATE TABLE tool_listings (
    toolbox     TEXT NOT NULL,
    server      TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    tools       TEXT NOT NULL,
    listed_at   BIGINT NOT NULL,
    PRIMARY KEY (toolbox, server)
);
