// Realistic examples of the connection routes (index.ts) for the OpenAPI document, one named export
// per operation, passed by each route as its `schema.examples` (its descriptions stand beside it).
import { envelope, unavailable } from '@hosted-notes/runtime-sdk';
import type { OperationExamples } from '../../../openapi-examples.ts';

// ---- examples (built with the SDK's envelope helpers, checked against the schemas by redocly) ----

const ids = {
  connection: '3f6c1d2e-9a4b-4c7d-8e1f-2a3b4c5d6e7f',
  attempt: '8b2d4f6a-1c3e-4a5b-9d7f-0e1a2b3c4d5e',
  vault: '5a0f3c2e-1b4d-4e6f-8a9b-0c1d2e3f4a5b',
};
const driveScopes = ['https://www.googleapis.com/auth/drive.file'];
const classroomScopes = [
  'https://www.googleapis.com/auth/classroom.courses.readonly',
  'https://www.googleapis.com/auth/classroom.rosters.readonly',
  'https://www.googleapis.com/auth/classroom.coursework.students',
];
const connection = {
  connectionId: ids.connection,
  provider: 'google' as const,
  services: ['drive' as const, 'classroom' as const],
  grantedScopes: [...driveScopes, ...classroomScopes],
  state: 'active' as const,
  createdAt: '2026-11-23T09:20:41.512Z',
  revokedAt: null,
};
const document = {
  connectionId: ids.connection,
  fileId: '1ZpXq8Lr2sT4uV6wY8zA0bC2dE4fG6hI8',
  name: 'Fractions warm-up (Week 3)',
  mimeType: 'application/vnd.google-apps.document',
  version: '7',
  modifiedTime: '2026-11-23T09:31:05.220Z',
  replayed: false,
};
const notConfigured = (kind: string) =>
  unavailable(kind, [{ part: 'connections.google', reason: 'capability_not_configured', detail: 'No Google OAuth client is configured on this service; nothing is connected without it.' }]);
const one = (value: unknown) => ({ value });
const revision = 'sha256:9b1f0c8e2d4a6b8c0e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a2b4c6d';

export const startGoogleConnectionExamples: OperationExamples = {
  request: one({ services: ['drive', 'classroom'], returnTarget: 'https://studio.example/settings/integrations' }),
  responses: {
    201: one(
      envelope('service.connection-attempt', {
        attemptId: ids.attempt,
        authorizationUrl:
          'https://accounts.google.com/o/oauth2/v2/auth?access_type=offline&prompt=consent&response_type=code&client_id=1234-abc.apps.googleusercontent.com&redirect_uri=https%3A%2F%2Fnotes.example%2Fapi%2Fproduct%2Fv1%2Fconnections%2Fprovider%2Foauth%2Fcallback&scope=…&state=…&code_challenge=…&code_challenge_method=S256',
        services: ['drive', 'classroom'],
        scopes: [...driveScopes, ...classroomScopes],
        expiresAt: '2026-11-23T09:30:41.512Z',
      }),
    ),
    200: one(notConfigured('service.connection-attempt')),
  },
};

export const listConnectionsExamples: OperationExamples = { responses: { 200: one(envelope('service.connection-list', { connections: [connection], nextCursor: null })) } };

export const getConnectionExamples: OperationExamples = { parameters: { connectionId: ids.connection }, responses: { 200: one(envelope('service.connection', connection)) } };

export const revokeConnectionExamples: OperationExamples = {
  parameters: { connectionId: ids.connection },
  responses: {
    200: one(envelope('service.connection-revocation', { connection: { ...connection, state: 'revoked', revokedAt: '2026-11-24T15:02:11.004Z' }, providerRevocation: 'revoked' })),
  },
};

export const createDriveDocumentExamples: OperationExamples = {
  parameters: { connectionId: ids.connection },
  request: one({ name: 'Fractions warm-up (Week 3)', markdown: '# Fractions warm-up\n\n1. Fold a strip into halves, then quarters.\n' }),
  responses: { 201: one(envelope('service.drive-document', { ...document, version: '1' })), 200: one(envelope('service.drive-document', { ...document, version: '1', replayed: true })) },
};

export const getDriveDocumentExamples: OperationExamples = { parameters: { connectionId: ids.connection, fileId: document.fileId }, responses: { 200: one(envelope('service.drive-document', document)) } };

