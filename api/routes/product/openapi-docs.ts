// Realistic examples of the Product Runtime's core operations for the OpenAPI document, one named
// export per operation: each route passes its own as `schema.examples` (the descriptions stand
// beside the routes, in `schema.docs`). They share the ids below, and are built with the SDK's own
// envelope helpers and checked against the schemas by redocly in .ci/run, so they are what the
// runtime answers.
import { envelope, unavailable } from '@hosted-notes/runtime-sdk';
import type { DocumentContribution } from '../../openapi.ts';
import type { OperationExamples } from '../../openapi-examples.ts';

const ids = {
  organization: '0c7b5cfe-3b57-4f14-9b8f-3c1e1b0e6a51',
  product: '5d1f0f43-8a53-4b7e-9a8e-16e0f6a1c7d2',
  installation: '9a3e2c11-4f5b-4d8a-8d2b-7a6c5b4e3d21',
  principal: 'e2b7c9d4-1a3f-4e5b-9c8d-2f1e0d9c8b7a',
  credential: '3f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f',
  workspace: '17b19bda-82dd-420d-b496-80caace03698',
  vault: '7e4a2c1b-9d8f-4e3a-b5c6-0a1b2c3d4e5f',
  grant: '4c3b2a19-8e7d-4f6c-a5b4-3d2e1f0a9b8c',
  binding: '8b7a6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d',
  proposal: 'c638cb44-3837-4419-b8d9-0b3a123a7a05',
} as const;

const revision = 'sha256:1c6d8f6f4a1c49e1b6c1b4e3b7f7b5a6d5e1f0c2a4b3d2e1f0a9b8c7d6e5f4a3';
const newRevision = 'sha256:9f2c4e6a8b0d1f3e5a7c9b2d4f6e8a0c1b3d5f7e9a2c4b6d8f0e1a3c5b7d9f2e';

const one = (value: unknown) => ({ value });

const grantExample = {
  grantId: ids.grant,
  installationId: ids.installation,
  vaultId: ids.vault,
  access: 'write',
  grantedAt: '2026-11-02T10:00:00.000Z',
  grantedByAccountId: 'a6ccc3bc-0487-4058-a4fc-e2a49e890eee',
  revokedAt: null,
};
const bindingExample = {
  bindingId: ids.binding,
  vaultId: ids.vault,
  access: 'write',
  reason: 'Lesson Studio publishes reviewed lesson plans here.',
  state: 'pending',
  grantId: null,
  createdAt: '2026-11-02T09:58:00.000Z',
  decidedAt: null,
};

/** The person's side of vault bindings, on the Developer REST API (api/routes/dev/product-installations.ts). */
export const bindingDecisionExamples: Record<string, OperationExamples> = {
  listProductInstallations: {
    parameters: { workspaceId: ids.workspace },
    responses: {
      200: one({
        installations: [
          {
            installationId: ids.installation,
            organization: { id: ids.organization, name: 'District 9 Schools' },
            product: { id: ids.product, slug: 'lesson-studio', name: 'Lesson Studio' },
            status: 'active',
            grants: [],
            pendingBindings: [bindingExample],
          },
        ],
      }),
    },
  },
  grantVaultToInstallation: {
    parameters: { workspaceId: ids.workspace },
    request: one({ installationId: ids.installation, vaultId: ids.vault, access: 'write', bindingId: ids.binding }),
    responses: { 200: one(grantExample), 201: one(grantExample) },
  },
  revokeVaultGrant: {
    parameters: { workspaceId: ids.workspace, grantId: ids.grant },
    responses: { 200: one({ ...grantExample, revokedAt: '2026-11-20T16:40:00.000Z' }) },
  },
  declineVaultBinding: {
    parameters: { workspaceId: ids.workspace, bindingId: ids.binding },
    responses: { 200: one({ ...bindingExample, state: 'declined', decidedAt: '2026-11-02T11:30:00.000Z' }) },
  },
};

// ---- per runtime operation (runtime.ts, notes.ts, vault-bindings.ts, context-scopes.ts) ----

export const getRuntimeContextExamples: OperationExamples = {
  responses: {
    200: one(
      envelope('runtime.context', {
        adapter: 'hosted',
        runtimeVersion: '1',
        organization: { id: ids.organization, name: 'District 9 Schools' },
        product: { id: ids.product, slug: 'lesson-studio', name: 'Lesson Studio' },
        installation: { id: ids.installation },
        principal: { id: ids.principal, name: 'lesson-studio-backend' },
        credential: { id: ids.credential, displayPrefix: 'hnp_svc_Qm3v', scopes: ['runtime.read', 'notes.read', 'notes.write'], expiresAt: null },
        workspace: { id: ids.workspace, name: 'District 9 curriculum' },
        presentation: {
          displayName: 'District 9 Learning',
          colors: { primary: '#1d4ed8', accent: '#f59e0b', background: '#ffffff', text: '#111827' },
          logo: { kind: 'url', ref: 'https://cdn.district9.example/logo.svg' },
          terminology: { 'nav.home': 'Home', 'nav.courses': 'Classes', 'nav.library': 'Resource library' },
        },
      }),
    ),
  },
};

