// The production topology (issue 30, platform/topology/): Debian's HAProxy in front of two API
// processes, two workers, Debian's PgBouncer in transaction mode between every process and Postgres,
// all of them the real entry points. Mixed traffic goes through the balancer only: REST writes (one
// Idempotency-Key sent twice at once, so the two copies land on different APIs), MCP calls,
// proposals approved by a reviewer and executed by Forge, and metered generations (the scripted
// OpenAI-compatible provider) against a budget that fits exactly some of them. Then one API is taken
// out under load the way an orchestrator does it (SIGTERM: it drains, HAProxy's checks take it out,
// it exits) and nothing is lost: no request fails, every acknowledged write is there once.
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MODERN_VERSION, PROTOCOL_VERSION_META_KEY } from '../api/routes/mcp/protocol.ts';
import { waitFor } from '../platform/topology/processes.ts';
import { startTopology } from '../platform/topology/topology.ts';
import type { Topology } from '../platform/topology/topology.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { openConsoleStream } from './support/console.ts';
import { workspaceWithReviewer } from './support/fixtures.ts';
import { audioFixture, mediaLedger } from './support/media.ts';
import { generateBody, orgLedger, setBudget } from './support/intelligence.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { ScriptedProvider, scriptedProviderEnv } from './support/scripted-provider.ts';
import { startOutageStack } from './support/outage-stack.ts';
import type { OutageStack } from './support/outage-stack.ts';

const USAGE = { prompt_tokens: 100, completion_tokens: 20 }; // settles at 100 × 1 + 20 × 4 = 180 µ$

let db: TestDatabase;
let topology: Topology;
// Postgres and Temporal of the topology's own, so the outage test can cut and stop them.
let stack: OutageStack;
const provider = new ScriptedProvider();
let writerToken: string;
let reviewerToken: string;
let workspaceId: string;
let mappingId: string;
let runtime: RuntimeChain;

beforeAll(async () => {
  db = await createTestDatabase();
  stack = await startOutageStack(db.url, 'topology');
  await provider.start();
  provider.fallback = { kind: 'chat', chunks: ['Fold ', 'a strip.'], usage: USAGE };
  topology = await startTopology({
    databaseUrl: stack.databaseUrl,
    temporalAddress: stack.temporalAddress,
    plaintextTemporal: true,
    apis: 2,
    workers: 2,
    // Fewer server connections than the four processes' pools hold together: they must share them.
    poolerServerConnections: 8,
    env: {
      LOG_LEVEL: 'warn',
      DATABASE_POOL_SIZE: '6',
      TEMPORAL_TASK_QUEUE: `topology-${process.pid}`,
      SECRETS_ENCRYPTION_KEYS: `topology:${randomBytes(32).toString('base64')}`,
      SHUTDOWN_GRACE_MS: '2000',
      REST_REQUESTS_PER_MINUTE: '100000',
      MCP_REQUESTS_PER_MINUTE: '100000',
      ...scriptedProviderEnv(provider),
    },
  });
  const cast = await workspaceWithReviewer(db.pool, 'Topology');
  ({ workspaceId, mappingId } = cast);
  writerToken = cast.proposer.token;
  reviewerToken = cast.reviewer.token;
  runtime = await buildRuntimeChain(db.pool);
}, 180_000);

afterAll(async () => {
  await topology?.stop();
  await stack?.close();
  await provider.close();
  await db?.drop();
}, 60_000);

/** `servedBy`: the API that answered (HAProxy's X-Served-By); null when none did. */
type Answer = { status: number; json: Record<string, unknown>; retryAfter: string | null; servedBy: string | null };
/** Every answer the balancer gave, for the closing checks (status 0: the connection failed). */
const answers: { what: string; status: number; code: string | null; servedBy: string | null }[] = [];

