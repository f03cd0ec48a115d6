-- The tutor's user preferences (tn_user_preferences_get/set), one JSON
-- object per user.
CREATE TABLE tn_user_preferences (
    user_id     TEXT    PRIMARY KEY,
    preferences TEXT    NOT NULL,
    updated_at  INTEGER NOT NULL
);
