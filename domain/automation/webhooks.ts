// Webhook endpoints and deliveries, signed per the Standard Webhooks spec: headers webhook-id,
// webhook-timestamp and webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>" keyed with
// the base64 part of the whsec_ secret, so receivers verify with the `standardwebhooks` library.
import { context, propagation } from '@opentelemetry/api';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { SecretBox } from '../secret-box.ts';
import type { AutomationEvent } from './event-contract.ts';
import { checkWebhookUrl, postJson } from './network.ts';
import type { EgressPolicy } from './network.ts';
import { emptyRow, idRow, isoTimestamp } from '../../db/row-schemas.ts';

type Db = CommonQueryMethods;

export const MAX_DELIVERY_ATTEMPTS = 6;
/** Consecutive deliveries that exhausted their attempts before an endpoint is disabled. */
export const DISABLE_AFTER_FAILED_DELIVERIES = 3;

export const endpointSchema = z.object({
  id: z.uuid(),
  workspaceId: z.uuid(),
  url: z.string(),
  eventTypes: z.array(z.string()),
  description: z.string(),
  secretPrefix: z.string(),
  status: z.enum(['active', 'disabled']),
  disabledReason: z.string().nullable(),
  createdAt: isoTimestamp,
});
export type Endpoint = z.infer<typeof endpointSchema>;

const endpointColumns = sql.fragment`w.id, w.workspace_id AS "workspaceId", w.url, w.event_types AS "eventTypes", w.description,
  w.secret_prefix AS "secretPrefix", w.status, w.disabled_reason AS "disabledReason", w.created_at AS "createdAt"`;

export function requireSecretBox(box: SecretBox | null): SecretBox {
  if (!box) throw new AppError('not_ready', 'Webhook endpoints need SECRETS_ENCRYPTION_KEYS to be configured.');
  return box;
}

export async function createEndpoint(
  db: Db,
  box: SecretBox,
  policy: EgressPolicy,
  input: { workspaceId: string; accountId: string; url: string; eventTypes: string[]; description: string },
): Promise<{ endpoint: Endpoint; secret: string }> {
  const url = await checkWebhookUrl(input.url, policy);
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const id = randomUUID(); // the secret is sealed for this endpoint id (AES-GCM associated data)
  const endpoint = await db.one(sql.type(endpointSchema)`
    INSERT INTO webhook_endpoints AS w (id, workspace_id, created_by_account_id, url, event_types, description, secret_sealed, secret_prefix)
    VALUES (${id}, ${input.workspaceId}, ${input.accountId}, ${url.toString()}, ${sql.array([...new Set(input.eventTypes)], 'text')}, ${input.description},
            ${box.seal(secret, `webhook_endpoint:${id}`)}, ${secret.slice(0, 12)})
    RETURNING ${endpointColumns}`);
  return { endpoint, secret };
}

export async function listEndpoints(db: Db, workspaceId: string) {
  return db.any(sql.type(endpointSchema)`SELECT ${endpointColumns} FROM webhook_endpoints w WHERE w.workspace_id = ${workspaceId} ORDER BY w.created_at, w.id`);
}

export async function getEndpoint(db: Db, id: string): Promise<Endpoint | null> {
  return db.maybeOne(sql.type(endpointSchema)`SELECT ${endpointColumns} FROM webhook_endpoints w WHERE w.id = ${id}`);
}

export async function deleteEndpoint(db: Db, id: string): Promise<void> {
  await db.query(sql.type(emptyRow)`DELETE FROM webhook_endpoints WHERE id = ${id}`);
}

/** Active endpoints of the event's workspace subscribed to its type ("*" = all). */
export async function subscribedEndpoints(db: Db, event: AutomationEvent) {
  return db.anyFirst(sql.type(idRow)`
    SELECT w.id FROM webhook_endpoints w
     WHERE w.workspace_id = ${event.workspaceId} AND w.status = 'active' AND (${event.type} = ANY (w.event_types) OR '*' = ANY (w.event_types))`);
}

