// listNotes, readNote, publishNote: the knowledge core through the installation's vault grant
// (domain/product-runtime/runtime-notes.ts). The chain checks the grant on every request: a
// read grant for reads, a write grant for publications (previews too: a preview answers exactly
// as the apply would).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { envelope, publicationSchema, publishNoteInputSchema } from '@hosted-notes/runtime-sdk';
import { noteLimits } from '../../../domain/notes/paths.ts';
import { fusedNote, listRuntimeNotes, noteReadFusion, publishRuntimeNote } from '../../../domain/product-runtime/runtime-notes.ts';
import { validateNotePath } from '../../../domain/notes/paths.ts';
import { idempotencyKeyHeader } from '../shared/headers.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller, runtimeEnvelope } from './kit.ts';
import { operationRoute } from './operation-route.ts';
import { listNotesExamples, publishNoteExamples, readNoteExamples } from './openapi-docs.ts';

const vaultParams = z.strictObject({ vaultId: z.string().max(64).describe('A hosted vault this installation holds a grant on.') });
const grantProblems = ['vault_not_granted'] as const;
/** What a note publication (publishNote, and anything that publishes through it) can be refused with. */
export const publicationProblems = [
  ...grantProblems,
  'invalid_path',
  'note_too_large',
  'idempotency_key_required',
  'invalid_idempotency_key',
  'idempotency_key_reused',
  'idempotency_in_flight',
  'revision_required',
  'revision_conflict',
  'path_case_conflict',
] as const;

export const runtimeNotesRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, { db, admission }) => {
  app.route({
    ...operationRoute('listNotes'),
    schema: {
      description: `At most ${noteLimits.maxInventoryPage} notes per page ordered by path (bytewise), as the REST inventory; follow nextCursor while hasMore. Needs notes.read and a grant on the vault.`,
      params: vaultParams,
      querystring: z.strictObject({
        limit: z.coerce.number().int().min(1).max(noteLimits.maxInventoryPage).default(100).describe(`Notes per page, at most ${noteLimits.maxInventoryPage}.`),
        cursor: z.string().max(2048).optional().describe('nextCursor of the previous page (opaque).'),
      }),
      problems: [...grantProblems, 'invalid_request'],
      docs: { responses: { 200: { description: "A page of the granted vault's inventory (runtime.note-list envelope)." } } },
      examples: listNotesExamples,
    },
    handler: async (request) => envelope('runtime.note-list', await listRuntimeNotes(db, runtimeCaller(request), request.query)),
  });

  // Admitted in the handler with the note fused into the chain's statement: one round trip.
  const readRoute = operationRoute('readNote', { admitsInHandler: true });
  const readNeeds = readRoute.config.runtime;
  app.route({
    ...readRoute,
    schema: {
      description: 'Any path depth (the path is a query parameter). The note, its revision (also the ETag) and derived title, frontmatter and links. Needs notes.read and a grant on the vault.',
      params: vaultParams,
      querystring: z.strictObject({ path: z.string().min(1).max(8192).describe('Vault-relative path of the note, any depth, ending in .md.') }),
      problems: [...grantProblems, 'invalid_path', 'note_not_found'],
      docs: { responses: { 200: { description: 'The note (runtime.note envelope); the ETag is its revision.' } } },
      examples: readNoteExamples,
    },
    handler: async (request, reply) => {
      let path: string;
      try {
        path = validateNotePath(request.query.path, '/querystring/path');
      } catch (error) {
        // A bad path is refused like any invalid input: after admission (a stranger learns nothing).
        await admission.admit(request, reply, readNeeds);
        throw error;
      }
      const { fused, ...caller } = await admission.admit(request, reply, readNeeds, noteReadFusion(path));
      const note = fusedNote(caller, path, fused.note);
      reply.header('etag', `"${note.revision}"`);
      return envelope('runtime.note', note);
    },
  });

  app.route({
    ...operationRoute('publishNote'),
    bodyLimit: 4 * 1_048_576,
    schema: {
      description:
        'The knowledge-transaction core of the REST API: mode preview (default) answers the operation, revisions and a diff and writes nothing; mode apply ' +
        'needs Idempotency-Key (same key and body replay, another body is 422) and, to replace an existing note, expectedRevision (428 without, 409 when ' +
        'stale). The provenance event names this installation\'s service principal. Needs notes.write and a write grant on the vault.',
      params: vaultParams,
      body: publishNoteInputSchema,
      response: { 200: runtimeEnvelope('runtime.note-publication', publicationSchema), 201: runtimeEnvelope('runtime.note-publication', publicationSchema) },
      problems: publicationProblems,
      docs: {
        responses: {
          200: { description: 'A preview, or an applied replace or no-op (runtime.note-publication envelope).' },
          201: { description: 'An applied create.' },
        },
      },
      examples: publishNoteExamples,
    },
    handler: async (request, reply) => {
      const result = await publishRuntimeNote(db, runtimeCaller(request), request.body, idempotencyKeyHeader(request));
      return reply.code(result.status === 201 ? 201 : 200).send(envelope('runtime.note-publication', result.data));
    },
  });
};