async function call(what: string, token: string, method: string, path: string, options: { body?: unknown; key?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  try {
    const res = await fetch(`${topology.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(options.key ? { 'idempotency-key': options.key } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const json = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    // MCP answers a failed call with 200 and a JSON-RPC error or an isError result: counted as a failure.
    const mcpFailed = path === '/api/mcp' && (json['error'] !== undefined || (json['result'] as { isError?: boolean } | undefined)?.isError === true);
    const servedBy = res.headers.get('x-served-by');
    answers.push({ what, status: res.status, code: mcpFailed ? 'mcp_error' : typeof json['code'] === 'string' ? json['code'] : null, servedBy });
    return { status: res.status, json, retryAfter: res.headers.get('retry-after'), servedBy };
  } catch {
    answers.push({ what, status: 0, code: null, servedBy: null });
    return { status: 0, json: {}, retryAfter: null, servedBy: null };
  }
}

/** A raw body (media) through the balancer; recorded like every other answer. */
async function rawCall(what: string, token: string, method: string, path: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(`${topology.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...headers }, body, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  const json = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  const servedBy = res.headers.get('x-served-by');
  answers.push({ what, status: res.status, code: typeof json['code'] === 'string' ? json['code'] : null, servedBy });
  return { status: res.status, json, retryAfter: res.headers.get('retry-after'), servedBy };
}

/** A write sent until acknowledged with its key; an in-flight 409 (the same key on the other API) is waited out as its Retry-After says. */
async function acknowledged(what: string, token: string, method: string, path: string, options: { body?: unknown; key?: string } = {}): Promise<Answer> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const res = await call(what, token, method, path, options);
    if (res.json['code'] !== 'idempotency_in_flight') return res;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what}: still in flight after 50 tries`);
}

const writeNote = (path: string, key: string) =>
  acknowledged('write', writerToken, 'POST', '/api/dev/notes', { body: { mappingId, path, content: `# ${path}\n`, dryRun: false }, key });

const mcp = (name: string, args: Record<string, unknown>) =>
  call('mcp', writerToken, 'POST', '/api/mcp', {
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: { [PROTOCOL_VERSION_META_KEY]: MODERN_VERSION } } },
    headers: { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': name },
  });

const generate = (key: string) =>
  call('generate', runtime.secret, 'POST', '/api/product/v1/intelligence/education/generate', { body: generateBody(), key, headers: { 'x-service-runtime-version': '1' } });

async function proposeAndApprove(n: number): Promise<string> {
  const proposal = await acknowledged('propose', writerToken, 'POST', '/api/dev/automation/proposals', {
    body: { workspaceId, bridge: 'topology', summary: `Topology ${n}`, action: { kind: 'note.write', mappingId, path: `Proposed/Note ${n}.md`, content: `# Proposed ${n}\n` } },
    key: `proposal-${n}-${randomUUID()}`,
  });
  expect(proposal.status, JSON.stringify(proposal.json)).toBe(201);
  const id = proposal.json['id'] as string;
  await waitFor(`proposal ${id} open for review`, async () => (await call('read', reviewerToken, 'GET', `/api/dev/automation/proposals/${id}`)).json['state'] !== 'proposed', 30_000);
  const approved = await call('approve', reviewerToken, 'POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
  expect(approved.status, JSON.stringify(approved.json)).toBe(200);
  return id;
}

const executions = z.object({ id: z.uuid(), state: z.string(), applies: z.coerce.number(), receipts: z.coerce.number() });
const readProposals = (ids: string[]) =>
  db.pool.any(sql.type(executions)`
    SELECT p.id, p.state,
           (SELECT count(*) FROM forge_executions f WHERE f.proposal_id = p.id AND f.kind = 'apply') AS applies,
           (SELECT count(*) FROM forge_executions f WHERE f.proposal_id = p.id AND f.kind = 'apply' AND f.receipt IS NOT NULL) AS receipts
      FROM action_proposals p WHERE p.id = ANY(${sql.array(ids, 'uuid')})`);

const noteEvents = (prefix: string) =>
  db.pool.any(sql.type(z.object({ path: z.string(), events: z.coerce.number() }))`
    SELECT path, count(*) AS events FROM note_events WHERE path LIKE ${`${prefix}%`} GROUP BY path`);

describe('the production topology: HAProxy, two APIs, two workers, PgBouncer in transaction mode', { timeout: 180_000 }, () => {
  it('serves mixed traffic from both APIs with every invariant: one write per key, one execution per approval, an exact budget', async () => {
    // REST: every key is sent twice at once; round robin puts the copies on different APIs.
    const writes = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const key = `write-${i}-${randomUUID()}`;
        const [a, b] = await Promise.all([writeNote(`Mixed/Note ${i}.md`, key), writeNote(`Mixed/Note ${i}.md`, key)]);
        return { a, b };
      }),
    );
    for (const { a, b } of writes) {
      expect(a.status, JSON.stringify(a.json)).toBe(201);
      // The second of the pair is the first's answer replayed, whichever API answered it.
      expect({ ...b, servedBy: null }, 'the replay is the first answer').toEqual({ ...a, servedBy: null });
    }
    // Round robin put copies of one key on different APIs (the pairs are concurrent, so not every one).
    expect(writes.filter(({ a, b }) => a.servedBy !== b.servedBy).length).toBeGreaterThan(0);
    const mixed = await noteEvents('Mixed/');
    expect(mixed).toHaveLength(12);
    for (const note of mixed) expect(note, note.path).toMatchObject({ events: 1 });

    // MCP: a read and a search through the balancer.
    const read = await mcp('get_note_content', { mappingId, path: 'Mixed/Note 3.md' });
    expect(read.status, JSON.stringify(read.json)).toBe(200);
    expect(JSON.stringify(read.json['result']), JSON.stringify(read.json)).toContain('# Mixed/Note 3.md');
    const searched = await mcp('search_notes', { mappingId, query: 'Mixed' });
    expect(searched.status, JSON.stringify(searched.json)).toBe(200);
    expect(JSON.stringify(searched.json['result']), JSON.stringify(searched.json)).toContain('Mixed/Note');

    // The reviewer console: signed in through one API, its pages and its live stream served by
    // either (the session lives in Postgres; each API LISTENs on a session connection, past the pooler).
    const signedIn = await fetch(`${topology.url}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: reviewerToken }).toString(),
    });
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.getSetCookie()[0]!.split(';')[0]!;
    const pagesFrom = new Set<string | null>();
    for (let i = 0; i < 4; i++) {
      const page = await fetch(`${topology.url}/console`, { headers: { cookie }, redirect: 'manual' });
      expect(page.status).toBe(200);
      pagesFrom.add(page.headers.get('x-served-by'));
    }
    expect([...pagesFrom].sort()).toEqual(['api-1', 'api-2']);
    const stream = await openConsoleStream(topology.url, cookie);
    await stream.next('ready');

    // Automation: proposals approved by a reviewer, each executed once with one receipt.
    const proposals = await Promise.all(Array.from({ length: 6 }, (_, n) => proposeAndApprove(n)));
    await waitFor('every proposal executed', async () => (await readProposals(proposals)).every((p) => p.state === 'executed'), 60_000);
    for (const p of await readProposals(proposals)) expect(p, p.id).toMatchObject({ state: 'executed', applies: 1, receipts: 1 });
    // The open console heard of every proposal, whichever API and worker changed it.
    await waitFor('every proposal announced to the console', async () => {
      const announced = new Set(stream.events.filter((e) => e.event === 'proposal').map((e) => (e.data as { id: string }).id));
      return proposals.every((id) => announced.has(id));
    }, 10_000);
    stream.close();

    // Media: one upload's key sent twice at once (two APIs): one stored object, one replay; read back through either.
    const audio = audioFixture('tone-3s.ogg');
    const upload = () =>
      rawCall('upload', runtime.secret, 'POST', '/api/product/v1/intelligence/education/media/audio', audio, {
        'content-type': 'audio/ogg',
        'idempotency-key': 'topology-upload-1',
        'x-media-reference': 'topology/take-1',
        'x-media-duration-seconds': '3',
        'x-service-runtime-version': '1',
      });
    const untilAnswered = async () => {
      for (;;) {
        const res = await upload();
        if (res.json['code'] !== 'idempotency_in_flight') return res;
        await new Promise((resolve) => setTimeout(resolve, 1_000 * (Number(res.retryAfter) || 1)));
      }
    };
    const [up1, up2] = await Promise.all([untilAnswered(), untilAnswered()]);
    // The first stored (201), the other replayed it (200, `replayed`), whichever API each reached.
    expect([up1!.status, up2!.status].sort(), JSON.stringify([up1!.json, up2!.json])).toEqual([200, 201]);
    expect([up1!, up2!].map((up) => (up.json['data'] as { replayed: boolean }).replayed).sort()).toEqual([false, true]);
    const mediaId = (up1!.json['data'] as { mediaId: string }).mediaId;
    expect((up2!.json['data'] as { mediaId: string }).mediaId).toBe(mediaId);
    const readFrom = new Set<string | null>();
    for (let i = 0; i < 4; i++) {
      const back = await fetch(`${topology.url}/api/product/v1/intelligence/education/media/${mediaId}`, { headers: { authorization: `Bearer ${runtime.secret}`, 'x-service-runtime-version': '1' } });
      expect(back.status).toBe(200);
      expect(Buffer.from(await back.arrayBuffer()).equals(audio)).toBe(true);
      readFrom.add(back.headers.get('x-served-by'));
    }
    expect([...readFrom].sort()).toEqual(['api-1', 'api-2']);
    expect(await mediaLedger(db.pool, runtime.organizationId)).toMatchObject({ stored: 1, storing: 0, blobs: 1, usedBytes: audio.length });

    // Metered generation: learn the reserved bound, then a budget with room for exactly 5 more; 16 at once.
    await setBudget(db.pool, runtime.organizationId, 1_000_000_000, 1_000);
    const first = await generate(randomUUID());
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    const receipt = (first.json['data'] as { receipt: { reservedMicrodollars: number; costMicrodollars: number } }).receipt;
    const settled = receipt.costMicrodollars;
    await setBudget(db.pool, runtime.organizationId, settled + 5 * receipt.reservedMicrodollars + receipt.reservedMicrodollars - 1, 1_000);
    // The provider holds every answer until all 16 are judged, so none settles early and frees room.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    provider.fallback = { kind: 'chat', chunks: ['ok'], usage: USAGE, holdUntil: gate };
    const callsBefore = provider.calls.length;
    let refused = 0;
    const burst = Array.from({ length: 16 }, () => generate(randomUUID()).then((res) => ((refused += res.status === 200 ? 0 : 1), res)));
    await waitFor('every generation judged', async () => refused + provider.calls.length - callsBefore >= 16, 30_000);
    release();
    const generated = await Promise.all(burst);
    provider.fallback = { kind: 'chat', chunks: ['Fold ', 'a strip.'], usage: USAGE };
    expect(generated.filter((g) => g.status === 200)).toHaveLength(5);
    expect(generated.filter((g) => g.json['code'] === 'intelligence_budget_exhausted')).toHaveLength(11);
    expect(provider.calls.length - callsBefore).toBe(5);
    expect(await orgLedger(db.pool, runtime.organizationId)).toEqual({ committed: 6 * settled, inFlight: 0 });

    // Both APIs served, and nothing failed at the balancer.
    const servers = await topology.balancer.servers();
    expect(servers.map((s) => s.name)).toEqual(['api-1', 'api-2']);
    for (const server of servers) expect(server.requests, server.name).toBeGreaterThan(20);
    expect(servers.reduce((n, s) => n + s.responses5xx, 0)).toBe(0);
    expect((await topology.balancer.frontend()).responses5xx).toBe(0);
    expect(answers.filter((a) => a.status === 0 || a.status >= 500 || a.code === 'mcp_error')).toEqual([]);
  });

  it('keeps every API in rotation through an outage they all share: writes acknowledged while Temporal is down, their own 503s while Postgres is', async () => {
    // HAProxy's view, sampled throughout: no API may be marked down by an outage every API shares.
    const states = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const server of await topology.balancer.servers()) states.add(`${server.name} ${server.status}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    try {
      await stack.stopTemporal();
      // Longer than HAProxy takes to mark a failing server down (2 checks at 1 s).
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      // Dashboards see the outage (/readyz, answered by an API), the balancer does not act on it.
      const ready = await call('readyz', writerToken, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.servedBy).toMatch(/^api-/);
      expect(ready.json).toMatchObject({ code: 'not_ready', checks: { temporal: { ok: false } } });
      // Proposals (durable starts) and note writes are acknowledged by both APIs.
      const proposed = await Promise.all(
        Array.from({ length: 4 }, (_, n) =>
          acknowledged('propose', writerToken, 'POST', '/api/dev/automation/proposals', {
            body: { workspaceId, bridge: 'topology', summary: `Outage ${n}`, action: { kind: 'note.write', mappingId, path: `Outage/Proposed ${n}.md`, content: `# Outage ${n}\n` } },
            key: `outage-proposal-${n}-${randomUUID()}`,
          }),
        ),
      );
      for (const p of proposed) expect(p.status, JSON.stringify(p.json)).toBe(201);
      const written = await Promise.all(Array.from({ length: 4 }, (_, n) => writeNote(`Outage/Note ${n}.md`, `outage-write-${n}-${randomUUID()}`)));
      for (const w of written) expect(w.status, JSON.stringify(w.json)).toBe(201);
      expect(new Set([...proposed, ...written].map((a) => a.servedBy))).toEqual(new Set(['api-1', 'api-2']));

      await stack.startTemporal();
      // Once Temporal is back, the relay starts the reviews the proposals were acknowledged with.
      const ids = proposed.map((p) => p.json['id'] as string);
      await waitFor('the acknowledged proposals in review', async () => (await readProposals(ids)).every((p) => p.state === 'pending_review'), 60_000);

      // Postgres cut under the pooler: each API answers its own 503 problem+json with Retry-After.
      await stack.pg.stop('reset');
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const refused = await Promise.all(Array.from({ length: 4 }, () => call('outage read', writerToken, 'GET', `/api/dev/notes?mappingId=${mappingId}&limit=5`)));
      for (const r of refused) {
        expect(r.status, JSON.stringify(r.json)).toBe(503);
        expect(r.servedBy).toMatch(/^api-/);
        expect(r.retryAfter).not.toBeNull();
        expect(typeof r.json['code']).toBe('string');
      }
      await stack.pg.start();
      // Within 10 s: PgBouncer's default server_login_retry (15 s) kept the first read waiting 13 s
      // after Postgres was back; the topology sets 1 s (platform/topology/pgbouncer.ts).
      await waitFor('reads answered again', async () => (await call('recovered read', writerToken, 'GET', `/api/dev/notes?mappingId=${mappingId}&limit=5`)).status === 200, 10_000);
    } finally {
      sampling = false;
      await sampler;
    }
    expect([...states].sort()).toEqual(['api-1 UP', 'api-2 UP']);
    // The outage's own answers aside, the balancer gave no 5xx of its own.
    expect((await topology.balancer.frontend()).responses5xx).toBe(answers.filter((a) => a.status >= 500).length);
  });

  it('takes an API out under load (SIGTERM: it drains, HAProxy stops routing to it, it exits) and loses nothing', async () => {
    const [leaving, staying] = topology.apis as [Topology['apis'][number], Topology['apis'][number]];
    const before = new Map((await topology.balancer.servers()).map((s) => [s.name, s.requests]));
    const from = answers.length;
    const written: string[] = [];
    let loading = true;
    let n = 0;
    // Eight callers: single-note writes with keys, reads, MCP calls and generations, back to back.
    const caller = async (c: number) => {
      while (loading) {
        const i = n++;
        if (c % 4 === 0) {
          const path = `Drain/Note ${i}.md`;
          const res = await writeNote(path, `drain-${i}-${randomUUID()}`);
          if (res.status === 201 || res.status === 200) written.push(path);
        } else if (c % 4 === 1) await call('list', writerToken, 'GET', `/api/dev/notes?mappingId=${mappingId}&limit=20`);
        else if (c % 4 === 2) await mcp('get_note_content', { mappingId, path: 'Mixed/Note 1.md' });
        else await generate(randomUUID());
      }
    };
    await setBudget(db.pool, runtime.organizationId, 1_000_000_000, 1_000);
    const load = Promise.all(Array.from({ length: 8 }, (_, c) => caller(c)));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const backendBefore = await topology.balancer.backend();
    const frontendBefore = await topology.balancer.frontend();
    let exitedAt = Infinity;
    leaving.child.once('exit', () => (exitedAt = performance.now()));
    const exited = leaving.stop();
    // While it drains: its /readyz/process answers 503 and HAProxy marks it down before its listener closes.
    await waitFor(`${leaving.name} marked down`, async () => (await topology.balancer.servers()).find((s) => s.name === leaving.name)?.status === 'DOWN', 10_000);
    const downAt = performance.now();
    expect(await exited).toBe(0);
    expect(downAt, 'marked down before it exited').toBeLessThan(exitedAt);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    loading = false;
    await load;

    const during = answers.slice(from);
    expect(during.length).toBeGreaterThan(50);
    // Every request was answered by an API: none refused, none dropped, none a 5xx.
    expect(during.filter((a) => a.status === 0 || a.status >= 500 || (a.status >= 400 && a.code !== 'idempotency_in_flight') || a.code === 'mcp_error')).toEqual([]);
    const after = new Map((await topology.balancer.servers()).map((s) => [s.name, s.requests]));
    expect(after.get(staying.name)! - before.get(staying.name)!).toBeGreaterThan(after.get(leaving.name)! - before.get(leaving.name)!);
    expect(after.get(leaving.name)! - before.get(leaving.name)!).toBeGreaterThan(0);
    // Every acknowledged write is there, once.
    const drained = await noteEvents('Drain/');
    expect(drained.map((d) => d.path).sort()).toEqual([...written].sort());
    for (const note of drained) expect(note, note.path).toMatchObject({ events: 1 });
    expect(written.length).toBeGreaterThan(5);
    // No request met a closed listener: HAProxy never had to retry or redispatch one (with the drain
    // off it does: the refused connections of a closing API are retried on the other), and gave no 5xx.
    const backendAfter = await topology.balancer.backend();
    expect(backendAfter, JSON.stringify(backendBefore)).toEqual(backendBefore);
    expect((await topology.balancer.frontend()).responses5xx).toBe(frontendBefore.responses5xx);
    // The one API left still serves.
    expect((await call('after', writerToken, 'GET', '/api/dev/workspaces')).status).toBe(200);
  });
});
