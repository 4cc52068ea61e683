// The eight MCP tools: each is a zod input schema (published as JSON Schema), MCP metadata, and a
// thin handler over the same domain functions the REST API uses. Mutations go through the
// knowledge-transaction core with `source: mcp:<tool>` on their events.
import type { DatabasePool } from 'slonik';
import type { GroupCommit } from '../../../domain/notes/group-commit.ts';
import { z } from 'zod';
import { AppError } from '../../../domain/errors.ts';
import type { Principal } from '../../../domain/identity/accounts.ts';
import { translateCanvas, MAX_CANVAS_NODES } from '../../../domain/canvas/translate.ts';
import { searchLimits, searchNotes, SCHEMA_SCAN_NOTES, vaultSchema } from '../../../domain/notes/discovery.ts';
import { MAX_GRAPH_RELATIONS, queryGraphRelations } from '../../../domain/notes/graph.ts';
import { applyTransaction, previewTransaction, previewWrite } from '../../../domain/notes/knowledge.ts';
import { parseRevision } from '../../../domain/notes/markdown.ts';
import { noteLimits, pathProblem, validateNotePath } from '../../../domain/notes/paths.ts';
import { readNoteAsCaller } from '../../../domain/notes/read-as-caller.ts';
import type { AdmissionCache, TokenAdmission } from '../../../domain/principals/admission-cache.ts';
import type { AllowanceLeases } from '../../../domain/allowance-lease.ts';
import type { UsageSnapshot } from '../../../domain/usage.ts';
import { findNote } from '../../../domain/notes/store.ts';
import { applyContext, eventsPage, parseActionRevisions, resolveTarget } from '../shared/vault-calls.ts';
import type { Caller } from '../shared/vault-calls.ts';
import {
  canvasOutlineOutput,
  graphRelationsOutput,
  knowledgeEventsOutput,
  noteContentOutput,
  noteTransactionOutput,
  noteWriteOutput,
  outputJsonSchema,
  searchNotesOutput,
  vaultSchemaOutput,
} from './outputs.ts';

/** `notes`: the group commit single-note writes go through (domain/notes/group-commit.ts). */
export type ToolContext = { db: DatabasePool; notes: GroupCommit; principal: Principal; requestId: string };
/** What a tool's handler gets: the context and the caller the shared vault calls take (../shared/vault-calls.ts). */
type ToolCall = ToolContext & { caller: Caller };

/**
 * A tool may also offer a fused form that authenticates, charges and does its work in one
 * statement (the hot read). It is used only when `canFuse` says the arguments cannot fail before
 * the database is reached, so refusals and failures keep their usual order.
 */
export type FusedTool = {
  canFuse: (args: never) => boolean;
  run: (input: FusedRunInput, args: never) => Promise<{ principal: Principal; usage: UsageSnapshot; data: unknown }>;
};

/** What a fused tool's run gets: the database, the presented token and the process's allowance leases and admission cache. */
export type FusedRunInput = { db: DatabasePool; rawToken: string; leases: AllowanceLeases; admissions: AdmissionCache<TokenAdmission> };

type Annotations = { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };

/** A note a result names, to be linked as a resource (resources.ts). */
export type NamedNote = { mappingId: string; path: string; title?: string };

export type ToolDefinition = {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  /** The result of a successful call (structuredContent), published as outputSchema. */
  output: z.ZodType;
  annotations: Annotations;
  run: (ctx: ToolContext, args: never) => Promise<unknown>;
  fused?: FusedTool;
  /** The notes a successful result names (linked as resources where the revision has resource links). */
  names?: (data: never) => NamedNote[];
};

function tool<S extends z.ZodObject, O extends z.ZodType>(definition: {
  name: string;
  title: string;
  description: string;
  input: S;
  output: O;
  annotations: Annotations;
  run: (call: ToolCall, args: z.infer<S>) => Promise<z.input<O>>;
  fused?: {
    canFuse: (args: z.infer<S>) => boolean;
    run: (input: FusedRunInput, args: z.infer<S>) => Promise<{ principal: Principal; usage: UsageSnapshot; data: z.input<O> | AppError }>;
  };
  names?: (data: z.input<O>) => NamedNote[];
}): ToolDefinition {
  const { run } = definition;
  // Every call knows its caller; the tool's events' source and idempotency route are both `mcp:<tool>`.
  const withCaller = (ctx: ToolContext, args: z.infer<S>) =>
    run({ ...ctx, caller: { accountId: ctx.principal.account.id, requestId: ctx.requestId, source: `mcp:${definition.name}` } }, args);
  return { ...definition, run: withCaller } as unknown as ToolDefinition;
}

