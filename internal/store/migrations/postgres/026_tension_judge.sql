-- The model judge of tensions (issue 23, docs/tensions.md "Model judge"):
-- the verdict of the chat model that confirmed a tension the rules flagged,
-- as JSON {"verdict", "type", "reason", "model"}; NULL when the rules alone
-- decided (no judge configured, a batch, or the model failed). A tension
-- the judge dismisses is deleted, so no verdict here says "no conflict".
ALTER TABLE tensions ADD COLUMN judge TEXT;
