// Delegated Google connections on the runtime: the OAuth round trip (start, the public callback),
// the installation's connections (list, read, revoke) and the bounded Drive and Classroom round
// trips. The rules live in domain/connections/ (attempts.ts, connections.ts, round-trips.ts) and the
// attempt's life in workflows/oauth-connection.ts; this file is the HTTP edge.
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  classroomAssignmentSchema,
  CONNECTION_LIMITS,
  connectionAttemptSchema,
  createAssignmentInputSchema,
  createDriveDocumentInputSchema,
  driveDocumentSchema,
  driveImportInputSchema,
  driveImportResultSchema,
  envelope,
  startConnectionInputSchema,
  unavailable,
  updateDriveDocumentInputSchema,
} from '@hosted-notes/runtime-sdk';
import { AppError } from '../../../../domain/errors.ts';
import { OAUTH_ATTEMPT_START_KIND, receiveCallback, startAttempt } from '../../../../domain/connections/attempts.ts';
import type { DeliverCallback } from '../../../../domain/connections/attempts.ts';
import { getConnection, listConnections, revokeConnection } from '../../../../domain/connections/connections.ts';
import {
  createClassroomAssignment,
  createDriveDocument,
  getDriveDocument,
  importDriveDocument,
  listAssignmentAttachments,
  listClassroomCourses,
  listClassroomRoster,
  updateDriveDocument,
} from '../../../../domain/connections/round-trips.ts';
import type { RoundTripDeps } from '../../../../domain/connections/round-trips.ts';
import { scopesFor } from '../../../../domain/connections/provider.ts';
import type { GoogleService } from '../../../../domain/connections/provider.ts';
import { callbackUpdate } from '../../../../workflows/oauth-connection.ts';
import { boundedTemporalCall, startRecorded } from '../../shared/workflow-starts.ts';
import { idempotencyKeyHeader } from '../../shared/headers.ts';
import type { RuntimeRouteDeps } from '../kit.ts';
import { publicationProblems } from '../notes.ts';
import { runtimeCaller, runtimeEnvelope } from '../kit.ts';
import { operationKey, operationRoute } from '../operation-route.ts';
import {
  createClassroomAssignmentExamples,
  createDriveDocumentExamples,
  getConnectionExamples,
  getDriveDocumentExamples,
  importDriveDocumentExamples,
  listAssignmentAttachmentsExamples,
  listClassroomCoursesExamples,
  listClassroomRosterExamples,
  listConnectionsExamples,
  revokeConnectionExamples,
  startGoogleConnectionExamples,
  updateDriveDocumentExamples,
} from './openapi-docs.ts';

export const OAUTH_CALLBACK_PATH = '/api/product/v1/connections/provider/oauth/callback';

const providerIdPattern = /^[A-Za-z0-9_.-]+$/;
const providerId = (what: string) => z.string().min(1).max(CONNECTION_LIMITS.providerIdChars).regex(providerIdPattern).describe(what);
const connectionParams = z.strictObject({ connectionId: z.string().min(1).max(100).describe('The connectionId the OAuth round trip answered with.') });
const fileParams = connectionParams.extend({ fileId: providerId('The Drive file id (its lineage).') });
const courseParams = connectionParams.extend({ courseId: providerId('The Classroom course id.') });
const courseWorkParams = courseParams.extend({ courseWorkId: providerId('The Classroom assignment (courseWork) id.') });
const page = z.strictObject({
  pageSize: z.coerce.number().int().min(1).max(CONNECTION_LIMITS.pageSize).optional().describe(`At most ${CONNECTION_LIMITS.pageSize}.`),
  pageToken: z.string().max(CONNECTION_LIMITS.pageTokenChars).optional().describe('nextPageToken of the previous page (Google\'s, opaque).'),
});
const providerProblems = [
  'connection_not_found',
  'connection_reauthorization_required',
  'connection_provider_error',
  'connection_provider_timeout',
  'connection_provider_rate_limited',
  'connection_provider_forbidden',
  'connection_provider_not_found',
] as const;

