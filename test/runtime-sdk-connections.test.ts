// The hosted adapter's wire handling of the delegated Google connection operations, against a
// loopback HTTP server that answers canned envelopes and problems in the shape of the issue-15
// contract: what the SDK sends (method, path, query, headers, body, Idempotency-Key) and that it
// parses each answer with its kind's DTO schema. A unit test of the SDK, not of the service: the
// service's own routes are tested against the app.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  classroomAssignmentSchema,
  classroomAttachmentListSchema,
  classroomCourseListSchema,
  classroomRosterSchema,
  connectionAttemptSchema,
  connectionListSchema,
  connectionRevocationSchema,
  connectionSchema,
  createHostedRuntime,
  driveDocumentSchema,
  driveImportResultSchema,
  dtoSchemas,
  RuntimeError,
  RuntimeResponseError,
  runtimeOperations,
} from '@hosted-notes/runtime-sdk';
import type { HostedRuntime, RuntimeKind, RuntimeOperationName } from '@hosted-notes/runtime-sdk';
import type { z } from 'zod';

type Received = { method: string; url: string; headers: Record<string, string | string[] | undefined>; body: string };
type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

const received: Received[] = [];
let answer: (request: Received) => Answer = () => ({ status: 500 });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    received.push(request);
    const { status, body, headers } = answer(request);
    res.writeHead(status, { 'content-type': 'application/json', 'x-service-runtime-version': '1', ...headers });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  });
});

let baseUrl: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

let generated: number;
let runtime: HostedRuntime;
beforeEach(() => {
  received.length = 0;
  generated = 0;
  runtime = createHostedRuntime({ baseUrl, credential: 'hnp_svc_connections', idempotencyKey: () => `generated-${++generated}` });
});

const MOUNT = '/api/product/v1';
const connectionId = '3b0f6c2e-8a51-4d2b-9f3e-6c1d2a7b8e90';
const vaultId = '6f1c2f3e-1f6a-4a57-9d7e-2b1f0f6d9a10';
const fileId = '1AbCdEf_ghIJ-kl';
const courseId = '612345678901';
const courseWorkId = '712345678901';

const complete = (kind: string, data: unknown) => ({ runtimeVersion: '1', kind, status: 'complete', data, missing: [] });
const problem = (status: number, code: string, extensions: Record<string, unknown> = {}): Answer => ({
  status,
  body: { type: `/problems/${code}`, title: code, status, code, requestId: 'req-1', ...extensions },
  headers: { 'content-type': 'application/problem+json' },
});

const connection = {
  connectionId,
  provider: 'google',
  services: ['drive', 'classroom'],
  grantedScopes: ['https://www.googleapis.com/auth/drive.file', 'https://www.googleapis.com/auth/classroom.courses.readonly'],
  state: 'active',
  createdAt: '2026-11-23T10:00:00.000Z',
  revokedAt: null,
};
const driveDocument = {
  connectionId,
  fileId,
  name: 'Unit 1 plan',
  mimeType: 'application/vnd.google-apps.document',
  version: '7',
  modifiedTime: '2026-11-23T10:05:00.000Z',
  replayed: false,
};
const assignment = { connectionId, courseId, courseWorkId, title: 'Reading check', state: 'PUBLISHED', alternateLink: `https://classroom.google.com/c/${courseId}/a/${courseWorkId}`, replayed: false };

type Case = {
  name: RuntimeOperationName;
  call: (runtime: HostedRuntime) => Promise<{ data: unknown }>;
  sent: { method: string; path: string; body?: unknown; idempotencyKey?: string };
  status: number;
  kind: RuntimeKind;
  schema: z.ZodType;
  data: unknown;
};

