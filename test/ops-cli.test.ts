// The operations CLI as an operator runs it: a child process with JSON out and exit codes.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { buildTestApp } from './support/app.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- CLI output is untyped JSON; the assertions check it
type Run = { code: number | null; stdout: string; stderr: string; json: () => any };

function ops(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/ops.ts', ...args], { env: { ...process.env, DATABASE_URL: db.url } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) }));
  });
}

describe('npm run ops', () => {
  it('creates an account, a token, a workspace, a vault and a mapping that the API then accepts', async () => {
    const account = (await ops('account', 'create', '--email', 'ops@example.test', '--name', 'Ops Person', '--plan', 'team')).json();
    expect(account).toMatchObject({ email: 'ops@example.test', plan: 'team', status: 'active' });

    const issued = await ops('token', 'create', '--account', account.id, '--name', 'cli');
    expect(issued.code).toBe(0);
    const { token, record } = issued.json();
    expect(token).toMatch(/^hnp_pat_/);

    const listed = (await ops('token', 'list', '--account', account.id)).json();
    expect(listed).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(token);

    const workspace = (await ops('workspace', 'create', '--name', 'Team space', '--owner', account.id)).json();
    const vault = (await ops('vault', 'create', '--name', 'Team vault', '--owner-workspace', workspace.id)).json();
    const mapping = (await ops('mapping', 'create', '--vault', vault.id, '--label', 'primary')).json();
    expect(mapping).toMatchObject({ vaultId: vault.id, label: 'primary', revokedAt: null });
    expect((await ops('vault', 'get', '--id', vault.id)).json()).toMatchObject({ id: vault.id, ownerWorkspaceId: workspace.id });
    expect((await ops('workspace', 'get', '--id', workspace.id)).json()).toMatchObject({ id: workspace.id, ownerAccountId: account.id });

    const app = await buildTestApp(db.pool);
    try {
      const me = await app.inject({ method: 'GET', url: '/api/dev/me', headers: { authorization: `Bearer ${token}` } });
      expect(me.statusCode).toBe(200);
      expect((await ops('token', 'revoke', '--id', record.id)).code).toBe(0);
      expect((await app.inject({ method: 'GET', url: '/api/dev/me', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('manages roles and members with named permissions', async () => {
    const owner = (await ops('account', 'create', '--email', 'owner@example.test', '--name', 'Owner', '--plan', 'team')).json();
    const member = (await ops('account', 'create', '--email', 'member@example.test', '--name', 'Member', '--plan', 'developer_agent')).json();
    const ws = (await ops('workspace', 'create', '--name', 'Roles', '--owner', owner.id)).json();
    const role = await ops('role', 'create', '--workspace', ws.id, '--name', 'ingestor', '--permission', 'automation.events.ingest', '--permission', 'vault.read');
    expect(role.json()).toMatchObject({ name: 'ingestor', permissions: ['automation.events.ingest', 'vault.read'], builtin: false });
    const added = (await ops('workspace', 'add-member', '--workspace', ws.id, '--account', member.id, '--role', 'ingestor')).json();
    expect(added).toMatchObject({ role: 'ingestor', permissions: ['automation.events.ingest', 'vault.read'] });
    const bad = await ops('role', 'create', '--workspace', ws.id, '--name', 'x', '--permission', 'everything');
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stderr)).toMatchObject({ error: 'usage' });
    expect((await ops('role', 'permissions')).json()).toContain('automation.manage');
  });

  it('builds a Product Runtime chain and checks it', async () => {
    const owner = (await ops('account', 'create', '--email', 'chain@example.test', '--name', 'Chain', '--plan', 'team')).json();
    const ws = (await ops('workspace', 'create', '--name', 'District', '--owner', owner.id)).json();
    const org = (await ops('org', 'create', '--name', 'District Org')).json();
    expect((await ops('org', 'assign-workspace', '--id', org.id, '--workspace', ws.id)).code).toBe(0);
    const settings = (await ops('org', 'set-runtime', '--id', org.id, '--intelligence-budget-microdollars-monthly', '2000000', '--max-concurrent-intelligence', '3')).json();
    expect(settings.settings).toEqual({ productRuntime: { intelligenceBudgetMicrodollarsMonthly: 2_000_000, maxConcurrentIntelligence: 3 } });
    const product = (await ops('product', 'create', '--slug', 'lesson-studio', '--name', 'Lesson Studio', '--redirect-uri', 'https://studio.example.test/return')).json();
    const inst = (await ops('installation', 'create', '--org', org.id, '--product', product.id, '--workspace', ws.id)).json();
    const sub = (await ops('installation', 'set-sublimit', '--id', inst.id, '--intelligence-budget-microdollars-monthly', '500000')).json();
    expect(sub.configuration).toEqual({ productRuntime: { intelligenceBudgetMicrodollarsMonthly: 500_000 } });
    const tooHigh = await ops('installation', 'set-sublimit', '--id', inst.id, '--intelligence-budget-microdollars-monthly', '9000000');
    expect(tooHigh.code).toBe(1);
    expect(JSON.parse(tooHigh.stderr)).toMatchObject({ error: 'invalid_request' });
    const principal = (await ops('principal', 'create', '--installation', inst.id, '--name', 'backend')).json();
    const cred = (await ops('credential', 'create', '--principal', principal.id, '--scope', 'intelligence.execute')).json();
    expect(cred.secret).toMatch(/^hnp_svc_/);

    const checkChain = (scope: string) =>
      new Promise<Run>((resolve) => {
        const child = spawn(process.execPath, ['scripts/ops.ts', 'chain', 'check', '--scope', scope], {
          env: { ...process.env, DATABASE_URL: db.url, HNP_SERVICE_CREDENTIAL: cred.secret },
        });
        let stdout = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr: '', json: () => JSON.parse(stdout) }));
      });
    expect((await checkChain('intelligence.execute')).json()).toMatchObject({ ok: true });
    expect((await checkChain('media.write')).json()).toMatchObject({ ok: false, link: 'credential_scope' });
  });

  it('prints help at every level and fails clearly on bad input', async () => {
    const top = await ops('--help');
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Nouns:');
    const noun = await ops('token', '--help');
    expect(noun.stdout).toContain('rotate');
    const verb = await ops('account', 'create', '--help');
    expect(verb.stdout).toMatch(/--email\s+e-mail address \[required\]/);

    const unknownNoun = await ops('spaceship', 'launch');
    expect(unknownNoun.code).toBe(2);
    const missing = await ops('account', 'create', '--email', 'x@example.test');
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stderr).message).toContain('--name');
    const unknownFlag = await ops('account', 'list', '--colour', 'blue');
    expect(unknownFlag.code).toBe(2);
    const notFound = await ops('account', 'get', '--id', '00000000-0000-4000-8000-000000000000');
    expect(notFound.code).toBe(1);
    expect(JSON.parse(notFound.stderr)).toMatchObject({ error: 'not_found' });
    const duplicate = await ops('account', 'create', '--email', 'OPS@example.test', '--name', 'Again', '--plan', 'team');
    expect(duplicate.code).toBe(1);
    expect(JSON.parse(duplicate.stderr).message).toMatch(/duplicate key|unique/i);
  });
});