const mappingId = z.uuid().describe('The hosted mapping (UUID) of the vault to act on.');
const notePath = z.string().min(1).max(4096).describe('Vault-relative note path ending in .md, e.g. "Projects/Plan.md" (any depth).');
const revision = z.string().describe('A revision, "sha256:<64 hex>", as returned by get_note_content or a previous write.');
const idempotencyKey = z.string().min(1).max(255).describe('Required with dryRun false: retrying with the same key replays the first result instead of writing twice.');

const readOnly: Annotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const tools: ToolDefinition[] = [
  tool({
    name: 'search_notes',
    title: 'Search notes',
    description:
      `Search one hosted vault: ranked word search over titles and content (quoted phrases, OR and -exclusions work), plus path and substring matches for queries of ${searchLimits.minSubstringLength}+ characters. ` +
      `Returns up to ${searchLimits.maxResults} results (default ${searchLimits.defaultResults}) with a snippet and the revision; \`truncated\` means more matched. ` +
      'Read a hit with get_note_content.',
    input: z.strictObject({
      mappingId,
      query: z.string().trim().min(1).max(searchLimits.maxQueryLength).describe('Words, a phrase in quotes, or a substring / path fragment.'),
      pathPrefix: z.string().max(1024).optional().describe('Only notes whose path starts with this, e.g. "Projects/".'),
      limit: z.number().int().min(1).max(searchLimits.maxResults).optional().describe(`Results to return (1–${searchLimits.maxResults}, default ${searchLimits.defaultResults}).`),
    }),
    output: searchNotesOutput,
    annotations: readOnly,
    run: async (ctx, args) => {
      const t = await resolveTarget(ctx.db, ctx.caller, args.mappingId, 'read');
      return { mappingId: t.mappingId, ...(await searchNotes(ctx.db, t.vaultId, args)) };
    },
    names: (data) => data.results.map((hit) => ({ mappingId: data.mappingId, path: hit.path, title: hit.title })),
  }),
  tool({
    name: 'get_note_content',
    title: 'Read a note',
    description: 'Read one note of a hosted vault, at any folder depth: its Markdown content, title, frontmatter and current revision (pass the revision as expectedHash when changing it).',
    input: z.strictObject({ mappingId, path: notePath }),
    output: noteContentOutput,
    annotations: readOnly,
    run: async (ctx, args) => {
      const t = await resolveTarget(ctx.db, ctx.caller, args.mappingId, 'read');
      const path = validateNotePath(args.path);
      const note = await findNote(ctx.db, t.vaultId, path);
      if (!note) throw new AppError('note_not_found', `No live note at ${path}.`);
      return { mappingId: t.mappingId, ...note };
    },
    fused: {
      canFuse: (args) => pathProblem(args.path.normalize('NFC')) === null,
      run: async ({ db, rawToken, leases, admissions }, args) => {
        const path = args.path.normalize('NFC');
        const read = await readNoteAsCaller(db, { rawToken, iface: 'mcp', leases, admissions, mappingId: args.mappingId, path });
        const principal = { tokenId: read.tokenId, account: read.account };
        if (!read.note) return { principal, usage: read.usage, data: new AppError('note_not_found', `No live note at ${path}.`) };
        return { principal, usage: read.usage, data: { mappingId: read.mapping.mappingId, ...read.note } };
      },
    },
    names: (data) => [{ mappingId: data.mappingId, path: data.path, title: data.title }],
  }),
  tool({
    name: 'create_or_append_note',
    title: 'Create, append to or replace a note',
    description:
      'Preview (default) or apply one note write. mode "create" (default) only creates a new note; "append" adds content to the end of an existing note; ' +
      '"replace" overwrites it. append and replace need expectedHash = the current revision (a stale one is refused, never overwritten). ' +
      `Applying needs dryRun false and an idempotencyKey. Content up to ${noteLimits.maxContentBytes} bytes.`,
    input: z.strictObject({
      mappingId,
      path: notePath,
      content: z.string().describe('Markdown: the whole note (create, replace) or the text to add (append).'),
      mode: z.enum(['create', 'append', 'replace']).default('create').describe('create (default), append or replace.'),
      dryRun: z.boolean().default(true).describe('true (default) previews with a diff and writes nothing.'),
      expectedHash: revision.optional(),
      idempotencyKey: idempotencyKey.optional(),
    }),
    output: noteWriteOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: async (ctx, args) => {
      const t = await resolveTarget(ctx.db, ctx.caller, args.mappingId, 'write');
      const path = validateNotePath(args.path);
      const expectedHash = args.expectedHash === undefined ? undefined : parseRevision(args.expectedHash, '/arguments/expectedHash');
      if (args.mode !== 'create' && expectedHash === undefined) {
        throw new AppError('revision_required', `mode "${args.mode}" needs expectedHash (the current revision).`, {
          extensions: { errors: [{ pointer: '/arguments/expectedHash', message: 'required for append and replace', code: 'revision_required' }] },
        });
      }
      let content = args.content;
      if (args.mode === 'append') {
        const current = await findNote(ctx.db, t.vaultId, path);
        if (!current) throw new AppError('note_not_found', `No live note at ${path} to append to.`);
        // The write below re-checks expectedHash under the vault lock, so a concurrent change
        // between this read and the apply is refused, not merged.
        content = current.content + (current.content === '' || current.content.endsWith('\n') ? '' : '\n') + args.content;
      }
      const input = { path, content, expectedHash, ifNoneMatchAny: args.mode === 'create' };
      if (args.dryRun) return { mode: args.mode, ...(await previewWrite(ctx.db, t, input)) };
      const { idempotency, provenance } = applyContext(ctx.caller, ctx.caller.source, t, args.idempotencyKey, { mode: args.mode, path, addition: args.content, expectedHash });
      const result = await ctx.notes.applyWrite(t, input, provenance, idempotency);
      return { mode: args.mode, ...result.body, replayed: result.replayed };
    },
    // An applied write names the note it wrote; a preview names a note that may not exist.
    names: (data) => (data.applied ? [{ mappingId: data.mappingId, path: data.path, title: data.title }] : []),
  }),
  tool({
    name: 'query_graph_relations',
    title: 'Links from and to a note',
    description:
      'Outgoing and incoming WikiLinks and embeds of one note ([[note]], [[note|alias]], [[note#heading]], [[note#^block]], ![[…]]), resolved the way Obsidian does ' +
      '(relative path, exact path, then unique file name; ties: same folder, shortest path, alphabetical). Unresolved and ambiguous links are reported. ' +
      `At most ${MAX_GRAPH_RELATIONS} each way; \`truncated\` means more exist.`,
    input: z.strictObject({ mappingId, path: notePath }),
    output: graphRelationsOutput,
    annotations: readOnly,
    run: async (ctx, args) => {
      const t = await resolveTarget(ctx.db, ctx.caller, args.mappingId, 'read');
      return { mappingId: t.mappingId, ...(await queryGraphRelations(ctx.db, t.vaultId, validateNotePath(args.path))) };
    },
    names: (data) => {
      const linked = [...data.outgoing.flatMap((link) => (link.path === null ? [] : [link.path])), ...data.incoming.map((link) => link.sourcePath)];
      return [...new Set([data.path, ...linked])].map((path) => ({ mappingId: data.mappingId, path }));
    },
  }),
  tool({
    name: 'translate_canvas',
    title: 'Canvas to Markdown outline',
    description:
      `Convert a JSON Canvas document (text, file, link and group nodes; edges) of at most ${MAX_CANVAS_NODES} nodes into a Markdown outline in reading order: ` +
      'each node under the smallest group containing it, groups as headings, siblings in rows top to bottom then left to right, edges as a Connections list. ' +
      'Deterministic. Needs no vault.',
    input: z.strictObject({
      canvas: z.record(z.string(), z.unknown()).describe('The JSON Canvas document: { nodes: [...], edges: [...] }.'),
      title: z.string().max(200).optional().describe('Heading of the outline (default "Canvas").'),
    }),
    output: canvasOutlineOutput,
    annotations: readOnly,
    run: async (_ctx, args) => translateCanvas(args.canvas, args.title === undefined ? {} : { title: args.title }),
  }),
  tool({
    name: 'get_vault_schema',
    title: 'Frontmatter schema of a vault',
    description:
      `The YAML frontmatter keys used across the first ${SCHEMA_SCAN_NOTES} notes (by path): value types, how many notes use each key, and example values. ` +
      '`truncated` means the vault has more notes or keys than were scanned; a truncated schema is not proof that a key is absent.',
    input: z.strictObject({ mappingId }),
    output: vaultSchemaOutput,
    annotations: readOnly,
    run: async (ctx, args) => {
      const t = await resolveTarget(ctx.db, ctx.caller, args.mappingId, 'read');
      return { mappingId: t.mappingId, ...(await vaultSchema(ctx.db, t.vaultId)) };
    },
  }),
  tool({
    name: 'apply_note_transaction',
    title: 'Write several notes, all or nothing',
    description:
      `Preview (default) or apply up to ${noteLimits.maxTransactionActions} write-note actions in one transaction. Every action is checked first; if any fails ` +
      '(e.g. a stale expectedHash) nothing is written and the errors point at the action (/actions/N/...). Replacing an existing note needs its expectedHash. ' +
      'Applying needs dryRun false and an idempotencyKey.',
    input: z.strictObject({
      mappingId,
      actions: z
        .array(z.strictObject({ type: z.literal('write-note'), path: notePath, content: z.string(), expectedHash: revision.optional() }))
        .describe(`1 to ${noteLimits.maxTransactionActions} actions.`),
      dryRun: z.boolean().default(true).describe('true (default) previews.'),
      idempotencyKey: idempotencyKey.optional(),
    }),
    output: noteTransactionOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: async (ctx, args) => {
      const t = await resolveTarget(ctx.db, ctx.caller, args.mappingId, 'write');
      const actions = parseActionRevisions(args.actions);
      if (args.dryRun) return previewTransaction(ctx.db, t, actions);
      const { idempotency, provenance } = applyContext(ctx.caller, ctx.caller.source, t, args.idempotencyKey, actions);
      const result = await applyTransaction(ctx.db, t, actions, provenance, idempotency);
      return { ...result.body, replayed: result.replayed };
    },
    names: (data) => (data.applied ? data.results.map((action) => ({ mappingId: data.mappingId, path: action.path, title: action.title })) : []),
  }),
  tool({
    name: 'get_knowledge_events',
    title: 'Provenance events of a vault',
    description:
      'Changes to one hosted vault, oldest first: created, replaced, deleted and restored notes with revisions, actor, source (rest, mcp:<tool>, forge) and idempotency key. ' +
      `Omit since to start at the first event; pass nextCursor back as since (opaque) for the next page or newer events. At most ${noteLimits.maxEventsPage} per call (default 100).`,
    input: z.strictObject({
      mappingId,
      since: z.string().min(1).max(256).optional().describe('Opaque cursor (nextCursor of a previous call); omit to start at the first event.'),
      limit: z.number().int().min(1).max(noteLimits.maxEventsPage).default(100),
    }),
    output: knowledgeEventsOutput,
    annotations: readOnly,
    run: async (ctx, args) => {
      return eventsPage(ctx.db, ctx.caller, args.mappingId, { since: args.since, limit: args.limit, sincePointer: '/arguments/since' });
    },
  }),
];

export const toolsByName = new Map(tools.map((t) => [t.name, t]));

/**
 * The tools/list entries: JSON Schema of each input and output, with title, description and
 * annotations. Computed once: they only change with a deploy.
 */
const listing = tools.map((t) => {
  const { $schema: _ignored, ...inputSchema } = z.toJSONSchema(t.input, { io: 'input' }) as Record<string, unknown>;
  return { name: t.name, title: t.title, description: t.description, inputSchema, outputSchema: outputJsonSchema(t.output), annotations: { title: t.title, ...t.annotations } };
});

export function listedTools() {
  return listing;
}