/** The message id of one event's delivery to one endpoint (the webhook-id header): derived, so a retried start reuses it. */
export const deliveryMessageId = (eventId: string, endpointId: string) => `msg_${createHash('sha256').update(`${eventId}:${endpointId}`).digest('hex').slice(0, 26)}`;

export function sign(secret: string, messageId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64')}`;
}

export type AttemptOutcome = 'delivered' | 'failed' | 'refused' | 'gone' | 'skipped';

/**
 * A row still `sending` after this long is read as `unknown`: no request can still be running (one
 * HTTP attempt has a 10 s deadline, the activity 30 s), so the worker that made it stopped before
 * recording what came back, and the receiver may or may not have the message.
 */
export const SENDING_UNKNOWN_AFTER_SECONDS = 60;

type AttemptInput = {
  endpointId: string;
  messageId: string;
  /** The delivery attempt (1 … MAX_DELIVERY_ATTEMPTS): the delivery workflow's counter. */
  attempt: number;
  /** Temporal's attempt number of the activity making this request, when the caller knows it (2 and above: a retried activity). */
  activityAttempt?: number | null;
  event: AutomationEvent;
};

/**
 * One delivery attempt of `event` to an endpoint. The URL is checked again at connect time (SSRF).
 * 2xx delivers; 410 disables the endpoint; anything else (3xx included: redirects are not followed)
 * fails this attempt.
 *
 * Every request that may reach the receiver is its own execution row, written just before the
 * request (outcome `sending`) and completed with what came back. So a repeat of the same attempt
 * (the activity retried after a worker crash or a timeout that followed the POST, a workflow reset
 * or started again) is a row of its own, as the receiver saw the same webhook-id twice
 * (at-least-once), and a worker that dies mid-request leaves its row behind (read as `unknown`
 * after SENDING_UNKNOWN_AFTER_SECONDS). A run that sent nothing (the endpoint disabled, the address
 * refused at connect) is recorded once per attempt however often it runs: it is never a send.
 */
