// Realistic examples for the OpenAPI description, one coherent story: Ada (developer_agent plan)
// keeps a vault mapped as 2038…; she writes Projects/Plan.md, a bridge ingests a capture event, a
// trigger proposes a note, a reviewer approves it. Note revisions, titles, links, sizes, diffs and
// cursors are computed by the same functions the API uses, so they are what the API would answer.
// .ci/run lints the generated documents with redocly, which checks every example against its schema.
import { adapters, templates } from '../domain/automation/catalog.ts';
import { EVENT_CONTRACT, EVENT_CONTRACT_VERSION } from '../domain/automation/event-contract.ts';
import { actionKinds } from '../domain/automation/catalog.ts';
import { proposalStates } from '../domain/automation/proposal-states.ts';
import { encodeCursor } from '../domain/cursor.ts';
import { errorCatalog } from '../domain/errors.ts';
import type { ErrorCode } from '../domain/errors.ts';
import { builtinRoles } from '../domain/identity/workspaces.ts';
import { deriveNote, unifiedDiff } from '../domain/notes/markdown.ts';
import { eventCursorAfter } from '../domain/notes/store.ts';

const ids = {
  account: 'a6ccc3bc-0487-4058-a4fc-e2a49e890eee',
  reviewer: '6f04adf5-e755-4330-9552-5e475ab49f52',
  token: '71a1a722-f8d5-4fb0-beb0-201fb1f302d5',
  workspace: '17b19bda-82dd-420d-b496-80caace03698',
  mapping: '2038c2e8-fad5-4942-bd0d-1160d7907109',
  trash: '8ad4efa0-6f54-49cc-bd32-236aa6ba3727',
  transaction: 'b8a049c0-26b3-4869-bfee-7ce07ab9a72a',
  proposal: 'c638cb44-3837-4419-b8d9-0b3a123a7a05',
  trigger: 'd590852e-3de9-4370-a346-22f1cf181dc7',
  event: '4bd51795-f907-4e97-a653-70bcd99708d9',
  run: '561c429a-926f-4250-97c8-1e3088051137',
  endpoint: '6ab398dd-7151-4e55-885c-aeab9abca181',
  request: '144122f1-ff55-4af8-ab81-9d7c58af3dfb',
} as const;

const at = {
  accountCreated: '2026-01-12T08:30:00.000Z',
  planCreated: '2026-03-02T09:14:07.412Z',
  planReplaced: '2026-03-02T09:20:51.078Z',
  ideasCreated: '2026-03-01T17:45:12.930Z',
  deleted: '2026-03-02T10:02:33.604Z',
  eventOccurred: '2026-03-02T09:12:00.000Z',
  eventReceived: '2026-03-02T09:12:00.481Z',
  proposed: '2026-03-02T09:12:03.117Z',
  approved: '2026-03-02T09:40:18.262Z',
  executed: '2026-03-02T09:40:19.005Z',
  expires: '2026-03-09T09:12:03.117Z',
} as const;

// ---- notes -----------------------------------------------------------------------------------

const PLAN_PATH = 'Projects/Plan.md';
const IDEAS_PATH = 'Inbox/Ideas.md';
const OLD_PATH = 'Archive/Old plan.md';
const planContent = '---\ntags: [planning, q3]\n---\n# Q3 plan\n\nShip the [[Inbox/Ideas|idea backlog]] review, then see ![[Diagrams/Flow.png]].\n';
const planV2Content = `${planContent}\n- [ ] Draft the launch note\n`;
const ideasContent = '# Ideas\n\n- Offline sync for the mobile app\n- Weekly digest e-mail\n';
const oldContent = '# Old plan\n\nSuperseded by [[Projects/Plan]].\n';

const plan = deriveNote(PLAN_PATH, planContent);
const planV2 = deriveNote(PLAN_PATH, planV2Content);
const ideas = deriveNote(IDEAS_PATH, ideasContent);
const old = deriveNote(OLD_PATH, oldContent);
export const planRevision = plan.revision;

