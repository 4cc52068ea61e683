// Typed search attributes, so operators filter platform workflows in the Temporal UI
// (registered with the dev server in platform/local-stack/temporal-dev-server.ts).
import { defineSearchAttributeKey } from '@temporalio/common';

export const WorkspaceId = defineSearchAttributeKey('WorkspaceId', 'KEYWORD');
export const ProposalState = defineSearchAttributeKey('ProposalState', 'KEYWORD');
export const ActionKind = defineSearchAttributeKey('ActionKind', 'KEYWORD');
export const AccountId = defineSearchAttributeKey('AccountId', 'KEYWORD');
