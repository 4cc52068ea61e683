// The typed search attributes workflow code sets, re-exported from their one definition
// (domain/automation/search-attributes.ts, which also feeds the dev server's flags).
// That module is pure (@temporalio/common only); it waits to be listed in `workflowSafeDomainModules`
// in eslint.config.js, and until then this one value import is allowed by name.
// eslint-disable-next-line no-restricted-imports
export { AccountId, ActionKind, ProposalState, WorkspaceId } from '../domain/automation/search-attributes.ts';