const outcome = (path: string, note: ReturnType<typeof deriveNote>, operation: 'create' | 'replace', before: string | null) => ({
  mappingId: ids.mapping,
  path,
  title: note.title,
  operation,
  beforeRevision: before,
  afterRevision: note.revision,
  size: note.sizeBytes,
});

const noteBody = {
  mappingId: ids.mapping,
  path: PLAN_PATH,
  title: plan.title,
  revision: plan.revision,
  size: plan.sizeBytes,
  createdAt: at.planCreated,
  updatedAt: at.planCreated,
  frontmatter: plan.frontmatter,
  links: plan.links,
  content: planContent,
};

const noteEvent = (id: number, type: string, path: string, before: string | null, after: string | null, extra: Record<string, unknown>) => ({
  id: String(id),
  type,
  occurredAt: at.planCreated,
  actor: { type: 'account', id: ids.account },
  mappingId: ids.mapping,
  grantId: null,
  path,
  beforeRevision: before,
  afterRevision: after,
  transactionId: null,
  idempotencyKey: null,
  requestId: ids.request,
  source: 'rest',
  trashId: null,
  ...extra,
});

// ---- automation ------------------------------------------------------------------------------

const captureText = 'Call the printer about invoice 2291 before Friday.';
const capturedAction = { kind: 'note.write', mappingId: ids.mapping, path: 'Inbox/Printer invoice.md', content: `# Printer invoice\n\n${captureText}\n` };

const automationEvent = {
  contract: EVENT_CONTRACT,
  version: EVENT_CONTRACT_VERSION,
  id: ids.event,
  workspaceId: ids.workspace,
  type: 'capture.created',
  source: 'generic-webhook',
  occurredAt: at.eventOccurred,
  receivedAt: at.eventReceived,
  data: { text: captureText, capturedBy: 'mobile-share-sheet' },
};

const trigger = {
  id: ids.trigger,
  workspaceId: ids.workspace,
  createdByAccountId: ids.account,
  name: 'Capture to Inbox',
  kind: 'event',
  status: 'active',
  eventType: 'capture.created',
  filter: { capturedBy: 'mobile-share-sheet' },
  schedule: null,
  proposal: { bridge: 'generic-webhook', action: capturedAction, summary: 'File a captured note in the Inbox' },
  createdAt: at.accountCreated,
  updatedAt: at.accountCreated,
};

const proposal = {
  id: ids.proposal,
  workspaceId: ids.workspace,
  proposerAccountId: ids.account,
  proposerPrincipalId: null,
  actingForAccountId: null,
  bridge: 'generic-webhook',
  actionKind: 'note.write',
  action: capturedAction,
  summary: 'File a captured note in the Inbox',
  state: 'proposed',
  reviewerAccountId: null,
  decisionReason: null,
  expiresAt: at.expires,
  workflowId: `proposal-review-${ids.proposal}`,
  createdAt: at.proposed,
  updatedAt: at.proposed,
};

const printer = deriveNote(capturedAction.path, capturedAction.content);

const endpoint = {
  id: ids.endpoint,
  workspaceId: ids.workspace,
  url: 'https://hooks.example.com/hnp/capture',
  eventTypes: ['capture.created'],
  description: 'Team inbox relay',
  secretPrefix: 'whsec_q8Kf2Z',
  status: 'active',
  disabledReason: null,
  createdAt: at.accountCreated,
};

// ---- per operation ---------------------------------------------------------------------------

/** One example (value) or several named ones (examples). */
export type ExampleSet = { value: unknown } | { examples: Record<string, { summary: string; value: unknown }> };

export type OperationExamples = {
  /** Request body. */
  request?: ExampleSet;
  /** Query and path parameters, by name (header parameters carry their own). */
  parameters?: Record<string, unknown>;
  /** application/json (or the operation's media type) body per success status. */
  responses?: Record<string, ExampleSet>;
  /** text/markdown body of the 200, when the operation offers it. */
  markdown?: string;
  /** application/x-ndjson body of the 200 (a stream of events, one JSON text per line), when the operation offers it. */
  ndjson?: string;
};

