// The typed search attributes of the platform's workflows, defined once: the workflows set them,
// the API starts workflows with them, the local dev server registers them from this list
// (platform/local-stack/temporal-dev-server.ts), and a test holds docker-compose.yml to it.
// Pure (only @temporalio/common), so workflow code can import it.
import { defineSearchAttributeKey } from '@temporalio/common';

/** The workspace a workflow works in (review, Forge execution, webhook delivery). */
export const WorkspaceId = defineSearchAttributeKey('WorkspaceId', 'KEYWORD');
/** Where a proposal is (proposed … executed, undone), kept current by the workflow as it moves. */
export const ProposalState = defineSearchAttributeKey('ProposalState', 'KEYWORD');
/** The catalog action kind of a proposal (note.write, note.transaction). */
export const ActionKind = defineSearchAttributeKey('ActionKind', 'KEYWORD');
/** The account a workflow acts for: the proposer of a review, the reviewer who asked for an undo. */
export const AccountId = defineSearchAttributeKey('AccountId', 'KEYWORD');

export const searchAttributeKeys = [WorkspaceId, ProposalState, ActionKind, AccountId] as const;