export const updateDriveDocumentExamples: OperationExamples = {
  parameters: { connectionId: ids.connection, fileId: document.fileId },
  request: one({ expectedVersion: '7', markdown: '# Fractions warm-up\n\n1. Fold a strip into halves, then quarters.\n2. Which strip shows 1/2?\n' }),
  responses: { 200: one(envelope('service.drive-document', { ...document, version: '8', modifiedTime: '2026-11-23T10:02:44.871Z' })) },
};

/** The note a Drive import would create, the same in the preview and the apply. */
const importedNote = {
  vaultId: ids.vault,
  path: 'Units/Fractions warm-up.md',
  title: 'Fractions warm-up',
  operation: 'create',
  beforeRevision: null,
  afterRevision: revision,
  size: 63,
};

export const importDriveDocumentExamples: OperationExamples = {
  parameters: { vaultId: ids.vault },
  request: one({ connectionId: ids.connection, fileId: document.fileId, path: 'Units/Fractions warm-up.md', mode: 'preview' }),
  responses: {
    200: one(
      envelope('service.drive-import', {
        document,
        publication: {
          mode: 'preview',
          applied: false,
          ...importedNote,
          revisionRequired: false,
          diff: '--- /dev/null\n+++ b/Units/Fractions warm-up.md\n@@ -0,0 +1,3 @@\n+# Fractions warm-up\n+\n+1. Fold a strip into halves, then quarters.\n',
          diffTruncated: false,
          eventId: null,
          replayed: false,
        },
      }),
    ),
    201: one(
      envelope('service.drive-import', {
        document,
        publication: { mode: 'apply', applied: true, ...importedNote, revisionRequired: null, diff: null, diffTruncated: null, eventId: '41', replayed: false },
      }),
    ),
  },
};

export const listClassroomCoursesExamples: OperationExamples = {
  parameters: { connectionId: ids.connection },
  responses: {
    200: one(
      envelope('service.classroom-courses', {
        courses: [{ id: '612345678901', name: 'Grade 4 Math', section: 'Period 2', room: 'B-114', alternateLink: 'https://classroom.google.com/c/NjEyMzQ1Njc4OTAx' }],
        nextPageToken: null,
      }),
    ),
  },
};

export const listClassroomRosterExamples: OperationExamples = {
  parameters: { connectionId: ids.connection, courseId: '612345678901' },
  responses: { 200: one(envelope('service.classroom-roster', { students: [{ userId: '104857392018475620193', fullName: 'Avery Kim' }], nextPageToken: null })) },
};

/** The assignment Classroom made, as the first answer and its replay show it. */
const exampleAssignment = {
  connectionId: ids.connection,
  courseId: '612345678901',
  courseWorkId: '723456789012',
  title: 'Fraction strips practice',
  state: 'PUBLISHED',
  alternateLink: 'https://classroom.google.com/c/NjEyMzQ1Njc4OTAx/a/NzIzNDU2Nzg5MDEy/details',
};

export const createClassroomAssignmentExamples: OperationExamples = {
  parameters: { connectionId: ids.connection, courseId: '612345678901' },
  request: one({ title: 'Fraction strips practice', description: 'Fold and label the strips, then answer the three questions.', materials: [{ url: 'https://docs.google.com/document/d/1ZpXq8Lr2sT4uV6wY8zA0bC2dE4fG6hI8' }], dueDate: '2026-11-28' }),
  responses: {
    201: one(envelope('service.classroom-assignment', { ...exampleAssignment, replayed: false })),
    200: one(envelope('service.classroom-assignment', { ...exampleAssignment, replayed: true })),
  },
};

export const listAssignmentAttachmentsExamples: OperationExamples = {
  parameters: { connectionId: ids.connection, courseId: '612345678901', courseWorkId: '723456789012' },
  responses: {
    200: one(
      envelope('service.classroom-attachments', {
        submissions: [
          {
            submissionId: 'Cg4I2q3ZxQEQvOfX0v8C',
            userId: '104857392018475620193',
            state: 'TURNED_IN',
            attachments: [{ kind: 'driveFile', title: 'My fraction strips.jpg', driveFileId: '1AbCdEfGhIjKlMnOpQrStUvWxYz012345' }],
          },
        ],
        nextPageToken: null,
      }),
    ),
  },
};