export const getCapabilitiesExamples: OperationExamples = {
  responses: {
    200: one(
      envelope('runtime.capabilities', {
        adapter: 'hosted',
        capabilities: [
          { id: 'notes.read', available: true, reason: null, detail: 'Available.', requiredScopes: ['notes.read'] },
          { id: 'notes.write', available: false, reason: 'grant_missing', detail: 'No hosted vault is granted for writing.', requiredScopes: ['notes.write'] },
          { id: 'intelligence.generate', available: false, reason: 'capability_not_configured', detail: 'No model provider is configured on this service.', requiredScopes: ['intelligence.execute'] },
          { id: 'pulse', available: false, reason: 'not_supported', detail: 'Pulse is not offered by this service version.', requiredScopes: [] },
        ],
      }),
    ),
  },
};

export const getWorkspaceExamples: OperationExamples = {
  responses: {
    200: {
      examples: {
        granted: {
          summary: 'A vault is granted: complete',
          value: envelope('runtime.workspace', {
            workspace: { id: ids.workspace, name: 'District 9 curriculum' },
            vaults: [{ vaultId: ids.vault, name: 'Algebra I', access: 'write', grantId: ids.grant, grantedAt: '2026-11-02T10:00:00.000Z' }],
            pendingBindings: [],
          }),
        },
        nothingGranted: {
          summary: 'No vault granted yet: partial',
          value: envelope('runtime.workspace', { workspace: { id: ids.workspace, name: 'District 9 curriculum' }, vaults: [], pendingBindings: [] }, [
            { part: 'workspace.vaults', reason: 'grant_missing', detail: 'No hosted vault is granted to this installation yet.' },
          ]),
        },
      },
    },
  },
};

export const listNotesExamples: OperationExamples = {
  parameters: { vaultId: ids.vault },
  responses: {
    200: one(
      envelope('runtime.note-list', {
        vaultId: ids.vault,
        notes: [{ path: 'Units/Linear equations.md', title: 'Linear equations', revision, size: 1843, updatedAt: '2026-11-02T10:15:00.000Z' }],
        hasMore: false,
        nextCursor: null,
      }),
    ),
  },
};

export const readNoteExamples: OperationExamples = {
  parameters: { vaultId: ids.vault, path: 'Units/Linear equations.md' },
  responses: {
    200: one(
      envelope('runtime.note', {
        vaultId: ids.vault,
        path: 'Units/Linear equations.md',
        title: 'Linear equations',
        content: '# Linear equations\n\nSolve one-step equations, then two-step ones. See [[Units/Inequalities]].\n',
        revision,
        size: 1843,
        frontmatter: null,
        links: [{ kind: 'link', target: 'Units/Inequalities', heading: null, block: null, alias: null }],
        createdAt: '2026-11-02T10:15:00.000Z',
        updatedAt: '2026-11-02T10:15:00.000Z',
      }),
    ),
  },
};

export const publishNoteExamples: OperationExamples = {
  parameters: { vaultId: ids.vault },
  request: one({ path: 'Units/Linear equations.md', content: '# Linear equations\n\nNow with worked examples.\n', expectedRevision: revision, mode: 'preview' }),
  responses: {
    200: one(
      envelope('runtime.note-publication', {
        mode: 'preview',
        applied: false,
        vaultId: ids.vault,
        path: 'Units/Linear equations.md',
        title: 'Linear equations',
        operation: 'replace',
        beforeRevision: revision,
        afterRevision: newRevision,
        size: 47,
        revisionRequired: false,
        diff: '--- a/Units/Linear equations.md\n+++ b/Units/Linear equations.md\n@@ -1,3 +1,3 @@\n # Linear equations\n \n-Solve one-step equations.\n+Now with worked examples.\n',
        diffTruncated: false,
        eventId: null,
        replayed: false,
      }),
    ),
    201: one(
      envelope('runtime.note-publication', {
        mode: 'apply',
        applied: true,
        vaultId: ids.vault,
        path: 'Units/Quadratics.md',
        title: 'Quadratics',
        operation: 'create',
        beforeRevision: null,
        afterRevision: newRevision,
        size: 14,
        revisionRequired: null,
        diff: null,
        diffTruncated: null,
        eventId: '12',
        replayed: false,
      }),
    ),
  },
};

export const bindHostedVaultExamples: OperationExamples = {
  request: one({ vaultId: ids.vault, access: 'write', reason: 'Lesson Studio publishes reviewed lesson plans here.' }),
  responses: {
    200: one(envelope('runtime.vault-binding', { binding: null, grant: { grantId: ids.grant, vaultId: ids.vault, access: 'write' } })),
    202: one(
      envelope(
        'runtime.vault-binding',
        {
          binding: bindingExample,
          grant: null,
        },
        [{ part: 'grant', reason: 'grant_pending', detail: 'A person with workspace.manage in the workspace must grant this request.' }],
      ),
    ),
  },
};

