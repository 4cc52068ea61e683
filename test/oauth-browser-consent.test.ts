// OAuth consent in a real browser (Debian's Chromium): the official MCP SDK client discovers,
// registers and sends the person to the authorization page; they sign in with the console's
// sign-in, see the client marked unverified, choose the scopes and a vault, allow, and Chromium
// follows the redirect to the client's loopback callback (the consent page's CSP lets its form lead
// there); the SDK exchanges the code and calls a tool. The page has no axe violations and logs no
// console error. Then the person revokes it on their connections page and the token stops working.
// Screenshots: .data/artifacts/screenshots/oauth-consent.png, oauth-connections.png.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { axeViolations } from './support/axe.ts';
import { consoleErrors, screenshot, useBrowser } from './support/browser.ts';
import { useCaller } from './support/harness.ts';
import { MemoryOAuthProvider } from './support/oauth.ts';

const caller = useCaller({ listen: true });
const chromium = useBrowser();
let callback: Server;
let callbackUrl: string;
const received: URLSearchParams[] = [];

beforeAll(async () => {
  // The client's own loopback redirect target, as a native host runs one (RFC 8252).
  callback = createServer((request, response) => {
    // Only the redirect itself (Chromium also asks for /favicon.ico).
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/callback') received.push(url.searchParams);
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="en"><title>Done</title><p>You can close this window.</p></html>');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  const address = callback.address();
  callbackUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/callback`;
});
afterAll(async () => {
  await new Promise((resolve) => callback?.close(resolve));
});

it('signs in, consents and returns to the client in Chromium; the SDK then calls tools with the token', async () => {
  const provider = new MemoryOAuthProvider(callbackUrl);
  const mcpUrl = new URL('/api/mcp', caller.url);
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await expect(new Client({ name: 'browser-oauth', version: '1.0.0' }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);

  const page = await chromium.newPage();
  const errors = consoleErrors(page);
  await page.goto(provider.authorizationUrl!.toString());
  // Not signed in: the console's sign-in, then back to the consent page.
  await page.getByLabel('Personal access token').fill(caller.token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Connect SDK test client?' }).waitFor();
  expect(await page.locator('.badge').first().innerText()).toBe('Unverified');
  expect(await page.locator('.redirect-host').innerText()).toBe(new URL(callbackUrl).host);
  expect(await page.getByRole('checkbox', { name: /notes:read/ }).isChecked()).toBe(true);
  expect(await axeViolations(page)).toEqual([]);
  await page.getByRole('checkbox', { name: /notes:write/ }).uncheck();
  await page.getByRole('checkbox', { name: /Test vault/ }).check();
  await screenshot(page, 'oauth-consent', { fullPage: true });
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL((url) => url.toString().startsWith(callbackUrl));
  expect(errors).toEqual([]);

  const params = received.at(-1)!;
  expect(params.get('state')).toBe(provider.lastState);
  expect(params.get('iss')).toBe(caller.url);
  await transport.finishAuth(params.get('code')!);
  expect(provider.saved?.scope).toBe('notes:read');

  const client = new Client({ name: 'browser-oauth', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  try {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).not.toContain('create_or_append_note');
    const schema = await client.callTool({ name: 'get_vault_schema', arguments: { mappingId: caller.mappingId } });
    expect(schema.isError).toBeFalsy();
  } finally {
    await client.close();
  }

  // The person's list of connected applications: revoking there ends the client's access at once.
  await page.goto(`${caller.url}/console/connections`);
  expect(await page.locator('.client-name').first().innerText()).toBe('SDK test client');
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'oauth-connections', { fullPage: true });
  await page.getByRole('button', { name: 'Revoke SDK test client' }).click();
  await page.getByRole('status').filter({ hasText: 'Revoked' }).waitFor();
  const refused = await fetch(mcpUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${provider.saved!.access_token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(refused.status).toBe(401);
  expect(errors).toEqual([]);
});
