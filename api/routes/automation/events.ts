// Events, triggers, runs and /process. Schedule triggers are Temporal Schedules kept in step with
// the trigger's status (paused ↔ paused, deleted ↔ deleted).
import type { Client } from '@temporalio/client';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import {
  deleteTrigger,
  EVENT_CONTRACT,
  eventSchema,
  getEvent,
  getTrigger,
  ingestEvent,
  insertTrigger,
  mappingInWorkspace,
  occurredAtSchema,
  listRuns,
  listTriggers,
  processPendingRuns,
  strandedProposals,
  runSchema,
  scheduleIdOf,
  scheduleSchema,
  triggerProposalSchema,
  triggerSchema,
  updateTrigger,
} from '../../../domain/automation/events.ts';
import type { Trigger, TriggerSchedule } from '../../../domain/automation/events.ts';
import { AppError } from '../../../domain/errors.ts';
import { authorizeInWorkspace, requireWorkspacePermission } from '../../../domain/identity/workspaces.ts';
import type { Permission } from '../../../domain/identity/workspaces.ts';
import { scheduledTriggerFire } from '../../../workflows/scheduled-trigger.ts';
import { principalOf } from '../../auth.ts';
import { optionalIdempotencyKey } from '../shared/headers.ts';
import { boundedTemporalCall, startRecorded } from '../shared/workflow-starts.ts';
import type { WorkflowStarter } from '../shared/workflow-starts.ts';
import { reviewStart } from '../../../domain/automation/workflow-ids.ts';

export type EventDeps = { db: DatabasePool; temporal: Client; taskQueue: string; starter: WorkflowStarter; defaultExpirySeconds: number };

const tags = ['automation'];
const security = [{ bearerAuth: [] }];

async function visibleTrigger(db: DatabasePool, id: string, accountId: string, permission: Permission): Promise<Trigger> {
  return (await authorizeInWorkspace(db, await getTrigger(db, id), accountId, permission, () => new AppError('not_found', `No trigger ${id}.`))).object;
}

const eventIngested = z.object({ event: eventSchema, runIds: z.array(z.uuid()) }).meta({ id: 'IngestedEvent' });

