// One timestamp format on every interface: ISO 8601 UTC with milliseconds. The hot read builds the
// note inside JSON (Postgres text form) while the inventory and events read columns; both must
// print the same bytes for the same instant.
import { beforeAll, expect, it } from 'vitest';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient } from './support/dev-client.ts';
import { accountWithToken, personalMapping } from './support/fixtures.ts';
import { useTestApp } from './support/harness.ts';
import { mcpRaw } from './support/mcp.ts';

const ISO_UTC_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ctx = useTestApp();
let api: DevClient;
let mcp: ReturnType<typeof mcpRaw>;
let mappingId: string;
let ownerId: string;

beforeAll(async () => {
  const owner = await accountWithToken(ctx.db.pool, 'team');
  api = devClient(ctx.app, owner.token);
  mcp = mcpRaw(ctx.app, owner.token);
  ownerId = owner.account.id;
  ({ mappingId } = await personalMapping(ctx.db.pool, ownerId));
});

it('gives the same bytes for one instant in the read and the inventory, and in REST and MCP events', async () => {
  const created = await api.apply({ mappingId, path: 'Time/Clock.md', content: '# Clock\n' });
  expect(created.statusCode, created.body).toBe(201);
  // A second write through MCP, so updatedAt differs from createdAt and comes from the other gateway.
  const appended = await mcp.call('create_or_append_note', { mappingId, path: 'Time/Clock.md', content: 'tick\n', mode: 'append', expectedHash: created.data.afterRevision, dryRun: false, idempotencyKey: 'ts-append' });
  expect(appended.isError, JSON.stringify(appended)).toBeFalsy();

  const read = (await api.read(mappingId, 'Time/Clock.md')).data;
  const listed = (await api.inventory(mappingId)).data.notes.find((n: { path: string }) => n.path === 'Time/Clock.md');
  const events = (await api.events(mappingId)).data.events.filter((e: { path: string }) => e.path === 'Time/Clock.md');

  for (const value of [read.createdAt, read.updatedAt, listed.updatedAt, ...events.map((e: { occurredAt: string }) => e.occurredAt)]) {
    expect(value).toMatch(ISO_UTC_MILLIS);
  }
  expect(listed.updatedAt).toBe(read.updatedAt);
  // The same events through MCP carry the same bytes as through REST.
  const viaMcp = await mcp.call('get_knowledge_events', { mappingId });
  expect(viaMcp.isError).toBeFalsy();
  const mcpEvents = (viaMcp.structuredContent as { events: Array<{ id: string; occurredAt: string }> }).events;
  expect(mcpEvents.map((e) => [e.id, e.occurredAt])).toEqual(events.map((e: { id: string; occurredAt: string }) => [e.id, e.occurredAt]));
  expect(read.updatedAt > read.createdAt).toBe(true);

  const removed = await api.remove(mappingId, 'Time/Clock.md', { dryRun: false, headers: { 'idempotency-key': 'ts-delete', 'if-match': '*' } });
  expect(removed.statusCode).toBe(200);
  const trashed = (await api.trash(mappingId)).data.items[0];
  expect(trashed.deletedAt).toMatch(ISO_UTC_MILLIS);
  const deleteEvent = (await api.events(mappingId)).data.events.at(-1);
  expect(deleteEvent.occurredAt).toMatch(ISO_UTC_MILLIS);
});

it('gives workspaces the same format', async () => {
  await createWorkspace(ctx.db.pool, { name: 'Clockwork', ownerAccountId: ownerId });
  const response = await api.request('GET', '/api/dev/workspaces');
  const page = response.data;
  expect(page.workspaces?.length, response.body).toBeGreaterThan(0);
  for (const ws of page.workspaces) expect(ws.createdAt).toMatch(ISO_UTC_MILLIS);
});
