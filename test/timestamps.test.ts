// One timestamp format on every interface: ISO 8601 UTC with milliseconds. The hot read builds the
// note inside JSON (Postgres text form) while the inventory and events read columns; both must
// print the same bytes for the same instant.
import { expect, it } from 'vitest';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import { useCaller } from './support/harness.ts';

const ISO_UTC_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ctx = useCaller({ plan: 'team' });

it('gives the same bytes for one instant in the read and the inventory, and in REST and MCP events', async () => {
  const created = await ctx.api.apply({ mappingId: ctx.mappingId, path: 'Time/Clock.md', content: '# Clock\n' });
  expect(created.statusCode, created.body).toBe(201);
  // A second write through MCP, so updatedAt differs from createdAt and comes from the other gateway.
  const appended = await ctx.mcp.call('create_or_append_note', { mappingId: ctx.mappingId, path: 'Time/Clock.md', content: 'tick\n', mode: 'append', expectedHash: created.data.afterRevision, dryRun: false, idempotencyKey: 'ts-append' });
  expect(appended.isError, JSON.stringify(appended)).toBeFalsy();

  const read = (await ctx.api.read(ctx.mappingId, 'Time/Clock.md')).data;
  const listed = (await ctx.api.inventory(ctx.mappingId)).data.notes.find((n: { path: string }) => n.path === 'Time/Clock.md');
  const events = (await ctx.api.events(ctx.mappingId)).data.events.filter((e: { path: string }) => e.path === 'Time/Clock.md');

  for (const value of [read.createdAt, read.updatedAt, listed.updatedAt, ...events.map((e: { occurredAt: string }) => e.occurredAt)]) {
    expect(value).toMatch(ISO_UTC_MILLIS);
  }
  expect(listed.updatedAt).toBe(read.updatedAt);
  // The same events through MCP carry the same bytes as through REST.
  const viaMcp = await ctx.mcp.call('get_knowledge_events', { mappingId: ctx.mappingId });
  expect(viaMcp.isError).toBeFalsy();
  const mcpEvents = (viaMcp.structuredContent as { events: Array<{ id: string; occurredAt: string }> }).events;
  expect(mcpEvents.map((e) => [e.id, e.occurredAt])).toEqual(events.map((e: { id: string; occurredAt: string }) => [e.id, e.occurredAt]));
  expect(read.updatedAt > read.createdAt).toBe(true);

  const removed = await ctx.api.remove(ctx.mappingId, 'Time/Clock.md', { dryRun: false, headers: { 'idempotency-key': 'ts-delete', 'if-match': '*' } });
  expect(removed.statusCode).toBe(200);
  const trashed = (await ctx.api.trash(ctx.mappingId)).data.items[0];
  expect(trashed.deletedAt).toMatch(ISO_UTC_MILLIS);
  const deleteEvent = (await ctx.api.events(ctx.mappingId)).data.events.at(-1);
  expect(deleteEvent.occurredAt).toMatch(ISO_UTC_MILLIS);
});

it('gives workspaces the same format', async () => {
  await createWorkspace(ctx.db.pool, { name: 'Clockwork', ownerAccountId: ctx.accountId });
  const response = await ctx.api.request('GET', '/api/dev/workspaces');
  const page = response.data;
  expect(page.workspaces?.length, response.body).toBeGreaterThan(0);
  for (const ws of page.workspaces) expect(ws.createdAt).toMatch(ISO_UTC_MILLIS);
});
