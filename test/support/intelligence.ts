// Shared pieces of the metered-intelligence tests: a generate body, the ledger as Postgres holds
// it, and the organization settings the tests set through the same domain functions ops uses.
import { sql } from 'slonik';
import { z } from 'zod';
import type { DatabasePool } from '../../db/pool.ts';
import { setInstallationIntelligenceSublimit, setProductRuntimeSettings } from '../../domain/product-runtime/entities.ts';

export const generateBody = (task = 'Write a five-minute warm-up on equivalent fractions.') => ({
  intent: { context: 'plan', task },
  standards: [{ id: 'urn:case:4.NF.A.1', code: '4.NF.A.1', statement: 'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b).' }],
  course: { title: 'Grade 4 Mathematics', subject: 'Mathematics', gradeLevels: ['4'], locale: 'en-US' },
  sources: [{ id: 'src-1', title: 'Fraction strips lesson', excerpt: 'Students fold paper strips into halves, quarters and eighths.' }],
});

export const imageBody = () => ({
  context: 'teach',
  brief: {
    type: 'diagram',
    audience: 'grade 4 mathematics class',
    style: 'flat vector, thick outlines',
    orientation: 'landscape',
    palette: ['navy', '#ffcc00'],
    requiredElements: ['a fraction strip split into quarters', 'a fraction strip split into eighths'],
    exclusions: ['text paragraphs'],
    altTextIntent: 'Two fraction strips show that two eighths equal one quarter',
  },
  outputFormat: 'png',
});

export async function setBudget(db: DatabasePool, organizationId: string, budget: number | undefined, maxConcurrent?: number): Promise<void> {
  await setProductRuntimeSettings(db, organizationId, {
    ...(budget !== undefined ? { intelligenceBudgetMicrodollarsMonthly: budget } : {}),
    ...(maxConcurrent !== undefined ? { maxConcurrentIntelligence: maxConcurrent } : {}),
  });
}

export const setSublimit = setInstallationIntelligenceSublimit;

const ledgerRow = z.object({ committed: z.coerce.number(), inFlight: z.coerce.number() });

/** What the organization has committed this month and its executions in flight. */
export async function orgLedger(db: DatabasePool, organizationId: string): Promise<{ committed: number; inFlight: number }> {
  return db.one(sql.type(ledgerRow)`
    SELECT coalesce((SELECT sum(committed_microdollars) FROM organization_intelligence_spend WHERE organization_id = ${organizationId}), 0) AS committed,
           coalesce((SELECT in_flight FROM organization_intelligence_slots WHERE organization_id = ${organizationId}), 0) AS "inFlight"`);
}

export async function installationCommitted(db: DatabasePool, installationId: string): Promise<number> {
  const row = await db.maybeOne(sql.type(z.object({ committed: z.coerce.number() }))`
    SELECT sum(committed_microdollars) AS committed FROM installation_intelligence_spend WHERE installation_id = ${installationId}`);
  return row?.committed ?? 0;
}

const reservationRow = z.object({
  id: z.uuid(),
  state: z.string(),
  reserved: z.coerce.number(),
  charged: z.coerce.number().nullable(),
  outcomeCode: z.string().nullable(),
  workflowId: z.string(),
});

export async function reservations(db: DatabasePool, installationId: string) {
  return db.any(sql.type(reservationRow)`
    SELECT id, state, reserved_microdollars AS reserved, charged_microdollars AS charged, outcome_code AS "outcomeCode", workflow_id AS "workflowId"
      FROM intelligence_reservations WHERE installation_id = ${installationId} ORDER BY created_at`);
}

/** The sum the ledger must hold: open reservations at their bound, finished ones at their charge. */
export async function expectedCommitted(db: DatabasePool, organizationId: string): Promise<number> {
  const row = await db.one(sql.type(z.object({ total: z.coerce.number() }))`
    SELECT coalesce(sum(CASE WHEN state IN ('reserved', 'dispatched') THEN reserved_microdollars ELSE charged_microdollars END), 0) AS total
      FROM intelligence_reservations WHERE organization_id = ${organizationId}`);
  return row.total;
}