const one = (value: unknown): ExampleSet => ({ value });

const mcpMeta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };

export const operationExamples: Record<string, OperationExamples> = {
  checkLiveness: { responses: { 200: one({ status: 'ok' }) } },
  checkReadiness: {
    responses: { 200: one({ status: 'ready', checks: { postgres: { ok: true, latencyMs: 1 }, temporal: { ok: true, latencyMs: 4 } } }) },
  },
  checkProcessReadiness: { responses: { 200: one({ status: 'ready', checks: { process: { ok: true, latencyMs: 0 } } }) } },
  readOpenApi: {
    responses: { 200: one({ openapi: '3.1.0', info: { title: 'Hosted Notes Platform', version: '1.0.0' }, paths: { '/api/dev/notes': {} } }) },
  },
  readAutomationOpenApi: {
    responses: { 200: one({ openapi: '3.1.0', info: { title: 'Hosted Notes Platform — automation gateway', version: '1.0.0' }, paths: { '/api/dev/automation/proposals': {} } }) },
  },
  readCurrentAccount: {
    responses: {
      200: one({
        account: {
          id: ids.account,
          email: 'ada@example.com',
          displayName: 'Ada Lovelace',
          plan: 'developer_agent',
          status: 'active',
          createdAt: at.accountCreated,
          updatedAt: at.accountCreated,
        },
        tokenId: ids.token,
        entitlements: { rest: true, mcp: true, automation: true },
      }),
    },
  },
  listWorkspaces: {
    parameters: { limit: 50 },
    responses: {
      200: one({
        workspaces: [
          { id: ids.workspace, name: 'Research team', ownerAccountId: ids.reviewer, createdAt: at.accountCreated, role: 'editor', permissions: [...builtinRoles['editor']!] },
        ],
        nextCursor: null,
        hasMore: false,
      }),
    },
  },
  listNotes: {
    parameters: { mappingId: ids.mapping, limit: 2 },
    responses: {
      200: one({
        mappingId: ids.mapping,
        notes: [
          { path: IDEAS_PATH, title: ideas.title, revision: ideas.revision, size: ideas.sizeBytes, updatedAt: at.ideasCreated },
          { path: PLAN_PATH, title: plan.title, revision: plan.revision, size: plan.sizeBytes, updatedAt: at.planCreated },
        ],
        nextCursor: encodeCursor({ after: PLAN_PATH }),
        hasMore: true,
      }),
    },
  },
  readNote: {
    parameters: { category: 'Projects', filename: 'Plan.md', mappingId: ids.mapping },
    responses: { 200: one(noteBody) },
    markdown: planContent,
  },
  writeNote: {
    request: {
      examples: {
        preview: { summary: 'Preview a replace (dryRun defaults to true)', value: { mappingId: ids.mapping, path: PLAN_PATH, content: planV2Content, expectedHash: plan.revision } },
        applyReplace: { summary: 'Apply a replace with the current revision', value: { mappingId: ids.mapping, path: PLAN_PATH, content: planV2Content, dryRun: false, expectedHash: plan.revision } },
        applyCreate: { summary: 'Apply a create', value: { mappingId: ids.mapping, path: PLAN_PATH, content: planContent, dryRun: false } },
      },
    },
    responses: {
      200: {
        examples: {
          preview: {
            summary: 'Preview: what an apply would do',
            value: { applied: false, dryRun: true, ...outcome(PLAN_PATH, planV2, 'replace', plan.revision), revisionRequired: false, ...unifiedDiff(PLAN_PATH, planContent, planV2Content) },
          },
          applied: { summary: 'Applied replace', value: { applied: true, dryRun: false, ...outcome(PLAN_PATH, planV2, 'replace', plan.revision), eventId: '42' } },
        },
      },
      201: one({ applied: true, dryRun: false, ...outcome(PLAN_PATH, plan, 'create', null), eventId: '41' }),
    },
  },
  deleteNote: {
    parameters: { category: 'Archive', filename: 'Old plan.md', mappingId: ids.mapping, dryRun: 'false' },
    responses: {
      200: {
        examples: {
          preview: {
            summary: 'Preview (dryRun true, the default)',
            value: {
              applied: false,
              dryRun: true,
              operation: 'delete',
              mappingId: ids.mapping,
              path: OLD_PATH,
              beforeRevision: old.revision,
              afterRevision: null,
              revisionRequired: true,
              ...unifiedDiff(OLD_PATH, oldContent, null),
            },
          },
          applied: {
            summary: 'Applied: the note is in the trash',
            value: { applied: true, dryRun: false, operation: 'delete', mappingId: ids.mapping, path: OLD_PATH, beforeRevision: old.revision, afterRevision: null, trashId: ids.trash, eventId: '43' },
          },
        },
      },
    },
  },
  applyTransaction: {
    request: one({
      mappingId: ids.mapping,
      dryRun: false,
      actions: [
        { type: 'write-note', path: IDEAS_PATH, content: ideasContent },
        { type: 'write-note', path: PLAN_PATH, content: planV2Content, expectedHash: plan.revision },
      ],
    }),
    responses: {
      200: one({
        applied: true,
        dryRun: false,
        mappingId: ids.mapping,
        transactionId: ids.transaction,
        results: [
          { index: 0, ...outcome(IDEAS_PATH, ideas, 'create', null), eventId: '44' },
          { index: 1, ...outcome(PLAN_PATH, planV2, 'replace', plan.revision), eventId: '45' },
        ],
      }),
    },
  },
  listTrash: {
    parameters: { mappingId: ids.mapping, limit: 100 },
    responses: {
      200: one({
        mappingId: ids.mapping,
        items: [{ trashId: ids.trash, path: OLD_PATH, title: old.title, revision: old.revision, size: old.sizeBytes, deletedAt: at.deleted, restoredAt: null }],
        nextCursor: null,
        hasMore: false,
      }),
    },
  },
  restoreNote: {
    parameters: { trashId: ids.trash },
    request: one({ mappingId: ids.mapping, dryRun: false }),
    responses: {
      200: one({ applied: true, dryRun: false, operation: 'restore', mappingId: ids.mapping, trashId: ids.trash, path: OLD_PATH, beforeRevision: null, afterRevision: old.revision, eventId: '46' }),
    },
  },
  listEvents: {
    parameters: { mappingId: ids.mapping, since: eventCursorAfter(40), limit: 100 },
    responses: {
      200: one({
        mappingId: ids.mapping,
        events: [
          noteEvent(41, 'note.created', PLAN_PATH, null, plan.revision, { idempotencyKey: 'plan-create-0302' }),
          noteEvent(42, 'note.replaced', PLAN_PATH, plan.revision, planV2.revision, { occurredAt: at.planReplaced, source: 'mcp:create_or_append_note', idempotencyKey: 'plan-v2' }),
        ],
        nextCursor: eventCursorAfter(42),
        hasMore: false,
      }),
    },
  },
  callMcp: {
    request: {
      examples: {
        searchModern: {
          summary: 'tools/call (2026-07-28: _meta version and the MCP-Protocol-Version, Mcp-Method, Mcp-Name headers)',
          value: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { _meta: mcpMeta, name: 'search_notes', arguments: { mappingId: ids.mapping, query: 'launch plan', limit: 5 } } },
        },
        listModern: { summary: 'tools/list (2026-07-28)', value: { jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: mcpMeta } } },
        initializeLegacy: {
          summary: 'initialize (legacy 2024-11-05 clients)',
          value: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'example-client', version: '1.0.0' } } },
        },
      },
    },
    responses: {
      200: {
        examples: {
          toolResult: {
            summary: 'A tool result (data twice: JSON text and structuredContent)',
            value: {
              jsonrpc: '2.0',
              id: 7,
              result: {
                content: [{ type: 'text', text: JSON.stringify({ results: [{ path: PLAN_PATH, title: plan.title, snippet: 'Draft the **launch** note' }], truncated: false }) }],
                structuredContent: { results: [{ path: PLAN_PATH, title: plan.title, snippet: 'Draft the **launch** note' }], truncated: false },
                resultType: 'complete',
              },
            },
          },
          methodNotFound: { summary: 'Unknown method (-32601)', value: { jsonrpc: '2.0', id: 8, error: { code: -32601, message: 'Method not found: resources/list' } } },
        },
      },
      400: one({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32020, message: 'Missing Mcp-Name header (required on 2026-07-28 requests).', data: { header: 'Mcp-Name', headerValue: null } },
      }),
      401: one({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Send Authorization: Bearer <personal access token>.', data: { code: 'authentication_required', status: 401, requestId: ids.request } } }),
      403: one({ jsonrpc: '2.0', id: null, error: { code: -32003, message: 'The account is not active.', data: { code: 'account_inactive', status: 403, requestId: ids.request } } }),
      413: one({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'The request body is larger than allowed.', data: { code: 'payload_too_large', status: 413, requestId: ids.request } } }),
      415: one({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'MCP requests are application/json.', data: { code: 'unsupported_media_type', status: 415, requestId: ids.request } } }),
      429: one({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32029, message: 'At most 300 MCP requests a minute.', data: { code: 'rate_limited', status: 429, requestId: ids.request, minuteLimit: 300, monthLimit: 100000, interface: 'mcp' } },
      }),
      500: one({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'An unexpected error occurred.', data: { code: 'internal_error', status: 500, requestId: ids.request } } }),
    },
  },
  readAutomationCatalog: {
    responses: {
      200: one({
        version: 1,
        actionKinds: [
          { kind: actionKinds[0], description: 'Write one note (create or replace; replacing needs expectedHash) in a vault of the workspace.', bounds: { contentBytes: 1_048_576 } },
          { kind: actionKinds[1], description: 'Write up to 100 notes in one vault of the workspace, all or nothing.', bounds: { actions: 100, contentBytes: 8 * 1_048_576 } },
        ],
        proposalStates: [...proposalStates],
      }),
    },
  },
  readAdapter: { parameters: { bridge: adapters[0]!.bridge }, responses: { 200: one(adapters[0]) } },
  listTemplates: { responses: { 200: one({ templates: templates.map(({ configuration: _c, ...summary }) => summary) }) } },
  readTemplate: { parameters: { id: templates[0]!.id }, responses: { 200: one(templates[0]) } },
  downloadTemplate: {
    parameters: { id: templates[1]!.id },
    responses: {
      200: one({
        schema: 'hnp.automation-template',
        ...templates[1],
        authority: 'None: a template is configuration input. Triggers and proposals it describes still need workspace permissions and review.',
      }),
    },
  },
  ingestEvent: {
    request: one({ workspaceId: ids.workspace, type: 'capture.created', source: 'generic-webhook', occurredAt: '2026-03-02T10:12:00+01:00', data: automationEvent.data }),
    responses: { 201: one({ event: automationEvent, runIds: [ids.run] }), 200: one({ event: automationEvent, runIds: [ids.run] }) },
  },
  readEvent: { parameters: { id: ids.event }, responses: { 200: one(automationEvent) } },
  createTrigger: {
    request: one({
      workspaceId: ids.workspace,
      name: trigger.name,
      kind: 'event',
      eventType: 'capture.created',
      filter: trigger.filter,
      proposal: trigger.proposal,
    }),
    responses: { 201: one(trigger) },
  },
  listTriggers: { parameters: { workspaceId: ids.workspace }, responses: { 200: one({ triggers: [trigger] }) } },
  readTrigger: { parameters: { id: ids.trigger }, responses: { 200: one(trigger) } },
  updateTrigger: { parameters: { id: ids.trigger }, request: one({ status: 'paused' }), responses: { 200: one({ ...trigger, status: 'paused', updatedAt: at.planCreated }) } },
  deleteTrigger: { parameters: { id: ids.trigger } },
  listRuns: {
    parameters: { workspaceId: ids.workspace, limit: 100 },
    responses: {
      200: one({
        runs: [
          { id: ids.run, workspaceId: ids.workspace, triggerId: ids.trigger, eventId: ids.event, status: 'succeeded', proposalId: ids.proposal, error: null, createdAt: at.eventReceived, processedAt: at.proposed },
        ],
      }),
    },
  },
  processRuns: { request: one({ workspaceId: ids.workspace }), responses: { 200: one({ processed: [{ runId: ids.run, proposalId: ids.proposal }], resumedReviews: [] }) } },
  createWebhookEndpoint: {
    request: one({ workspaceId: ids.workspace, url: endpoint.url, eventTypes: endpoint.eventTypes, description: endpoint.description }),
    responses: { 201: one({ ...endpoint, secret: 'whsec_q8Kf2ZbN4xW1tYc7LmP0sR3vJ6hA9dE5' }) },
  },
  listWebhookEndpoints: { parameters: { workspaceId: ids.workspace }, responses: { 200: one({ endpoints: [endpoint] }) } },
  readWebhookEndpoint: { parameters: { id: ids.endpoint }, responses: { 200: one(endpoint) } },
  deleteWebhookEndpoint: { parameters: { id: ids.endpoint } },
  listWebhookExecutions: {
    parameters: { workspaceId: ids.workspace, limit: 100 },
    responses: {
      200: one({
        executions: [
          {
            id: '1207',
            endpointId: ids.endpoint,
            messageId: 'msg_2b7e0c41d9a3f58e6c1b0d47a2',
            eventId: ids.event,
            attempt: 1,
            activityAttempt: 1,
            repeat: false,
            outcome: 'delivered',
            statusCode: 204,
            errorCode: null,
            error: null,
            durationMs: 87,
            createdAt: at.eventReceived,
          },
        ],
        nextCursor: null,
      }),
    },
  },
  createProposal: {
    request: one({ workspaceId: ids.workspace, bridge: 'generic-webhook', action: capturedAction, summary: proposal.summary }),
    // Opened with the proposal (decision 96): pending review in the 201.
    responses: { 201: one({ ...proposal, state: 'pending_review' }) },
  },
  listProposals: {
    parameters: { workspaceId: ids.workspace, state: 'pending_review', limit: 50 },
    responses: { 200: one({ proposals: [{ ...proposal, state: 'pending_review' }], nextCursor: null }) },
  },
  readProposal: {
    parameters: { id: ids.proposal, changedFrom: 'approved,executing', wait: 20 },
    responses: {
      200: one({
        ...proposal,
        state: 'executed',
        reviewerAccountId: ids.reviewer,
        decisionReason: 'Looks right',
        updatedAt: at.executed,
        history: [
          { state: 'proposed', occurredAt: at.proposed, actorAccountId: ids.account, detail: {} },
          { state: 'pending_review', occurredAt: at.proposed, actorAccountId: null, detail: {} },
          { state: 'approved', occurredAt: at.approved, actorAccountId: ids.reviewer, detail: { by: 'reviewer' } },
          { state: 'executing', occurredAt: at.approved, actorAccountId: ids.reviewer, detail: {} },
          { state: 'executed', occurredAt: at.executed, actorAccountId: null, detail: { transactionId: ids.transaction } },
        ],
        executions: [
          {
            kind: 'apply',
            state: 'succeeded',
            undoPlan: { mappingId: ids.mapping, entries: [{ path: capturedAction.path, before: null }] },
            receipt: {
              proposalId: ids.proposal,
              kind: 'apply',
              transactionId: ids.transaction,
              changes: [{ path: capturedAction.path, operation: 'create', beforeRevision: null, afterRevision: printer.revision, eventId: '47' }],
              completedAt: at.executed,
            },
            error: null,
            attempts: 1,
            startedAt: at.approved,
            finishedAt: at.executed,
          },
        ],
      }),
    },
  },
  previewProposal: {
    parameters: { id: ids.proposal },
    responses: {
      200: one({
        proposalId: ids.proposal,
        actionKind: 'note.write',
        computedAt: at.proposed,
        verdict: 'applies',
        transaction: {
          applied: false,
          dryRun: true,
          mappingId: ids.mapping,
          transactionId: null,
          results: [
            {
              index: 0,
              operation: 'create',
              mappingId: ids.mapping,
              path: capturedAction.path,
              title: printer.title,
              beforeRevision: null,
              afterRevision: printer.revision,
              size: printer.sizeBytes,
              revisionRequired: false,
              diff: `--- /dev/null\n+++ b/${capturedAction.path}\n@@ -0,0 +1,3 @@\n+# Printer invoice\n+\n+${captureText}\n`,
              diffTruncated: false,
            },
          ],
        },
        problem: null,
      }),
    },
  },
  approveProposal: { parameters: { id: ids.proposal }, request: one({ reason: 'Looks right' }), responses: { 200: one({ id: ids.proposal, state: 'approved' }) } },
  rejectProposal: { parameters: { id: ids.proposal }, request: one({ reason: 'Wrong vault' }), responses: { 200: one({ id: ids.proposal, state: 'rejected' }) } },
  undoProposal: { parameters: { id: ids.proposal }, responses: { 202: one({ id: ids.proposal, state: 'undoing', workflowId: `forge-undo-${ids.proposal}-1` }) } },
};

