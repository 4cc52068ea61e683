-- Up Migration
-- Live updates of the reviewer console (decision 98): every change of a proposal row is announced on
-- the channel `proposal_changes` when its transaction commits, whoever wrote it (the gateway, the
-- Product Runtime, the review workflow's steps, Forge, the expiry). The payload names the proposal and
-- its workspace only; a listener re-reads through the domain what the reviewer may see. Two changes
-- of one proposal in one transaction are one notification (Postgres folds identical payloads).
CREATE FUNCTION announce_proposal_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('proposal_changes', json_build_object('id', NEW.id, 'workspaceId', NEW.workspace_id)::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER action_proposals_announce
  AFTER INSERT OR UPDATE ON action_proposals
  FOR EACH ROW EXECUTE FUNCTION announce_proposal_change();

-- Down Migration
DROP TRIGGER action_proposals_announce ON action_proposals;
DROP FUNCTION announce_proposal_change();