const cases: Case[] = [
  {
    name: 'startGoogleConnection',
    call: (r) => r.startGoogleConnection({ services: ['drive', 'classroom'], returnTarget: 'https://app.example.test/connected?lesson=4' }),
    sent: { method: 'POST', path: '/connections/google', body: { services: ['drive', 'classroom'], returnTarget: 'https://app.example.test/connected?lesson=4' } },
    status: 201,
    kind: 'service.connection-attempt',
    schema: connectionAttemptSchema,
    data: {
      attemptId: '9a7e2c41-5b3d-4f6a-8c2e-1d0b9e8f7a65',
      authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth?response_type=code&state=opaque',
      services: ['drive', 'classroom'],
      scopes: ['https://www.googleapis.com/auth/drive.file', 'https://www.googleapis.com/auth/classroom.courses.readonly'],
      expiresAt: '2026-11-23T10:15:00.000Z',
    },
  },
  {
    name: 'listConnections',
    call: (r) => r.listConnections({ limit: 50, cursor: 'c1' }),
    sent: { method: 'GET', path: '/connections?limit=50&cursor=c1' },
    status: 200,
    kind: 'service.connection-list',
    schema: connectionListSchema,
    data: { connections: [connection], nextCursor: 'c2' },
  },
  {
    name: 'getConnection',
    call: (r) => r.getConnection(connectionId),
    sent: { method: 'GET', path: `/connections/${connectionId}` },
    status: 200,
    kind: 'service.connection',
    schema: connectionSchema,
    data: connection,
  },
  {
    name: 'revokeConnection',
    call: (r) => r.revokeConnection(connectionId),
    sent: { method: 'DELETE', path: `/connections/${connectionId}` },
    status: 200,
    kind: 'service.connection-revocation',
    schema: connectionRevocationSchema,
    data: { connection: { ...connection, state: 'revoked', revokedAt: '2026-11-23T11:00:00.000Z' }, providerRevocation: 'revoked' },
  },
  {
    name: 'createDriveDocument',
    call: (r) => r.createDriveDocument(connectionId, { name: 'Unit 1 plan', markdown: '# Unit 1\n' }, { idempotencyKey: 'drive-create-1' }),
    sent: { method: 'POST', path: `/connections/${connectionId}/drive/documents`, body: { name: 'Unit 1 plan', markdown: '# Unit 1\n' }, idempotencyKey: 'drive-create-1' },
    status: 201,
    kind: 'service.drive-document',
    schema: driveDocumentSchema,
    data: driveDocument,
  },
  {
    name: 'getDriveDocument',
    call: (r) => r.getDriveDocument(connectionId, fileId),
    sent: { method: 'GET', path: `/connections/${connectionId}/drive/documents/${fileId}` },
    status: 200,
    kind: 'service.drive-document',
    schema: driveDocumentSchema,
    data: driveDocument,
  },
  {
    name: 'updateDriveDocument',
    call: (r) => r.updateDriveDocument(connectionId, fileId, { expectedVersion: '7', markdown: '# Unit 1, revised\n' }),
    sent: { method: 'PUT', path: `/connections/${connectionId}/drive/documents/${fileId}`, body: { expectedVersion: '7', markdown: '# Unit 1, revised\n' } },
    status: 200,
    kind: 'service.drive-document',
    schema: driveDocumentSchema,
    data: { ...driveDocument, version: '8', modifiedTime: '2026-11-23T10:06:00.000Z' },
  },
  {
    name: 'importDriveDocument',
    call: (r) => r.importDriveDocument(vaultId, { connectionId, fileId, path: 'Units/Unit 1.md', mode: 'apply' }, { idempotencyKey: 'import-1' }),
    sent: { method: 'POST', path: `/vaults/${vaultId}/imports/drive`, body: { connectionId, fileId, path: 'Units/Unit 1.md', mode: 'apply' }, idempotencyKey: 'import-1' },
    status: 200,
    kind: 'service.drive-import',
    schema: driveImportResultSchema,
    data: {
      document: driveDocument,
      publication: {
        mode: 'apply',
        applied: true,
        vaultId,
        path: 'Units/Unit 1.md',
        title: 'Unit 1',
        operation: 'create',
        beforeRevision: null,
        afterRevision: `sha256:${'b'.repeat(64)}`,
        size: 9,
        revisionRequired: null,
        diff: null,
        diffTruncated: null,
        eventId: 'e-import-1',
        replayed: false,
      },
    },
  },
  {
    name: 'listClassroomCourses',
    call: (r) => r.listClassroomCourses(connectionId, { pageToken: 'p1', pageSize: 20 }),
    sent: { method: 'GET', path: `/connections/${connectionId}/classroom/courses?pageToken=p1&pageSize=20` },
    status: 200,
    kind: 'service.classroom-courses',
    schema: classroomCourseListSchema,
    data: { courses: [{ id: courseId, name: 'Biology 9', section: 'Period 2', room: null, alternateLink: `https://classroom.google.com/c/${courseId}` }], nextPageToken: 'p2' },
  },
  {
    name: 'listClassroomRoster',
    call: (r) => r.listClassroomRoster(connectionId, courseId),
    sent: { method: 'GET', path: `/connections/${connectionId}/classroom/courses/${courseId}/students` },
    status: 200,
    kind: 'service.classroom-roster',
    schema: classroomRosterSchema,
    data: { students: [{ userId: '1001', fullName: 'Student One' }], nextPageToken: null },
  },
  {
    name: 'createClassroomAssignment',
    call: (r) =>
      r.createClassroomAssignment(
        connectionId,
        courseId,
        { title: 'Reading check', description: 'Read chapter 2.', materials: [{ url: 'https://app.example.test/units/1' }], dueDate: '2026-12-01' },
        { idempotencyKey: 'assignment-1' },
      ),
    sent: {
      method: 'POST',
      path: `/connections/${connectionId}/classroom/courses/${courseId}/assignments`,
      body: { title: 'Reading check', description: 'Read chapter 2.', materials: [{ url: 'https://app.example.test/units/1' }], dueDate: '2026-12-01' },
      idempotencyKey: 'assignment-1',
    },
    status: 201,
    kind: 'service.classroom-assignment',
    schema: classroomAssignmentSchema,
    data: assignment,
  },
  {
    name: 'listAssignmentAttachments',
    call: (r) => r.listAssignmentAttachments(connectionId, courseId, courseWorkId, { pageSize: 10 }),
    sent: { method: 'GET', path: `/connections/${connectionId}/classroom/courses/${courseId}/assignments/${courseWorkId}/attachments?pageSize=10` },
    status: 200,
    kind: 'service.classroom-attachments',
    schema: classroomAttachmentListSchema,
    data: {
      submissions: [
        {
          submissionId: 'Cg4I1',
          userId: '1001',
          state: 'TURNED_IN',
          attachments: [
            { kind: 'driveFile', title: 'Essay', driveFileId: '1xYz' },
            { kind: 'link', title: null, url: 'https://example.org/essay' },
          ],
        },
      ],
      nextPageToken: null,
    },
  },
];

