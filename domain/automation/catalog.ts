// What the automation gateway tells a bridge about itself: the action kinds Forge can execute,
// adapters (bridges) and templates. Templates are versioned configuration input; downloading one
// grants nothing.
import { z } from 'zod';
import type { TransactionAction } from '../notes/knowledge.ts';
import { noteLimits } from '../notes/paths.ts';

const writeNote = z.strictObject({
  type: z.literal('write-note'),
  path: z.string().min(1).max(4096),
  content: z.string(),
  expectedHash: z.string().optional(),
});

const noteWrite = z.strictObject({ kind: z.literal('note.write'), mappingId: z.uuid(), path: z.string().min(1).max(4096), content: z.string(), expectedHash: z.string().optional() });
const noteTransaction = z.strictObject({ kind: z.literal('note.transaction'), mappingId: z.uuid(), actions: z.array(writeNote).min(1).max(noteLimits.maxTransactionActions) });

/**
 * A Product Runtime memory candidate (domain/context-scopes/memory.ts): promote `content` to the
 * shared memory of a context scope. Proposed only by a product's service principal through
 * createSharedMemoryCandidate, never through the automation gateway.
 */
const memoryPromotion = z.strictObject({
  kind: z.literal('memory.promote'),
  scopeId: z.uuid(),
  content: z.string().min(1).max(10_000),
  rationale: z.string().max(2_000),
});
export type MemoryPromotion = z.infer<typeof memoryPromotion>;

/** The note actions a person or bridge may propose through the automation gateway. */
export const noteActionSchema = z.discriminatedUnion('kind', [noteWrite, noteTransaction]);
export type NoteAction = z.infer<typeof noteActionSchema>;

/** The catalog of action kinds Forge can execute, version 1: what a stored proposal's action parses as. */
export const actionSchema = z.discriminatedUnion('kind', [noteWrite, noteTransaction, memoryPromotion]);
export type ProposedAction = z.infer<typeof actionSchema>;
export const actionKinds = ['note.write', 'note.transaction', 'memory.promote'] as const;

export function isNoteAction(action: ProposedAction): action is NoteAction {
  return action.kind === 'note.write' || action.kind === 'note.transaction';
}

/** The knowledge-core writes a note action stands for (paths in NFC, as the core stores them). */
export function toTransaction(action: NoteAction): TransactionAction[] {
  return action.kind === 'note.write'
    ? [{ type: 'write-note', path: action.path.normalize('NFC'), content: action.content, expectedHash: action.expectedHash }]
    : action.actions.map((a) => ({ ...a, path: a.path.normalize('NFC') }));
}

export type Adapter = {
  bridge: string;
  title: string;
  description: string;
  direction: 'ingest' | 'propose' | 'ingest+propose';
  eventTypes: string[];
  actionKinds: string[];
  credentials: string;
};

export const adapters: Adapter[] = [
  {
    bridge: 'graph-provider',
    title: 'Directory graph ingestion',
    description:
      'The directory-graph ingestion boundary: people, groups and memberships from an external directory arrive as automation events. ' +
      'It is separate from the service\'s native account OAuth connection.',
    direction: 'ingest',
    eventTypes: ['directory.person.upserted', 'directory.person.removed', 'directory.group.upserted', 'directory.membership.changed'],
    actionKinds: [],
    credentials: 'Never receives the native provider credential; it authenticates to us with a personal access token of a workspace member holding automation.events.ingest.',
  },
  {
    bridge: 'generic-webhook',
    title: 'Generic inbound bridge',
    description: 'Any external system that posts events and proposes bounded note actions for review.',
    direction: 'ingest+propose',
    eventTypes: ['*'],
    actionKinds: ['note.write', 'note.transaction'],
    credentials: 'A personal access token; proposing needs automation.manage, ingesting automation.events.ingest.',
  },
];

export type Template = {
  id: string;
  version: number;
  title: string;
  description: string;
  configuration: Record<string, unknown>;
};

export const templates: Template[] = [
  {
    id: 'inbox-capture',
    version: 1,
    title: 'Capture to Inbox',
    description: 'An event trigger on capture.created that proposes writing the captured text to Inbox/<date>.md for review.',
    configuration: {
      trigger: { type: 'event', eventType: 'capture.created', filter: {} },
      proposal: { bridge: 'generic-webhook', action: { kind: 'note.write', path: 'Inbox/{{date}}.md', content: '{{event.data.text}}' } },
    },
  },
  {
    id: 'weekly-review',
    version: 1,
    title: 'Weekly review note',
    description: 'A schedule trigger (Mondays 08:00 in the workspace time zone) that proposes a weekly review note.',
    configuration: {
      trigger: { type: 'schedule', cron: '0 8 * * 1', timeZone: 'UTC' },
      proposal: { bridge: 'generic-webhook', action: { kind: 'note.write', path: 'Reviews/{{isoWeek}}.md', content: '# Week {{isoWeek}}\n' } },
    },
  },
];