export const listVaultBindingsExamples: OperationExamples = { responses: { 200: one(envelope('runtime.vault-binding-list', { bindings: [] })) } };

export const listAvailableScopesExamples: OperationExamples = {
  responses: {
    200: one(
      envelope('runtime.scope-list', {
        scopes: [
          { scopeId: 'course-algebra-1', name: 'Algebra I', kind: 'course', parentScopeId: 'district' },
          { scopeId: 'district', name: 'District', kind: 'workspace', parentScopeId: null },
        ],
        hasMore: false,
        nextCursor: null,
      }),
    ),
  },
};

export const getScopeContextExamples: OperationExamples = {
  parameters: { scopeId: 'course-algebra-1' },
  responses: {
    200: one(
      envelope('runtime.scope-context', {
        scope: { scopeId: 'course-algebra-1', name: 'Algebra I', kind: 'course', parentScopeId: 'district' },
        ancestry: [{ scopeId: 'district', name: 'District', kind: 'workspace', parentScopeId: null }],
        audience: { kind: 'course_educators', description: 'Educators teaching Algebra I' },
        workspace: { id: ids.workspace, name: 'District 9 curriculum' },
        vault: { vaultId: ids.vault, access: 'write' },
      }),
    ),
  },
};

export const getEffectiveScopePolicyExamples: OperationExamples = {
  parameters: { scopeId: 'course-algebra-1' },
  responses: {
    200: one(
      envelope('runtime.scope-policy', {
        scopeId: 'course-algebra-1',
        settings: [
          { key: 'memory.candidates', value: 'allowed', sourceScopeId: null },
          { key: 'memory.maxEntries', value: 1000, sourceScopeId: null },
          { key: 'intelligence.use', value: 'allowed', sourceScopeId: 'course-algebra-1' },
          { key: 'retentionDays', value: 365, sourceScopeId: 'district' },
        ],
      }),
    ),
  },
};

export const getScopeIntelligenceExamples: OperationExamples = {
  parameters: { scopeId: 'course-algebra-1' },
  responses: {
    200: {
      examples: {
        noProvider: {
          summary: 'No model provider configured: unavailable',
          value: unavailable('runtime.scope-intelligence', [{ part: 'intelligence', reason: 'capability_not_configured', detail: 'No model provider is configured on this service.' }]),
        },
        allowed: { summary: 'Allowed by the scope policy', value: envelope('runtime.scope-intelligence', { scopeId: 'course-algebra-1', allowed: true, reason: null }) },
      },
    },
  },
};

export const getScopeMemoryExamples: OperationExamples = {
  parameters: { scopeId: 'course-algebra-1' },
  responses: {
    200: one(
      envelope('runtime.scope-memory', {
        scopeId: 'course-algebra-1',
        items: [
          {
            memoryId: ids.proposal,
            scopeId: 'course-algebra-1',
            content: 'Students confuse slope with intercept when graphs start above zero.',
            proposalId: ids.proposal,
            reviewedAt: '2026-11-03T14:02:11.000Z',
            createdAt: '2026-11-03T14:02:11.000Z',
          },
        ],
        hasMore: false,
        nextCursor: null,
      }),
    ),
  },
};

export const getMemoryCandidateExamples: OperationExamples = {
  parameters: { scopeId: 'course-algebra-1', candidateId: ids.proposal },
  responses: {
    200: one(
      envelope('runtime.memory-candidate-status', {
        candidateId: ids.proposal,
        scopeId: 'course-algebra-1',
        proposalId: ids.proposal,
        state: 'executed',
        shared: true,
        decision: { decision: 'approved', reason: 'Matches what we see in class.', decidedAt: '2026-11-03T14:02:10.000Z' },
        expiresAt: '2026-11-10T13:40:00.000Z',
        receipts: [{ kind: 'apply', completedAt: '2026-11-03T14:02:11.000Z', changes: [{ path: `scope-memory/course-algebra-1/${ids.proposal}`, operation: 'create' }] }],
        createdAt: '2026-11-03T13:40:00.000Z',
      }),
    ),
  },
};

export const createSharedMemoryCandidateExamples: OperationExamples = {
  parameters: { scopeId: 'course-algebra-1' },
  request: one({ content: 'Students confuse slope with intercept when graphs start above zero.', rationale: 'Seen in three classes this week' }),
  responses: {
    201: one(
      envelope(
        'runtime.memory-candidate',
        { candidateId: ids.proposal, scopeId: 'course-algebra-1', proposalId: ids.proposal, state: 'pending_review', replayed: false, createdAt: '2026-11-03T13:40:00.000Z' },
        [{ part: 'memory', reason: 'review_pending', detail: 'Shared memory only after a person approves it and Forge executes it.' }],
      ),
    ),
  },
};

/**
 * The Product Runtime's contribution to the OpenAPI document beyond its routes' own schemas, handed
 * to api/openapi.ts by api/app.ts: the binding decisions' examples (the Developer REST routes that
 * answer them carry none of their own).
 */
export const productDocumentation: DocumentContribution = { examples: bindingDecisionExamples };