// ---- problems --------------------------------------------------------------------------------

/** A realistic detail (and extension members) for codes whose title alone would be vague. */
const problemDetails: Partial<Record<ErrorCode, { detail?: string; extensions?: Record<string, unknown> }>> = {
  invalid_request: {
    detail: '/querystring/limit: Too big: expected number to be <=1000',
    extensions: { errors: [{ pointer: '/querystring/limit', message: 'Too big: expected number to be <=1000', code: 'too_big' }] },
  },
  malformed_json: { detail: "Expected ',' or '}' after property value in JSON at position 41" },
  invalid_character: {
    detail: '/body/content: strings may not contain U+0000.',
    extensions: { errors: [{ pointer: '/body/content', message: 'contains U+0000 (NUL), which no string may hold', code: 'nul_character' }] },
  },
  json_too_deep: { detail: 'JSON nesting deeper than 64 levels at /body/data/a/a/a.', extensions: { maxDepth: 64 } },
  duplicate_header: {
    detail: 'The authorization header was sent more than once; send it once.',
    extensions: { errors: [{ pointer: '/headers/authorization', message: 'sent more than once' }] },
  },
  unsupported_media_type: { detail: 'Unsupported Media Type: application/x-yaml' },
  payload_too_large: { detail: 'Request body is too large' },
  intelligence_budget_exhausted: {
    extensions: { limitMicrodollars: 50_000_000, committedMicrodollars: 49_998_200, requiredMicrodollars: 3_710, resetsAt: '2026-12-01T00:00:00.000Z' },
  },
  education_context_learner_record: {
    detail: 'The education context describes a person (diagnosis); describe the class in aggregate.',
    extensions: { errors: [{ pointer: '/body/educationContext/constraints/0', message: 'learner-record language (diagnosis)', code: 'diagnosis' }] },
  },
  authentication_required: { detail: 'Send Authorization: Bearer <personal access token>.' },
  entitlement_required: { detail: 'The premium plan does not include the REST API.', extensions: { plan: 'premium', requiredPlans: ['developer_agent', 'team'] } },
  permission_denied: { detail: 'Your role in this workspace lacks the automation.manage permission.', extensions: { requiredPermission: 'automation.manage' } },
  mapping_not_found: { extensions: { mappingId: ids.mapping } },
  workspace_not_found: { extensions: { workspaceId: ids.workspace } },
  not_found: { detail: `No trigger ${ids.trigger}.` },
  invalid_path: {
    detail: '/path: a segment may not end in a dot or a space',
    extensions: { errors: [{ pointer: '/path', message: 'a segment may not end in a dot or a space', code: 'invalid_path' }] },
  },
  path_not_addressable: { extensions: { how: 'List the vault with GET /api/dev/notes and read deeper notes with the MCP tool get_note_content.' } },
  invalid_revision: {
    detail: '/headers/if-match is not a revision.',
    extensions: { errors: [{ pointer: '/headers/if-match', message: 'expected sha256:<64 hex>', code: 'invalid_revision' }] },
  },
  duplicate_path: { detail: `/actions/1/path: ${PLAN_PATH} is written twice`, extensions: { errors: [{ pointer: '/actions/1/path', message: 'duplicate path', code: 'duplicate_path' }] } },
  note_too_large: { detail: 'The content is 1048577 bytes; the limit is 1048576.', extensions: { errors: [{ pointer: '/content', message: 'too large', code: 'note_too_large' }] } },
  transaction_too_large: { detail: 'At most 100 actions; got 101.' },
  note_not_found: { detail: `No live note at ${PLAN_PATH}.` },
  trash_item_restored: { detail: `Restored at ${at.planReplaced}.` },
  note_exists: { detail: `A live note exists at ${OLD_PATH}; delete or rename it first.` },
  revision_required: {
    extensions: { currentRevision: plan.revision, errors: [{ pointer: '/expectedHash', message: 'required when replacing', code: 'revision_required' }] },
  },
  revision_conflict: {
    detail: `The note's current revision is ${planV2.revision}, not ${plan.revision}.`,
    extensions: { currentRevision: planV2.revision, errors: [{ pointer: '/expectedHash', message: 'stale revision', code: 'revision_conflict' }] },
  },
  precondition_failed: { detail: `If-Match ${plan.revision} does not match the current revision.`, extensions: { currentRevision: planV2.revision } },
  path_case_conflict: { detail: '"projects/plan.md" already exists; paths may not differ only by case.', extensions: { existingPath: 'projects/plan.md' } },
  proposal_not_found: { extensions: { proposalId: ids.proposal } },
  self_approval_forbidden: { detail: 'The proposer cannot decide on their own proposal.' },
  proposal_not_pending: { detail: 'The proposal is executed.', extensions: { state: 'executed' } },
  proposal_not_executed: { detail: 'The proposal is pending_review.', extensions: { state: 'pending_review' } },
  rate_limited: { detail: 'At most 600 REST requests a minute.', extensions: { minuteLimit: 600, monthLimit: 100000, interface: 'rest' } },
  monthly_limit_exceeded: { detail: 'The developer_agent plan allows 100000 REST requests a month.', extensions: { minuteLimit: 600, monthLimit: 100000, interface: 'rest' } },
  not_ready: {
    detail: 'Unavailable: temporal.',
    extensions: { checks: { postgres: { ok: true, latencyMs: 1 }, temporal: { ok: false, latencyMs: 2000, error: 'timed out after 2000 ms' } } },
  },
};

/** The problem+json body the API answers `code` with at `instance`. */
export function problemExample(code: ErrorCode, instance: string): Record<string, unknown> {
  const { status, title } = errorCatalog[code];
  const known = problemDetails[code];
  return {
    type: `/problems/${code}`,
    title,
    status,
    ...(known?.detail ? { detail: known.detail } : {}),
    instance,
    code,
    requestId: ids.request,
    ...known?.extensions,
  };
}

/** Example values of query and path parameters that mean the same everywhere. */
export const parameterExamples: Record<string, unknown> = {
  mappingId: ids.mapping,
  workspaceId: ids.workspace,
  trashId: ids.trash,
  dryRun: 'true',
};
