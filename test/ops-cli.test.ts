// The operations CLI as an operator runs it: a child process with JSON out and exit codes.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  return opsWith({ DATABASE_URL: db.url }, ...args);
}

function opsWith(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/ops.ts', ...args], { env: { ...process.env, ...env } });
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
  });

  it('names operation failures with stable codes and clear messages, never constraint names', async () => {
    await ops('account', 'create', '--email', 'taken@example.test', '--name', 'First', '--plan', 'team');
    const duplicate = await ops('account', 'create', '--email', 'TAKEN@example.test', '--name', 'Again', '--plan', 'team');
    expect(duplicate.code).toBe(1);
    expect(JSON.parse(duplicate.stderr)).toEqual({ error: 'email_taken', message: 'An account with e-mail taken@example.test already exists.' });

    const nobody = '00000000-0000-4000-8000-000000000000';
    const tokenForNobody = await ops('token', 'create', '--account', nobody, '--name', 'x');
    expect(tokenForNobody.code).toBe(1);
    expect(JSON.parse(tokenForNobody.stderr)).toEqual({ error: 'account_not_found', message: `No account ${nobody}.` });
    const workspaceForNobody = await ops('workspace', 'create', '--name', 'W', '--owner', nobody);
    expect(JSON.parse(workspaceForNobody.stderr)).toMatchObject({ error: 'account_not_found' });
    const vaultInNowhere = await ops('vault', 'create', '--name', 'V', '--owner-workspace', nobody);
    expect(JSON.parse(vaultInNowhere.stderr)).toMatchObject({ error: 'workspace_not_found' });

    const product = await ops('product', 'create', '--slug', 'dup-slug', '--name', 'One');
    expect(product.code).toBe(0);
    const sameSlug = await ops('product', 'create', '--slug', 'dup-slug', '--name', 'Two');
    expect(JSON.parse(sameSlug.stderr)).toMatchObject({ error: 'slug_taken' });

    for (const run of [duplicate, tokenForNobody, workspaceForNobody, vaultInNowhere, sameSlug]) {
      expect(run.stderr).not.toMatch(/constraint|_key\b|_fkey|duplicate key|violates/i);
    }
  });

  it('exits 2 with a short usage error whenever the command line is wrong', async () => {
    const cases = [
      [],
      ['spaceship', 'launch'],
      ['account'],
      ['account', 'fly'],
      ['account', 'get'],
      ['vault', 'create', '--name', 'V', '--owner-account', '00000000-0000-4000-8000-000000000000', '--owner-workspace', '00000000-0000-4000-8000-000000000000'],
      ['chain', 'check', '--scope', 'media.write'],
    ];
    for (const args of cases) {
      const run = await opsWith({ DATABASE_URL: db.url, HNP_SERVICE_CREDENTIAL: '' }, ...args);
      expect(run.code, args.join(' ')).toBe(2);
      const body = JSON.parse(run.stderr);
      expect(body.error).toBe('usage');
      // One short sentence or two, not the whole help text inside a JSON string.
      expect(body.message).not.toContain('\n');
      expect(body.message.length).toBeLessThan(300);
    }
    const unknownNoun = JSON.parse((await ops('spaceship', 'launch')).stderr);
    expect(unknownNoun.message).toMatch(/^Unknown noun "spaceship"\. Nouns: account, token, /);
  });

  it('finds the local stack through DATA_DIR, and says so when there is none', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hnp-ops-data-'));
    try {
      const none = await opsWith({ DATABASE_URL: '', DATA_DIR: dataDir }, 'account', 'list');
      expect(none.code).toBe(1);
      expect(JSON.parse(none.stderr)).toMatchObject({ error: 'no_database' });
      expect(JSON.parse(none.stderr).message).toContain(join(dataDir, 'local-stack.json'));

      await writeFile(join(dataDir, 'local-stack.json'), JSON.stringify({ databaseUrl: db.url }));
      const listed = await opsWith({ DATABASE_URL: '', DATA_DIR: dataDir }, 'account', 'list');
      expect(listed.code).toBe(0);
      expect(Array.isArray(listed.json())).toBe(true);

      await writeFile(join(dataDir, 'local-stack.json'), JSON.stringify({ databaseUrl: 'postgres://postgres:postgres@127.0.0.1:1/notes' }));
      const stale = await opsWith({ DATABASE_URL: '', DATA_DIR: dataDir }, 'account', 'list');
      expect(stale.code).toBe(1);
      expect(JSON.parse(stale.stderr)).toMatchObject({ error: 'database_unreachable' });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
