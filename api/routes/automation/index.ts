// Automation gateway (/api/dev/automation): every request is admitted to `automation`
// (domain/principals/admission.ts: its own entitlement, the spec's Developer entitlement; counted
// against the REST allowance, the spec naming no automation allowance), then workspace permissions
// per route. Proposals → review → Forge run on Temporal.
import type { Client } from '@temporalio/client';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { actionKinds } from '../../../domain/automation/catalog.ts';
import { proposalStates } from '../../../domain/automation/proposal-states.ts';
import type { AllowanceLeases } from '../../../domain/allowance-lease.ts';
import { admitEveryRequest } from '../../auth.ts';
import { discoveryRoutes } from './discovery.ts';
import { eventRoutes } from './events.ts';
import { proposalRoutes } from './proposals.ts';
import { webhookRoutes } from './webhooks.ts';
import type { EgressPolicy } from '../../../domain/automation/network.ts';
import type { SecretBox } from '../../../domain/secret-box.ts';
import type { WorkflowStarter } from '../shared/workflow-starts.ts';
import type { ProposalWaits } from '../../../domain/automation/proposal-waits.ts';

export type AutomationDeps = {
  db: DatabasePool;
  leases: AllowanceLeases;
  temporal: Client;
  taskQueue: string;
  starter: WorkflowStarter;
  proposalExpirySeconds: number;
  proposalWaits: ProposalWaits;
  secretBox: SecretBox | null;
  egress: EgressPolicy;
  webhookRetryBaseMs: number;
};

export const automationGateway: FastifyPluginAsyncZod<AutomationDeps> = async (app, deps) => {
  app.addHook('onRequest', admitEveryRequest({ db: deps.db, leases: deps.leases }, 'automation'));

  app.get(
    '/catalog',
    {
      schema: {
        tags: ['automation'],
        security: [{ bearerAuth: [] }],
        operationId: 'readAutomationCatalog',
        summary: 'Action kinds Forge can execute, and the proposal states',
        description: 'Version 1 of the catalog: what a proposal may ask for (with its bounds) and every state a proposal can be in.',
        response: {
          200: z.object({
            version: z.literal(1),
            actionKinds: z.array(z.object({ kind: z.string(), description: z.string(), bounds: z.record(z.string(), z.unknown()) })),
            proposalStates: z.array(z.string()),
          }),
        },
      },
    },
    async () => ({
      version: 1 as const,
      actionKinds: [
        { kind: actionKinds[0], description: 'Write one note (create or replace; replacing needs expectedHash) in a vault of the workspace.', bounds: { contentBytes: 1_048_576 } },
        { kind: actionKinds[1], description: 'Write up to 100 notes in one vault of the workspace, all or nothing.', bounds: { actions: 100, contentBytes: 8 * 1_048_576 } },
        {
          kind: actionKinds[2],
          description:
            "Promote a product's memory candidate to the shared memory of a context scope. Proposed only by products through the Product Runtime " +
            '(createSharedMemoryCandidate); reviewed and undone here like any proposal.',
          bounds: { contentChars: 10_000, rationaleChars: 2_000 },
        },
      ],
      proposalStates: [...proposalStates],
    }),
  );

  await app.register(discoveryRoutes);
  await app.register(eventRoutes, { db: deps.db, temporal: deps.temporal, taskQueue: deps.taskQueue, starter: deps.starter, defaultExpirySeconds: deps.proposalExpirySeconds });
  await app.register(webhookRoutes, { db: deps.db, temporal: deps.temporal, taskQueue: deps.taskQueue, secretBox: deps.secretBox, egress: deps.egress, retryBaseMs: deps.webhookRetryBaseMs });
  await app.register(proposalRoutes, { db: deps.db, starter: deps.starter, defaultExpirySeconds: deps.proposalExpirySeconds, waits: deps.proposalWaits });
};