const notConfigured = <K extends string>(kind: K) =>
  unavailable(kind, [{ part: 'connections.google', reason: 'capability_not_configured', detail: 'No Google OAuth client is configured on this service; nothing is connected without it.' }]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A malformed connection id is refused exactly like another installation's. */
function connectionIdOf(raw: string): string {
  if (!UUID.test(raw)) throw new AppError('connection_not_found');
  return raw.toLowerCase();
}

/** The return target with one parameter added (its own query kept): the connection id, or the failure code. */
function returnTo(target: string, name: 'connectionId' | 'error', value: string): string {
  const url = new URL(target);
  url.searchParams.set(name, value);
  return url.href;
}

export const connectionRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  const setup = deps.connections;
  const roundTrips: RoundTripDeps | null = setup ? { db: deps.db, secretBox: setup.secretBox, oauthProvider: setup.provider, settings: setup.settings } : null;
  const redirectUri = setup ? `${setup.publicBaseUrl}${OAUTH_CALLBACK_PATH}` : '';

  // The callback reaches the attempt's workflow as an Update; a refused or finished one is data.
  const deliver: DeliverCallback = async (workflowId, callback) => {
    try {
      // Bounded: Temporal away is a 503 the browser can retry (the state is spent only when the Update lands).
      return await boundedTemporalCall(deps.temporal, "Google's answer could not be passed on: the workflow service did not answer in time. Reload this page shortly.", () =>
        deps.temporal.workflow.getHandle(workflowId).executeUpdate(callbackUpdate, { args: [callback] }),
      );
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError) return { status: 'refused' };
      if (error instanceof WorkflowNotFoundError) return { status: 'closed' };
      throw error;
    }
  };

  app.route({
    ...operationRoute('startGoogleConnection'),
    bodyLimit: 16 * 1024,
    schema: {
      description:
        'Needs connections.manage. Answers the Google authorization URL (authorization code flow with PKCE S256 and a single-use state, valid 10 minutes) ' +
        "to send the person to. returnTarget must be one of the product's registered HTTPS return origins (any path under it) or exact redirect URIs, else " +
        '400 oauth_return_target_mismatch and nothing is stored. Requesting drive asks for drive.file; classroom asks for classroom.courses.readonly, ' +
        'classroom.rosters.readonly and classroom.coursework.students (never e-mail or grading scopes). After consent the person is sent to ' +
        '`returnTarget?connectionId=…` (or `?error=<code>`). With no Google client configured the answer is the unavailable envelope.',
      body: startConnectionInputSchema,
      response: { 201: runtimeEnvelope('service.connection-attempt', connectionAttemptSchema), 200: runtimeEnvelope('service.connection-attempt', connectionAttemptSchema) },
      problems: ['oauth_return_target_mismatch'],
      docs: {
        responses: {
          201: { description: 'The attempt: the Google authorization URL to send the person to, the services and scopes asked, when it expires.' },
          200: { description: 'The unavailable envelope: no Google OAuth client is configured on this service.' },
        },
      },
      examples: startGoogleConnectionExamples,
    },
    handler: async (request, reply) => {
      if (!roundTrips) return notConfigured('service.connection-attempt');
      const started = await startAttempt(roundTrips, runtimeCaller(request), { ...request.body, redirectUri });
      // Recorded with the attempt: started now, or by the relay if Temporal is away a moment.
      await startRecorded(deps.starter, [{ workflowId: started.workflowId, kind: OAUTH_ATTEMPT_START_KIND, input: started.workflowInput }], request.log);
      const { attemptId, authorizationUrl, services, expiresAt } = started;
      return reply.code(201).send(envelope('service.connection-attempt', { attemptId, authorizationUrl, services, scopes: scopesFor(services as GoogleService[]), expiresAt }));
    },
  });

  app.get(
    '/connections/provider/oauth/callback',
    {
      // The person's browser, sent back by Google: no credential; the single-use state is the authority.
      config: { publicRuntime: true },
      // The query carries the authorization code and the state: this route's log lines name the path only.
      logSerializers: { req: (req: { method: string; url: string }) => ({ method: req.method, url: req.url.split('?')[0] }) },
      schema: {
        // Not an operation a product calls: the person's browser arrives here from Google, and
        // leaves with a redirect (docs/connections.md describes it); kept out of the API document.
        hide: true,
        tags: ['product-runtime'],
        operationId: 'googleOAuthCallback',
        summary: 'The OAuth callback registered at Google ({base_url}/api/product/v1/connections/provider/oauth/callback)',
        description:
          "Validates the single-use state, exchanges the code in the attempt's workflow, stores the tokens sealed, and sends the person (303) to the product's " +
          'return target with connectionId only, or with error=<code> (oauth_state_replayed, oauth_state_expired, oauth_consent_denied, oauth_provider_error, ' +
          'oauth_return_target_mismatch, connections_not_configured, internal_error). A state this service never issued has no return target: 400 oauth_state_invalid.',
        querystring: z.looseObject({
          state: z.string().max(512).optional(),
          code: z.string().max(4096).optional(),
          error: z.string().max(256).optional(),
        }),
        response: { 303: z.null().describe('No body: Location says where the person goes next.') },
        problems: ['oauth_state_invalid', 'connections_not_configured'],
      },
    },
    async (request, reply) => {
      if (!roundTrips) throw new AppError('connections_not_configured');
      const { state, code, error } = request.query;
      const result = await receiveCallback(roundTrips, { state, code, error }, deliver);
      // Neither the code nor the state may linger in a history, a cache or a Referer.
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      if (result.status === 'connected') return sendTo(reply, returnTo(result.returnTarget, 'connectionId', result.connectionId));
      if (result.returnTarget === null) throw new AppError('oauth_state_invalid');
      return sendTo(reply, returnTo(result.returnTarget, 'error', result.code));
    },
  );

  app.route({
    ...operationRoute('listConnections'),
    schema: {
      description: 'Needs connections.manage. Ids, services, granted scopes and state only: no token, no e-mail address, no provider account.',
      querystring: z.strictObject({
        limit: z.coerce.number().int().min(1).max(200).default(50).describe('Connections per page, at most 200.'),
        cursor: z.string().max(512).optional().describe('nextCursor of the previous page (opaque).'),
      }),
      docs: { responses: { 200: { description: "A page of this installation's connections (no token, no e-mail), or unavailable." } } },
      examples: listConnectionsExamples,
    },
    handler: async (request) => {
      if (!roundTrips) return notConfigured('service.connection-list');
      return envelope('service.connection-list', await listConnections(deps.db, runtimeCaller(request), request.query));
    },
  });

  app.route({
    ...operationRoute('getConnection'),
    schema: {
      description: "Needs connections.manage. Another installation's or organization's connection answers exactly like a missing one (404 connection_not_found).",
      params: connectionParams,
      problems: ['connection_not_found'],
      docs: { responses: { 200: { description: 'One connection (service.connection envelope), or unavailable.' } } },
      examples: getConnectionExamples,
    },
    handler: async (request) => {
      if (!roundTrips) return notConfigured('service.connection');
      return envelope('service.connection', await getConnection(deps.db, runtimeCaller(request), connectionIdOf(request.params.connectionId)));
    },
  });

  app.route({
    ...operationRoute('revokeConnection'),
    schema: {
      description:
        'Needs connections.manage. Revokes the grant at Google, then deletes the sealed tokens; if Google cannot be reached the tokens are deleted anyway and ' +
        'providerRevocation says failed. Revoking again answers already_revoked.',
      params: connectionParams,
      problems: ['connection_not_found'],
      docs: { responses: { 200: { description: 'The revoked connection and what Google answered (service.connection-revocation envelope).' } } },
      examples: revokeConnectionExamples,
    },
    handler: async (request) => {
      if (!roundTrips) return notConfigured('service.connection-revocation');
      return envelope('service.connection-revocation', await revokeConnection(roundTrips, runtimeCaller(request), connectionIdOf(request.params.connectionId)));
    },
  });

  // ---- Drive ---------------------------------------------------------------------------------------

  app.route({
    ...operationRoute('createDriveDocument'),
    bodyLimit: CONNECTION_LIMITS.markdownBytes + 16 * 1024,
    schema: {
      description:
        'Needs connections.execute and an Idempotency-Key. The file id is reserved at Drive under the key before the create, so a retried create (after any ' +
        'failure, or at the same time) returns the same file and never makes a second one (200, Idempotent-Replayed: true): of all the requests with ' +
        'the key, exactly one answers 201. Answers the lineage to keep: fileId and version. Google not answering within the service\'s timeout is 504 ' +
        'connection_provider_timeout (retry with the same key).',
      params: connectionParams,
      body: createDriveDocumentInputSchema,
      response: { 201: runtimeEnvelope('service.drive-document', driveDocumentSchema), 200: runtimeEnvelope('service.drive-document', driveDocumentSchema) },
      problems: [...providerProblems, 'payload_too_large'],
      docs: {
        responses: {
          201: { description: 'The created Google Doc: its lineage (fileId, version) to keep.' },
          200: { description: 'A replay of the create this Idempotency-Key already made (replayed: true), or unavailable.', headers: ['IdempotentReplayed'] },
        },
      },
      examples: createDriveDocumentExamples,
    },
    handler: async (request, reply) => {
      if (!roundTrips) return notConfigured('service.drive-document');
      const key = operationKey(request);
      const created = await createDriveDocument(roundTrips, runtimeCaller(request), connectionIdOf(request.params.connectionId), key, request.body);
      if (created.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(created.replayed ? 200 : 201).send(envelope('service.drive-document', created.document));
    },
  });

  app.route({
    ...operationRoute('getDriveDocument'),
    schema: {
      description: 'Needs connections.execute. Only files this service created or the person opened with it are visible (drive.file).',
      params: fileParams,
      problems: providerProblems,
      docs: { responses: { 200: { description: "The file's current lineage." } } },
      examples: getDriveDocumentExamples,
    },
    handler: async (request) => {
      if (!roundTrips) return notConfigured('service.drive-document');
      const { connectionId, fileId } = request.params;
      return envelope('service.drive-document', await getDriveDocument(roundTrips, runtimeCaller(request), connectionIdOf(connectionId), fileId));
    },
  });

  app.route({
    ...operationRoute('updateDriveDocument'),
    bodyLimit: CONNECTION_LIMITS.markdownBytes + 16 * 1024,
    schema: {
      description:
        'Needs connections.execute. expectedVersion is the version the product last observed; if the file changed since, 409 drive_version_conflict with ' +
        'the current lineage in `current`, and nothing is written (remote work is never overwritten). Drive has no conditional write: the version is ' +
        'compared immediately before the write (docs/connections.md names the remaining window).',
      params: fileParams,
      body: updateDriveDocumentInputSchema,
      problems: [...providerProblems, 'drive_version_conflict', 'payload_too_large'],
      docs: { responses: { 200: { description: "The written file's new lineage." } } },
      examples: updateDriveDocumentExamples,
    },
    handler: async (request) => {
      if (!roundTrips) return notConfigured('service.drive-document');
      const { connectionId, fileId } = request.params;
      return envelope('service.drive-document', await updateDriveDocument(roundTrips, runtimeCaller(request), connectionIdOf(connectionId), fileId, request.body));
    },
  });

  app.route({
    ...operationRoute('importDriveDocument'),
    bodyLimit: 16 * 1024,
    schema: {
      description:
        'Needs connections.execute and a write grant on the vault. Reads the document as Markdown (at most 1 MiB, else 413 drive_content_too_large) and ' +
        'previews (default) or applies it as one note through the same knowledge core as publishNote: apply needs an Idempotency-Key, replacing a note ' +
        'needs its expectedRevision; the provenance event names this installation.',
      params: z.strictObject({ vaultId: z.string().max(64).describe('A hosted vault this installation holds a write grant on.') }),
      body: driveImportInputSchema,
      response: {
        200: runtimeEnvelope('service.drive-import', driveImportResultSchema),
        201: runtimeEnvelope('service.drive-import', driveImportResultSchema),
      },
      problems: [...providerProblems, 'drive_content_too_large', 'drive_unsupported_file', ...publicationProblems],
      docs: {
        responses: {
          200: { description: 'The preview (writes nothing), a replayed apply, or unavailable: the document lineage and the note publication.' },
          201: { description: 'Applied: the note was written through the knowledge core.' },
        },
      },
      examples: importDriveDocumentExamples,
    },
    handler: async (request, reply) => {
      if (!roundTrips) return notConfigured('service.drive-import');
      const body = { ...request.body, connectionId: connectionIdOf(request.body.connectionId) };
      const result = await importDriveDocument(roundTrips, runtimeCaller(request), body, idempotencyKeyHeader(request));
      return reply.code(result.status === 201 ? 201 : 200).send(envelope('service.drive-import', result.data));
    },
  });

  // ---- Classroom -----------------------------------------------------------------------------------

  app.route({
    ...operationRoute('listClassroomCourses'),
    schema: {
      description: 'Needs connections.execute and a connection granted classroom. Id, name, section, room and link only.',
      params: connectionParams,
      querystring: page,
      problems: providerProblems,
      docs: { responses: { 200: { description: "A page of the teacher's active courses." } } },
      examples: listClassroomCoursesExamples,
    },
    handler: async (request) => {
      if (!roundTrips) return notConfigured('service.classroom-courses');
      return envelope('service.classroom-courses', await listClassroomCourses(roundTrips, runtimeCaller(request), connectionIdOf(request.params.connectionId), request.query));
    },
  });

  app.route({
    ...operationRoute('listClassroomRoster'),
    schema: {
      description: 'Needs connections.execute. Never an e-mail address, a photo or a grade (the service asks for no e-mail scope and keeps only these fields).',
      params: courseParams,
      querystring: page,
      problems: providerProblems,
      docs: { responses: { 200: { description: "A page of the course's students: user id and name only." } } },
      examples: listClassroomRosterExamples,
    },
    handler: async (request) => {
      if (!roundTrips) return notConfigured('service.classroom-roster');
      const { connectionId, courseId } = request.params;
      return envelope('service.classroom-roster', await listClassroomRoster(roundTrips, runtimeCaller(request), connectionIdOf(connectionId), courseId, request.query));
    },
  });

  app.route({
    ...operationRoute('createClassroomAssignment'),
    bodyLimit: 64 * 1024,
    schema: {
      description:
        'Needs connections.execute and an Idempotency-Key. Classroom takes no request id, so the intent is recorded under the key with a marker that goes ' +
        'into the description; a retry (after a lost answer, or at the same time) finds the assignment by its marker and never makes a second one (200, ' +
        'Idempotent-Replayed: true): of all the requests with the key, at most one answers 201. A request that waits for a concurrent one with the key ' +
        'longer than one Google call answers 409 idempotency_in_flight (Retry-After: 1). There is no grading operation.',
      params: courseParams,
      body: createAssignmentInputSchema,
      response: { 201: runtimeEnvelope('service.classroom-assignment', classroomAssignmentSchema), 200: runtimeEnvelope('service.classroom-assignment', classroomAssignmentSchema) },
      problems: providerProblems,
      docs: {
        responses: {
          201: { description: 'The created assignment (courseWork id, title, state, link).' },
          200: { description: 'The assignment this Idempotency-Key already made (replayed: true), or unavailable.', headers: ['IdempotentReplayed'] },
        },
      },
      examples: createClassroomAssignmentExamples,
    },
    handler: async (request, reply) => {
      if (!roundTrips) return notConfigured('service.classroom-assignment');
      const key = operationKey(request);
      const { connectionId, courseId } = request.params;
      const created = await createClassroomAssignment(roundTrips, runtimeCaller(request), connectionIdOf(connectionId), courseId, key, request.body);
      if (created.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(created.replayed ? 200 : 201).send(envelope('service.classroom-assignment', created.assignment));
    },
  });

  app.route({
    ...operationRoute('listAssignmentAttachments'),
    schema: {
      description: 'Needs connections.execute. Per submission: its id, the student id, its state and its attachments (kind, title, Drive file id or URL). No grade field.',
      params: courseWorkParams,
      querystring: page,
      problems: providerProblems,
      docs: { responses: { 200: { description: 'A page of submissions with their attachment metadata, no grades.' } } },
      examples: listAssignmentAttachmentsExamples,
    },
    handler: async (request) => {
      if (!roundTrips) return notConfigured('service.classroom-attachments');
      const { connectionId, courseId, courseWorkId } = request.params;
      return envelope(
        'service.classroom-attachments',
        await listAssignmentAttachments(roundTrips, runtimeCaller(request), connectionIdOf(connectionId), courseId, courseWorkId, request.query),
      );
    },
  });
};

/** 303 See Other: the browser follows with a GET, whatever brought it here. */
function sendTo(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('location', location).send();
}