const caseOf = (name: RuntimeOperationName) => cases.find((c) => c.name === name)!;

describe('hosted adapter: delegated Google connections on the wire', () => {
  it('sends each operation to its route with its method, query, JSON body and key, and parses each kind with its DTO schema', async () => {
    for (const c of cases) {
      received.length = 0;
      answer = () => ({ status: c.status, body: complete(c.kind, c.data) });
      const result = await c.call(runtime);
      expect(received, c.name).toHaveLength(1);
      const request = received[0]!;
      expect({ method: request.method, url: request.url }, c.name).toEqual({ method: c.sent.method, url: `${MOUNT}${c.sent.path}` });
      expect(request.headers, c.name).toMatchObject({ authorization: 'Bearer hnp_svc_connections', 'x-service-runtime-version': '1', accept: 'application/json' });
      expect(request.headers['idempotency-key'], c.name).toBe(c.sent.idempotencyKey);
      if (c.sent.body === undefined) {
        expect(request.body, c.name).toBe('');
        expect(request.headers['content-type'], c.name).toBeUndefined();
      } else {
        expect(request.headers['content-type'], c.name).toBe('application/json');
        expect(JSON.parse(request.body), c.name).toEqual(c.sent.body);
      }
      // The operation answers its kind, whose schema is the DTO's own.
      expect(runtimeOperations[c.name].kind, c.name).toBe(c.kind);
      expect(dtoSchemas[c.kind], c.name).toBe(c.schema);
      expect(result, c.name).toEqual(complete(c.kind, c.data));
      expect(c.schema.parse(result.data), c.name).toEqual(c.data);
    }
    // Every connection operation of the table was exercised once.
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it('creates that reach Google need the caller\'s key: none is generated, and a retry with it replays', async () => {
    // A JavaScript caller without the options: refused before anything is sent.
    const unkeyed = runtime as unknown as { createDriveDocument: (...args: unknown[]) => Promise<unknown>; createClassroomAssignment: (...args: unknown[]) => Promise<unknown> };
    await expect(unkeyed.createDriveDocument(connectionId, { name: 'A', markdown: '' })).rejects.toThrow(TypeError);
    await expect(unkeyed.createDriveDocument(connectionId, { name: 'A', markdown: '' }, {})).rejects.toThrow(TypeError);
    await expect(unkeyed.createClassroomAssignment(connectionId, courseId, { title: 'A' })).rejects.toThrow(TypeError);
    expect(received).toEqual([]);
    expect(generated).toBe(0);

    // The first answer is lost to the caller; the retry sends the same key and gets the same file, replayed.
    let attempts = 0;
    answer = () =>
      ++attempts === 1
        ? { status: 201, body: complete('service.drive-document', driveDocument) }
        : { status: 200, body: complete('service.drive-document', { ...driveDocument, replayed: true }), headers: { 'idempotent-replayed': 'true' } };
    await runtime.createDriveDocument(connectionId, { name: 'Unit 1 plan', markdown: '# Unit 1\n' }, { idempotencyKey: 'drive-create-2' });
    const replay = await runtime.createDriveDocument(connectionId, { name: 'Unit 1 plan', markdown: '# Unit 1\n' }, { idempotencyKey: 'drive-create-2' });
    expect(replay.data).toEqual({ ...driveDocument, replayed: true });

    answer = () => ({ status: 200, body: complete('service.classroom-assignment', { ...assignment, replayed: true }), headers: { 'idempotent-replayed': 'true' } });
    const again = await runtime.createClassroomAssignment(connectionId, courseId, { title: 'Reading check' }, { idempotencyKey: 'assignment-2' });
    expect(again.data).toMatchObject({ courseWorkId, replayed: true });
    expect(received.map((r) => r.headers['idempotency-key'])).toEqual(['drive-create-2', 'drive-create-2', 'assignment-2']);
    expect(generated).toBe(0);
  });

  it('importDriveDocument keys only an apply, with the caller\'s key or a generated one', async () => {
    const imported = caseOf('importDriveDocument');
    answer = () => ({ status: 200, body: complete('service.drive-import', imported.data) });
    const input = { connectionId, fileId, path: 'Units/Unit 1.md' };
    await runtime.importDriveDocument(vaultId, input);
    await runtime.importDriveDocument(vaultId, { ...input, mode: 'preview' }, { idempotencyKey: 'ignored-for-a-preview' });
    await runtime.importDriveDocument(vaultId, { ...input, mode: 'apply' });
    await runtime.importDriveDocument(vaultId, { ...input, mode: 'apply', expectedRevision: `sha256:${'c'.repeat(64)}` }, { idempotencyKey: 'mine-1' });
    expect(received.map((r) => r.headers['idempotency-key'])).toEqual([undefined, undefined, 'generated-1', 'mine-1']);
    // The input goes as written: the service applies its default mode (preview).
    expect(JSON.parse(received[0]!.body)).toEqual(input);
  });

  it('every operation takes the unavailable envelope of its kind when the service has no Google client', async () => {
    for (const c of cases) {
      answer = () => ({
        status: 200,
        body: {
          runtimeVersion: '1',
          kind: c.kind,
          status: 'unavailable',
          data: null,
          missing: [{ part: 'connections.google', reason: 'capability_not_configured', detail: 'No Google OAuth client is configured.' }],
        },
      });
      const result = (await c.call(runtime)) as { status: string; data: unknown; missing: Array<{ part: string; reason: string }> };
      expect(result, c.name).toMatchObject({ status: 'unavailable', data: null, missing: [{ part: 'connections.google', reason: 'capability_not_configured' }] });
    }
  });

  it('refusals are RuntimeError with the stable code, the status and the key to retry with; a version conflict carries the current lineage', async () => {
    const current = { fileId, name: 'Unit 1 plan', mimeType: 'application/vnd.google-apps.document', version: '9', modifiedTime: '2026-11-23T10:07:00.000Z' };
    const refusals: Array<[RuntimeOperationName, Answer, string | undefined]> = [
      ['startGoogleConnection', problem(400, 'oauth_return_target_mismatch'), undefined],
      ['getConnection', problem(404, 'connection_not_found'), undefined],
      ['listClassroomCourses', problem(409, 'connection_reauthorization_required'), undefined],
      ['updateDriveDocument', problem(409, 'drive_version_conflict', { current }), undefined],
      ['importDriveDocument', problem(413, 'drive_content_too_large'), 'import-1'],
      ['importDriveDocument', problem(415, 'drive_unsupported_file'), 'import-1'],
      ['listClassroomCourses', problem(503, 'connection_provider_rate_limited'), undefined],
      ['getDriveDocument', problem(502, 'connection_provider_error'), undefined],
      ['listClassroomRoster', problem(504, 'connection_provider_timeout'), undefined],
      ['listAssignmentAttachments', problem(403, 'connection_provider_forbidden'), undefined],
      ['revokeConnection', problem(404, 'connection_not_found'), undefined],
      ['getDriveDocument', problem(404, 'connection_provider_not_found'), undefined],
      ['createDriveDocument', problem(422, 'idempotency_key_reused'), 'drive-create-1'],
      ['createClassroomAssignment', problem(502, 'connection_provider_error'), 'assignment-1'],
    ];
    for (const [name, refusal, key] of refusals) {
      answer = () => refusal;
      const error = await caseOf(name)
        .call(runtime)
        .catch((e: unknown) => e);
      const body = refusal.body as { status: number; code: string };
      expect(error, `${name} ${body.code}`).toBeInstanceOf(RuntimeError);
      expect(error, `${name} ${body.code}`).toMatchObject({ status: body.status, code: body.code, requestId: 'req-1', idempotencyKey: key });
      expect((error as Error).message).not.toContain('hnp_svc_connections');
    }
    answer = () => problem(409, 'drive_version_conflict', { current });
    const conflict = (await caseOf('updateDriveDocument')
      .call(runtime)
      .catch((e: unknown) => e)) as RuntimeError;
    expect(driveDocumentSchema.pick({ fileId: true, name: true, mimeType: true, version: true, modifiedTime: true }).parse(conflict.extensions['current'])).toEqual(current);
  });

  it('refuses answers the contract does not promise, and hands over only the DTO\'s fields', async () => {
    const broken: Array<[RuntimeOperationName, Answer]> = [
      // Another kind than the operation's.
      ['createClassroomAssignment', { status: 201, body: complete('service.drive-document', driveDocument) }],
      // A DriveDocument without its version: a product could not update it.
      ['getDriveDocument', { status: 200, body: complete('service.drive-document', { ...driveDocument, version: undefined }) }],
      ['startGoogleConnection', { status: 201, body: complete('service.connection-attempt', { ...(caseOf('startGoogleConnection').data as object), attemptId: 'not-a-uuid' }) }],
      ['listConnections', { status: 200, body: complete('service.connection-list', { connections: [{ ...connection, provider: 'microsoft' }], nextCursor: null }) }],
      ['revokeConnection', { status: 200, body: complete('service.connection-revocation', { connection, providerRevocation: 'maybe' }) }],
      ['listAssignmentAttachments', { status: 200, body: complete('service.classroom-attachments', { submissions: [{ submissionId: 's', userId: 'u', state: 'NEW' }], nextPageToken: null }) }],
    ];
    for (const [name, wrong] of broken) {
      answer = () => wrong;
      const error = await caseOf(name)
        .call(runtime)
        .catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(RuntimeResponseError);
    }

    // A roster member carrying more than the DTO names (an e-mail address) reaches the product without it.
    answer = () => ({
      status: 200,
      body: complete('service.classroom-roster', { students: [{ userId: '1001', fullName: 'Student One', emailAddress: 'one@school.example.test' }], nextPageToken: null }),
    });
    const roster = await runtime.listClassroomRoster(connectionId, courseId);
    expect(roster.data).toEqual({ students: [{ userId: '1001', fullName: 'Student One' }], nextPageToken: null });
  });

  it('never follows a redirect (the OAuth callback is the browser\'s), and refuses a missing id before sending', async () => {
    answer = () => ({ status: 303, headers: { location: `${baseUrl}/elsewhere` } });
    await expect(caseOf('startGoogleConnection').call(runtime)).rejects.toThrow(TypeError);
    expect(received.map((r) => r.url)).toEqual([`${MOUNT}/connections/google`]);

    received.length = 0;
    await expect(runtime.getConnection('')).rejects.toThrow(TypeError);
    await expect(runtime.getDriveDocument(connectionId, '')).rejects.toThrow(TypeError);
    await expect(runtime.listAssignmentAttachments(connectionId, courseId, '')).rejects.toThrow(TypeError);
    expect(received).toEqual([]);
  });
});
