// The typed search attributes workflow code sets, re-exported from their one definition
// (domain/automation/search-attributes.ts, which also feeds the dev server's flags).
// That module is pure (@temporalio/common only) and listed in `workflowSafeDomainModules` in eslint.config.js.
export { AccountId, ActionKind, ProposalState, WorkspaceId } from '../domain/automation/search-attributes.ts';