export async function attemptDelivery(db: Db, box: SecretBox, policy: EgressPolicy, input: AttemptInput): Promise<AttemptOutcome> {
  const row = await db.maybeOne(sql.type(z.object({ url: z.string(), status: z.string(), sealed: z.string(), workspaceId: z.uuid() }))`
    SELECT url, status, secret_sealed AS sealed, workspace_id AS "workspaceId" FROM webhook_endpoints WHERE id = ${input.endpointId}`);
  if (!row) return 'skipped';
  if (row.status !== 'active') return recordUnsent(db, input, 'skipped', { code: 'endpoint_disabled', message: 'The endpoint is disabled.' }, null);
  const body = JSON.stringify({ type: input.event.type, timestamp: input.event.receivedAt, data: input.event });
  const timestamp = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'webhook-id': input.messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sign(box.open(row.sealed, `webhook_endpoint:${input.endpointId}`), input.messageId, timestamp, body),
    'user-agent': 'hosted-notes-webhooks/1',
  };
  // W3C trace context out (docs/observability.md): the receiver may join the delivery's trace. A
  // no-op unless the process traces.
  propagation.inject(context.active(), headers);
  // Recorded before the request: once it may have left, there is a row for it whatever happens next.
  const executionId = await db.oneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO webhook_executions (endpoint_id, workspace_id, message_id, event_id, attempt, activity_attempt, outcome)
    VALUES (${input.endpointId}, ${input.event.workspaceId}, ${input.messageId}, ${input.event.id}, ${input.attempt}, ${input.activityAttempt ?? null}, 'sending')
    RETURNING id::text AS id`);
  const complete = async (outcome: AttemptOutcome, statusCode: number | null, failure: DeliveryFailure | null, durationMs: number | null) => {
    await db.query(sql.type(emptyRow)`
      UPDATE webhook_executions SET outcome = ${outcome}, status_code = ${statusCode}, error_code = ${failure?.code ?? null}, error = ${failure?.message ?? null}, duration_ms = ${durationMs}
       WHERE id = ${executionId}`);
    return outcome;
  };
  let response;
  try {
    response = await postJson(new URL(row.url), body, headers, policy);
  } catch (error) {
    const failure = deliveryFailure(error);
    // Refused inside the connection's own DNS lookup: nothing left, so it is not a send.
    if (failure.code === 'egress_refused') return recordUnsent(db, input, 'refused', failure, executionId);
    return complete('failed', null, failure, null);
  }
  if (response.status >= 200 && response.status < 300) {
    await db.query(sql.type(emptyRow)`UPDATE webhook_endpoints SET failure_streak = 0 WHERE id = ${input.endpointId}`);
    return complete('delivered', response.status, null, response.durationMs);
  }
  if (response.status === 410) {
    await disableEndpoint(db, input.endpointId, 'The receiver answered 410 Gone.');
    return complete('gone', 410, null, response.durationMs);
  }
  const failure =
    response.status >= 300 && response.status < 400
      ? { code: 'redirect_not_followed', message: `The receiver answered ${response.status}; redirects are not followed.` }
      : { code: 'http_status', message: `The receiver answered ${response.status}.` };
  return complete('failed', response.status, failure, response.durationMs);
}

/**
 * An attempt that sent nothing, recorded at most once per (message, attempt): a retried activity
 * that was refused again, or found the endpoint disabled, adds no row. `replacing` is the row this
 * run wrote before it tried to connect, removed in the same statement.
 */
async function recordUnsent(db: Db, input: AttemptInput, outcome: 'refused' | 'skipped', failure: DeliveryFailure, replacing: string | null): Promise<AttemptOutcome> {
  const removePlaceholder = replacing === null ? sql.fragment`` : sql.fragment`WITH placeholder AS (DELETE FROM webhook_executions WHERE id = ${replacing}) `;
  await db.query(sql.type(emptyRow)`
    ${removePlaceholder}INSERT INTO webhook_executions (endpoint_id, workspace_id, message_id, event_id, attempt, activity_attempt, outcome, error_code, error)
    VALUES (${input.endpointId}, ${input.event.workspaceId}, ${input.messageId}, ${input.event.id}, ${input.attempt}, ${input.activityAttempt ?? null}, ${outcome}, ${failure.code}, ${failure.message})
    ON CONFLICT (message_id, attempt) WHERE outcome IN ('refused', 'skipped') DO NOTHING`);
  return outcome;
}

export type DeliveryFailure = { code: string; message: string };

const TLS_ERROR = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_(GET|VERIFY)_|HOSTNAME_MISMATCH$)/;

/**
 * A stable code and a short message of ours for a delivery that got no response. The raw error
 * text (OpenSSL's included) is not recorded: it names library internals and changes between versions.
 */
export function deliveryFailure(error: unknown): DeliveryFailure {
  const code = (error as { code?: string }).code ?? '';
  if (code === 'EGRESS_REFUSED') return { code: 'egress_refused', message: error instanceof Error ? error.message.replace(/^refused: /, 'Refused: ') : 'Refused.' };
  if (code === 'ETIMEDOUT') return { code: 'timeout', message: 'The receiver did not answer in time.' };
  if (code === 'ECONNREFUSED') return { code: 'connection_refused', message: 'The receiver refused the connection.' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return { code: 'dns_failure', message: "The receiver's host name did not resolve." };
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED') return { code: 'connection_reset', message: 'The receiver closed the connection before answering.' };
  if (TLS_ERROR.test(code)) return { code: 'tls_failure', message: "The TLS handshake failed (the receiver's certificate was not accepted)." };
  return { code: 'network_error', message: 'The delivery failed before a response arrived.' };
}

export async function disableEndpoint(db: Db, id: string, reason: string): Promise<void> {
  await db.query(sql.type(emptyRow)`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ${reason} WHERE id = ${id} AND status = 'active'`);
}

/** After a delivery exhausted its attempts: repeated failures disable the endpoint, with a reason. */
export async function recordFailedDelivery(db: Db, endpointId: string): Promise<void> {
  const streak = await db.maybeOneFirst(sql.type(z.object({ streak: z.number() }))`
    UPDATE webhook_endpoints SET failure_streak = failure_streak + 1 WHERE id = ${endpointId} RETURNING failure_streak AS streak`);
  if (streak !== null && streak >= DISABLE_AFTER_FAILED_DELIVERIES) {
    await disableEndpoint(db, endpointId, `${streak} deliveries in a row failed after ${MAX_DELIVERY_ATTEMPTS} attempts each.`);
  }
}

export const executionRecordSchema = z.object({
  id: z.string().describe('The record (one per request, or one per attempt that sent nothing); newer records have larger ids.'),
  endpointId: z.uuid(),
  messageId: z.string().describe('The webhook-id header: one per event and endpoint, the same on every attempt and repeat.'),
  eventId: z.uuid(),
  attempt: z.number().describe('The delivery attempt this request belongs to (1 … 6, with backoff between them).'),
  activityAttempt: z
    .number()
    .nullable()
    .describe("Temporal's attempt number of the activity that made the request, when the worker recorded it (above 1: a retried activity); null otherwise."),
  repeat: z
    .boolean()
    .describe(
      'True when an earlier request of the same attempt (same messageId and attempt) was already made: the receiver may have had this webhook-id before ' +
        '(at-least-once), e.g. after a worker crash or a timeout retried the delivery activity. Records that sent nothing are never repeats.',
    ),
  outcome: z
    .string()
    .describe(
      'delivered (2xx), failed, gone (410: the endpoint is disabled), refused (the address is not allowed; nothing sent), skipped (the endpoint was disabled; nothing sent), ' +
        `sending (the request is under way), unknown (the worker stopped mid-request: still sending after ${SENDING_UNKNOWN_AFTER_SECONDS} s; the receiver may have it).`,
    ),
  statusCode: z.number().nullable(),
  errorCode: z
    .string()
    .nullable()
    .describe('Stable code of a failed attempt: http_status, redirect_not_followed, timeout, connection_refused, connection_reset, dns_failure, tls_failure, egress_refused, endpoint_disabled, network_error, outcome_unknown.'),
  error: z.string().nullable().describe('A short message of ours; never the raw network or TLS error text.'),
  durationMs: z.number().nullable(),
  createdAt: isoTimestamp.describe('When the request started (or the attempt was recorded, when nothing was sent).'),
});

/** Newest first; `beforeId` (a record id) continues a page. Reading writes nothing. */
export async function listExecutions(db: Db, workspaceId: string, limit: number, beforeId: string | null = null) {
  const unknown = sql.fragment`x.outcome = 'sending' AND x.created_at < now() - make_interval(secs => ${SENDING_UNKNOWN_AFTER_SECONDS})`;
  return db.any(sql.type(executionRecordSchema)`
    SELECT x.id::text AS id, x.endpoint_id AS "endpointId", x.message_id AS "messageId", x.event_id AS "eventId", x.attempt,
           x.activity_attempt AS "activityAttempt",
           x.outcome NOT IN ('refused', 'skipped') AND EXISTS (
             SELECT 1 FROM webhook_executions e
              WHERE e.message_id = x.message_id AND e.attempt = x.attempt AND e.id < x.id AND e.outcome NOT IN ('refused', 'skipped')
           ) AS repeat,
           CASE WHEN ${unknown} THEN 'unknown' ELSE x.outcome END AS outcome,
           x.status_code AS "statusCode",
           CASE WHEN ${unknown} THEN 'outcome_unknown' ELSE x.error_code END AS "errorCode",
           CASE WHEN ${unknown} THEN 'The worker stopped before the outcome was recorded; the receiver may have received it.' ELSE x.error END AS error,
           x.duration_ms AS "durationMs", x.created_at AS "createdAt"
      FROM webhook_executions x
     WHERE x.workspace_id = ${workspaceId} ${beforeId === null ? sql.fragment`` : sql.fragment`AND x.id < ${beforeId}`}
     ORDER BY x.id DESC LIMIT ${limit}`);
}