export const eventRoutes: FastifyPluginAsyncZod<EventDeps> = async (app, deps) => {
  const { db, temporal, taskQueue } = deps;

  app.post(
    '/events',
    {
      bodyLimit: 512 * 1024,
      schema: {
        tags,
        security,
        operationId: 'ingestEvent',
        summary: 'Ingest an external event (needs automation.events.ingest); Idempotency-Key recommended',
        description:
          `Normalised into the versioned contract "${EVENT_CONTRACT}" v1; creates one run per matching active event trigger in the same transaction and delivers it to subscribed webhook endpoints. ` +
          'Answers 201 with Location (the event). A repeated Idempotency-Key replays the first event (200, Idempotent-Replayed: true) and creates no runs.',
        body: z.strictObject({
          workspaceId: z.uuid(),
          type: z.string().regex(/^[a-z][a-z0-9_.-]{0,127}$/),
          source: z.string().min(1).max(100).describe('The bridge or system that saw the event.'),
          occurredAt: occurredAtSchema.optional(),
          data: z.record(z.string(), z.unknown()).default({}).describe('The event payload, at most 256 KiB as JSON.'),
        }),
        response: { 201: eventIngested, 200: eventIngested },
        problems: ['workspace_not_found', 'permission_denied', 'invalid_idempotency_key', 'idempotency_key_reused'],
      },
    },
    async (request, reply) => {
      const { account } = principalOf(request);
      const body = request.body;
      await requireWorkspacePermission(db, body.workspaceId, account.id, 'automation.events.ingest');
      // Optional here (recommended for retries), but validated like everywhere else when sent.
      const key = optionalIdempotencyKey(request);
      const result = await ingestEvent(db, { workspaceId: body.workspaceId, type: body.type, source: body.source, occurredAt: body.occurredAt ?? null, data: body.data, idempotencyKey: key, accountId: account.id });
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      // The deliveries were recorded with the event: tried now, else made by the relay (a replay records none).
      await startRecorded(deps.starter, result.starts, request.log);
      if (!result.replayed) reply.header('location', `${app.prefix}/events/${result.event.id}`);
      return reply.code(result.replayed ? 200 : 201).send({ event: result.event, runIds: result.runIds });
    },
  );

  app.get(
    '/events/:id',
    {
      schema: {
        tags,
        security,
        operationId: 'readEvent',
        summary: 'One ingested event (needs automation.view)',
        description: `The event in the "${EVENT_CONTRACT}" contract, as it was normalised at ingestion.`,
        params: z.object({ id: z.uuid().describe('The event id (Location of the ingestion).') }),
        response: { 200: eventSchema },
        problems: ['not_found', 'permission_denied'],
      },
    },
    async (request) => {
      const { id } = request.params;
      return (await authorizeInWorkspace(db, await getEvent(db, id), principalOf(request).account.id, 'automation.view', () => new AppError('not_found', `No event ${id}.`))).object;
    },
  );

  const scheduleSpec = (schedule: TriggerSchedule) => ({
    ...('cron' in schedule ? { cronExpressions: [schedule.cron] } : { intervals: [{ every: `${schedule.intervalSeconds}s` }] }),
    timezone: schedule.timeZone,
  });

  app.post(
    '/triggers',
    {
      schema: {
        tags,
        security,
        operationId: 'createTrigger',
        summary: 'Create an event or schedule trigger (needs automation.manage)',
        description:
          'An event trigger matches `eventType` ("*" for any) and a `filter` object contained in the event data. A schedule trigger is a Temporal Schedule (cron or interval, with a time zone). ' +
          'Either way a firing creates a run; processing a run creates an action proposal for review. Answers 201 with Location (the trigger).',
        body: z.strictObject({
          workspaceId: z.uuid(),
          name: z.string().min(1).max(200),
          kind: z.enum(['event', 'schedule']),
          status: z.enum(['active', 'paused']).default('active'),
          eventType: z.string().regex(/^(\*|[a-z][a-z0-9_.-]{0,127})$/).optional(),
          filter: z.record(z.string(), z.unknown()).default({}),
          schedule: scheduleSchema.optional(),
          proposal: triggerProposalSchema,
        }),
        response: { 201: triggerSchema },
        problems: ['workspace_not_found', 'permission_denied', 'mapping_not_found'],
      },
    },
    async (request, reply) => {
      const { account } = principalOf(request);
      const b = request.body;
      await requireWorkspacePermission(db, b.workspaceId, account.id, 'automation.manage');
      if (b.kind === 'event' && !b.eventType) throw new AppError('invalid_request', 'An event trigger needs eventType.', { extensions: { errors: [{ pointer: '/body/eventType', message: 'required' }] } });
      if (b.kind === 'schedule' && !b.schedule) throw new AppError('invalid_request', 'A schedule trigger needs schedule.', { extensions: { errors: [{ pointer: '/body/schedule', message: 'required' }] } });
      // The proposal template must target a vault of this workspace (policy checks again on each run).
      if (!(await mappingInWorkspace(db, b.proposal.action.mappingId, b.workspaceId))) {
        throw new AppError('mapping_not_found', 'The proposal targets a mapping outside this workspace.', { extensions: { errors: [{ pointer: '/body/proposal/action/mappingId', message: 'not in workspace' }] } });
      }
      const trigger = await insertTrigger(db, {
        workspaceId: b.workspaceId,
        accountId: account.id,
        name: b.name,
        kind: b.kind,
        status: b.status,
        eventType: b.kind === 'event' ? b.eventType! : null,
        filter: b.filter,
        schedule: b.kind === 'schedule' ? b.schedule! : null,
        proposal: b.proposal,
      });
      if (trigger.kind === 'schedule') {
        try {
          await boundedTemporalCall(temporal, 'The schedule could not be created: the workflow service did not answer in time. Nothing was created.', () =>
            temporal.schedule.create({
              scheduleId: scheduleIdOf(trigger.id),
              spec: scheduleSpec(b.schedule!),
              action: { type: 'startWorkflow', workflowType: scheduledTriggerFire, args: [{ triggerId: trigger.id }], taskQueue },
              state: { paused: trigger.status === 'paused', note: `Trigger ${trigger.name} (${trigger.id})` },
            }),
          );
        } catch (error) {
          await deleteTrigger(db, trigger.id);
          // Temporal away (the 503 of boundedTemporalCall): nothing was created (the trigger is removed again); try later.
          if (error instanceof AppError) throw error;
          throw new AppError('invalid_request', `The schedule was refused: ${error instanceof Error ? error.message : String(error)}`, { extensions: { errors: [{ pointer: '/body/schedule', message: 'refused by the scheduler' }] } });
        }
      }
      return reply.code(201).header('location', `${app.prefix}/triggers/${trigger.id}`).send(trigger);
    },
  );

  app.get(
    '/triggers',
    {
      schema: {
        tags,
        security,
        operationId: 'listTriggers',
        summary: "A workspace's triggers (needs automation.view)",
        description: 'Every trigger of the workspace, event and schedule, active and paused.',
        querystring: z.strictObject({ workspaceId: z.uuid().describe('The workspace (UUID); the caller must be a member.') }),
        response: { 200: z.object({ triggers: z.array(triggerSchema) }) },
        problems: ['workspace_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      await requireWorkspacePermission(db, request.query.workspaceId, principalOf(request).account.id, 'automation.view');
      return { triggers: [...(await listTriggers(db, request.query.workspaceId))] };
    },
  );

  app.get(
    '/triggers/:id',
    {
      schema: {
        tags,
        security,
        operationId: 'readTrigger',
        summary: 'One trigger (needs automation.view)',
        description: "A trigger of a workspace the caller is a member of; anyone else's is 404.",
        params: z.object({ id: z.uuid().describe('The trigger id.') }),
        response: { 200: triggerSchema },
        problems: ['not_found', 'permission_denied'],
      },
    },
    async (request) => visibleTrigger(db, request.params.id, principalOf(request).account.id, 'automation.view'),
  );

  app.patch(
    '/triggers/:id',
    {
      schema: {
        tags,
        security,
        operationId: 'updateTrigger',
        summary: 'Rename, pause/resume, or change the filter or proposal of a trigger (needs automation.manage)',
        description: "Pausing or resuming a schedule trigger pauses or resumes its Temporal Schedule first; if that is refused the trigger is left as it was.",
        params: z.object({ id: z.uuid().describe('The trigger id.') }),
        body: z.strictObject({ name: z.string().min(1).max(200).optional(), status: z.enum(['active', 'paused']).optional(), filter: z.record(z.string(), z.unknown()).optional(), proposal: triggerProposalSchema.optional() }),
        response: { 200: triggerSchema },
        problems: ['not_found', 'permission_denied', 'mapping_not_found'],
      },
    },
    async (request) => {
      const trigger = await visibleTrigger(db, request.params.id, principalOf(request).account.id, 'automation.manage');
      if (request.body.proposal && !(await mappingInWorkspace(db, request.body.proposal.action.mappingId, trigger.workspaceId))) {
        throw new AppError('mapping_not_found', 'The proposal targets a mapping outside this workspace.', { extensions: { errors: [{ pointer: '/body/proposal/action/mappingId', message: 'not in workspace' }] } });
      }
      // The Temporal Schedule changes first: if it refuses, the trigger is left as it was.
      if (trigger.kind === 'schedule' && request.body.status && request.body.status !== trigger.status) {
        const handle = temporal.schedule.getHandle(scheduleIdOf(trigger.id));
        await boundedTemporalCall(temporal, 'The schedule could not be changed: the workflow service did not answer in time. The trigger is unchanged.', () =>
          request.body.status === 'paused' ? handle.pause('paused through the API') : handle.unpause('resumed through the API'),
        );
      }
      return updateTrigger(db, trigger.id, request.body);
    },
  );

  app.delete(
    '/triggers/:id',
    {
      schema: {
        tags,
        security,
        operationId: 'deleteTrigger',
        summary: 'Delete a trigger and its schedule (needs automation.manage)',
        description: 'Deletes the Temporal Schedule of a schedule trigger, then the trigger and its runs. The proposals its runs created stay.',
        params: z.object({ id: z.uuid().describe('The trigger id.') }),
        response: { 204: z.null() },
        problems: ['not_found', 'permission_denied'],
      },
    },
    async (request, reply) => {
      const trigger = await visibleTrigger(db, request.params.id, principalOf(request).account.id, 'automation.manage');
      if (trigger.kind === 'schedule') {
        await boundedTemporalCall(temporal, 'The schedule could not be deleted: the workflow service did not answer in time. The trigger is unchanged.', () =>
          temporal.schedule
            .getHandle(scheduleIdOf(trigger.id))
            .delete()
            .catch((error: unknown) => {
              if (!(error instanceof Error && error.name === 'ScheduleNotFoundError')) throw error;
            }),
        );
      }
      await deleteTrigger(db, trigger.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/runs',
    {
      schema: {
        tags,
        security,
        operationId: 'listRuns',
        summary: "A workspace's trigger runs, newest first (needs automation.view)",
        description: 'The most recent runs (limit, at most 500): pending, succeeded (with the proposal it created) or failed (with the error).',
        querystring: z.strictObject({ workspaceId: z.uuid().describe('The workspace (UUID); the caller must be a member.'), limit: z.coerce.number().int().min(1).max(500).default(100).describe('How many, at most 500.') }),
        response: { 200: z.object({ runs: z.array(runSchema) }) },
        problems: ['workspace_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      await requireWorkspacePermission(db, request.query.workspaceId, principalOf(request).account.id, 'automation.view');
      return { runs: [...(await listRuns(db, request.query.workspaceId, request.query.limit))] };
    },
  );

  app.post(
    '/process',
    {
      schema: {
        tags,
        security,
        operationId: 'processRuns',
        summary: 'Operator action: process due runs of the workspaces where the caller has automation.manage',
        description:
          'Claims pending runs (FOR UPDATE SKIP LOCKED: safe to call concurrently; no run is processed twice) and turns each into an action proposal, ' +
          'whose review then starts. Approved proposals execute on their own (Temporal); this call does not execute anything. External bridges should not drive it unless the operator contract says so.',
        body: z.strictObject({ workspaceId: z.uuid().optional() }).default({}),
        response: { 200: z.object({ processed: z.array(z.object({ runId: z.uuid(), proposalId: z.uuid() })), resumedReviews: z.array(z.uuid()) }) },
        problems: ['workspace_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      const { account } = principalOf(request);
      if (request.body.workspaceId) await requireWorkspacePermission(db, request.body.workspaceId, account.id, 'automation.manage');
      const { processed } = await processPendingRuns(db, account.id, request.body.workspaceId ?? null, deps.defaultExpirySeconds);
      // Also (re)start the reviews of proposals not yet in review (the relay would, in its time).
      const stranded = await strandedProposals(db, account.id, request.body.workspaceId ?? null);
      await startRecorded(deps.starter, [...processed.map((p) => reviewStart(p.proposal.id)), ...stranded.map((p) => reviewStart(p.id))], request.log);
      return { processed: processed.map((p) => ({ runId: p.runId, proposalId: p.proposal.id })), resumedReviews: stranded.map((p) => p.id) };
    },
  );
};
