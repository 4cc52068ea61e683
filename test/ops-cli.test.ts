// The operations CLI as an operator runs it: a child process with JSON out and exit codes.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { buildTestApp } from './support/app.ts';
import { progressReporter } from '../scripts/ops/progress.ts';
import { runOps } from './support/ops.ts';
import type { OpsRun } from './support/ops.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

function ops(...args: string[]): Promise<OpsRun> {
  return runOps({ DATABASE_URL: db.url }, ...args);
}

const opsWith = runOps;

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
    // Each ops call is a process of its own (~1.5 s): what does not depend on another runs beside it.
    const [owner, org, product] = (
      await Promise.all([
        ops('account', 'create', '--email', 'chain@example.test', '--name', 'Chain', '--plan', 'team'),
        ops('org', 'create', '--name', 'District Org'),
        ops('product', 'create', '--slug', 'lesson-studio', '--name', 'Lesson Studio', '--redirect-uri', 'https://studio.example.test/return'),
      ])
    ).map((run) => run.json());
    const [wsRun, settingsRun] = await Promise.all([
      ops('workspace', 'create', '--name', 'District', '--owner', owner.id),
      ops('org', 'set-runtime', '--id', org.id, '--intelligence-budget-microdollars-monthly', '2000000', '--max-concurrent-intelligence', '3'),
    ]);
    const ws = wsRun.json();
    expect(settingsRun.json().settings).toEqual({ productRuntime: { intelligenceBudgetMicrodollarsMonthly: 2_000_000, maxConcurrentIntelligence: 3 } });
    expect((await ops('org', 'assign-workspace', '--id', org.id, '--workspace', ws.id)).code).toBe(0);
    const inst = (await ops('installation', 'create', '--org', org.id, '--product', product.id, '--workspace', ws.id)).json();
    const [subRun, tooHigh, principalRun, vaultRun] = await Promise.all([
      ops('installation', 'set-sublimit', '--id', inst.id, '--intelligence-budget-microdollars-monthly', '500000'),
      ops('installation', 'set-sublimit', '--id', inst.id, '--intelligence-budget-microdollars-monthly', '9000000'),
      ops('principal', 'create', '--installation', inst.id, '--name', 'backend'),
      ops('vault', 'create', '--name', 'Curriculum', '--owner-workspace', ws.id),
    ]);
    expect(subRun.json().configuration).toEqual({ productRuntime: { intelligenceBudgetMicrodollarsMonthly: 500_000 } });
    expect(tooHigh.code).toBe(1);
    expect(JSON.parse(tooHigh.stderr)).toMatchObject({ error: 'invalid_request' });
    const principal = principalRun.json();
    const vault = vaultRun.json();
    const cred = (await ops('credential', 'create', '--principal', principal.id, '--scope', 'intelligence.execute')).json();
    expect(cred.secret).toMatch(/^hnp_svc_/);

    const checkChain = (scope: string) =>
      new Promise<OpsRun>((resolve) => {
        const child = spawn(process.execPath, ['scripts/ops.ts', 'chain', 'check', '--scope', scope], {
          env: { ...process.env, DATABASE_URL: db.url, HNP_SERVICE_CREDENTIAL: cred.secret },
        });
        let stdout = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr: '', json: () => JSON.parse(stdout) }));
      });
    const bad = ['http://studio.example.test', 'https://studio.example.test/#x', 'https://user:pw@studio.example.test', 'studio.example.test'];
    const [allowed, lacking, creds, principals, installations, noOrg, targets, grantRun, ...refusals] = await Promise.all([
      checkChain('intelligence.execute'),
      checkChain('media.write'),
      ops('credential', 'list', '--principal', principal.id),
      ops('principal', 'list', '--installation', inst.id),
      ops('installation', 'list', '--org', org.id),
      ops('installation', 'list'),
      ops('product', 'set-return-targets', '--id', product.id, '--redirect-uri', 'https://studio.example.test', '--redirect-uri', 'https://app.example.test/oauth/done'),
      ops('grant', 'create', '--installation', inst.id, '--vault', vault.id, '--access', 'read'),
      ...bad.map((uri) => ops('product', 'set-return-targets', '--id', product.id, '--redirect-uri', uri)),
    ]);
    expect(allowed!.json()).toMatchObject({ ok: true });
    expect(lacking!.json()).toMatchObject({ ok: false, link: 'credential_scope' });

    // Listings never carry a secret; return targets are https origins or exact URIs.
    expect(creds!.json()).toEqual([expect.objectContaining({ id: cred.record.id, displayPrefix: cred.record.displayPrefix, scopes: ['intelligence.execute'] })]);
    expect(creds!.stdout).not.toContain(cred.secret);
    expect(principals!.json()).toEqual([expect.objectContaining({ id: principal.id })]);
    expect(installations!.json()).toEqual([expect.objectContaining({ id: inst.id, workspaceId: ws.id })]);
    expect(noOrg!.code).toBe(2);
    expect(targets!.json().redirectUris).toEqual(['https://studio.example.test', 'https://app.example.test/oauth/done']);
    refusals.forEach((refused, i) => {
      expect(refused.code, bad[i]).toBe(1);
      expect(JSON.parse(refused.stderr)).toMatchObject({ error: 'invalid_request' });
    });
    const grant = grantRun!.json();
    expect((await ops('grant', 'list', '--installation', inst.id)).json()).toEqual([expect.objectContaining({ id: grant.id, access: 'read', revokedAt: null })]);
    await ops('grant', 'revoke', '--id', grant.id);
    const [active, all] = await Promise.all([ops('grant', 'list', '--installation', inst.id), ops('grant', 'list', '--installation', inst.id, '--all')]);
    expect(active.json()).toEqual([]);
    expect(all.json()).toHaveLength(1);
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

  // Two tests, not one: each `ops` is a Node process (~0.7 s of CPU), and the 24 of them in a row
  // outlasted the 30 s test timeout on a loaded day.
  it('vault import and export: help, and usage errors (exit 2)', async () => {
    const help = await ops('vault', 'import', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('npm run ops -- vault import <folder> [options]');
    expect(help.stdout).toMatch(/<folder>\s+the folder to import/);
    expect(help.stdout).toMatch(/--mapping\s+mapping id \(UUID\) \[required\]/);
    expect(help.stdout).toMatch(/--existing\s+a stored note with other content/);
    expect(help.stdout).toMatch(/--skip-invalid\s+import the valid notes/);
    expect((await ops('vault', 'export', '--help')).stdout).toContain('npm run ops -- vault export <folder> [options]');

    const uuid = '00000000-0000-4000-8000-000000000000';
    const usage = [
      ['vault', 'import'],
      ['vault', 'export', '--mapping', uuid, '--account', uuid],
      ['vault', 'import', '/tmp/a', '/tmp/b', '--mapping', uuid, '--account', uuid],
      ['vault', 'import', '/tmp/a', '--mapping', 'not-a-uuid', '--account', uuid],
      ['vault', 'import', '/tmp/a', '--mapping', uuid],
      ['vault', 'import', '/tmp/a', '--mapping', uuid, '--account', uuid, '--existing', 'maybe'],
      ['vault', 'import', '/tmp/a', '--mapping', uuid, '--account', uuid, '--dry-run=maybe'],
      ['vault', 'import', '/tmp/a', '--mapping', uuid, '--account', uuid, '--batch-size', '0'],
      ['vault', 'import', '--folder', '/tmp/a', '--mapping', uuid, '--account', uuid],
    ];
    // Each is refused before anything is read or written: they run side by side.
    const runs = await Promise.all(usage.map((args) => ops(...args)));
    usage.forEach((args, i) => {
      expect(runs[i]!.code, args.join(' ')).toBe(2);
      const body = JSON.parse(runs[i]!.stderr);
      expect(body.error, args.join(' ')).toBe('usage');
      expect(body.message).not.toContain('\n');
    });
  });

  it('vault import and export: progress lines, and stable codes (exit 1)', async () => {
    const owner = (await ops('account', 'create', '--email', 'vault-io@example.test', '--name', 'Vault IO', '--plan', 'team')).json();
    const stranger = (await ops('account', 'create', '--email', 'stranger@example.test', '--name', 'Stranger', '--plan', 'team')).json();
    const vault = (await ops('vault', 'create', '--name', 'Imported', '--owner-account', owner.id)).json();
    const { mappingId } = (await ops('mapping', 'create', '--vault', vault.id)).json();
    const dir = await mkdtemp(join(tmpdir(), 'hnp-ops-vault-'));
    try {
      const source = join(dir, 'source');
      await mkdir(join(source, 'Daily'), { recursive: true });
      await writeFile(join(source, 'Daily', 'Monday.md'), '# Monday\r\n\r\nSee [[Tuesday]].\r\n');
      await writeFile(join(source, 'Tuesday.md'), '');
      await writeFile(join(source, 'photo.jpg'), Buffer.from([0xff, 0xd8]));

      const imported = await ops('vault', 'import', source, '--mapping', mappingId, '--account', owner.id);
      expect(imported.code).toBe(0);
      expect(imported.json()).toMatchObject({ mappingId, notes: { found: 2, created: 2 }, events: 2, skipped: [{ path: 'photo.jpg', code: 'not_markdown' }] });
      // Not a terminal: plain lines on stderr, one at least when each phase completes.
      expect(imported.stderr).toMatch(/^vault import: checking done, 2\/2 files \(\d+\.\d s\)$/m);
      expect(imported.stderr).toMatch(/^vault import: writing done, 2\/2 notes \(\d+\.\d s\)$/m);
      expect((await ops('vault', 'import', source, '--mapping', mappingId, '--account', owner.id)).json()).toMatchObject({ notes: { created: 0, unchanged: 2 }, events: 0 });

      const foreign = await ops('vault', 'import', source, '--mapping', mappingId, '--account', stranger.id);
      expect(foreign.code).toBe(1);
      expect(JSON.parse(foreign.stderr)).toMatchObject({ error: 'mapping_not_found', mappingId });
      const missing = await ops('vault', 'import', join(dir, 'nowhere'), '--mapping', mappingId, '--account', owner.id);
      expect(JSON.parse(missing.stderr)).toMatchObject({ error: 'folder_not_found' });

      const exported = await ops('vault', 'export', join(dir, 'out'), '--mapping', mappingId, '--account', owner.id);
      expect(exported.code).toBe(0);
      expect(exported.json()).toMatchObject({ notes: 2 });
      expect(exported.stderr).toMatch(/^vault export: writing done, 2\/2 files/m);
      expect((await readFile(join(dir, 'out', 'Daily', 'Monday.md'))).equals(await readFile(join(source, 'Daily', 'Monday.md')))).toBe(true);
      const again = await ops('vault', 'export', join(dir, 'out'), '--mapping', mappingId, '--account', owner.id);
      expect(again.code).toBe(1);
      expect(JSON.parse(again.stderr)).toMatchObject({ error: 'folder_not_empty' });

      await writeFile(join(source, 'Latin-1.md'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      const refused = await ops('vault', 'import', source, '--mapping', mappingId, '--account', owner.id);
      expect(refused.code).toBe(1);
      // Progress lines come first; the error is the JSON document that ends stderr.
      const error = JSON.parse(refused.stderr.slice(refused.stderr.indexOf('\n{') + 1));
      expect(error).toMatchObject({ error: 'invalid_utf8', problems: [{ path: 'Latin-1.md', code: 'invalid_utf8' }] });
      const skipped = await ops('vault', 'import', source, '--mapping', mappingId, '--account', owner.id, '--skip-invalid', '--dry-run');
      expect(skipped.json()).toMatchObject({ dryRun: true, notes: { unchanged: 2, invalid: 1 }, invalid: [{ path: 'Latin-1.md', code: 'invalid_utf8' }] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('progress of vault import/export', () => {
  const recorder = (isTTY: boolean) => {
    const chunks: string[] = [];
    return { stream: { isTTY, columns: 100, write: (text: string) => chunks.push(text) }, text: () => chunks.join('') };
  };

  it('draws one bar in place on a terminal', () => {
    const out = recorder(true);
    let clock = 0;
    const progress = progressReporter('vault import', { stream: out.stream, now: () => clock });
    progress.update({ phase: 'check', done: 1, total: 4 });
    clock = 10; // too soon to redraw
    progress.update({ phase: 'check', done: 2, total: 4 });
    progress.update({ phase: 'check', done: 4, total: 4 });
    progress.update({ phase: 'write', done: 0, total: 2 });
    clock = 500;
    progress.update({ phase: 'write', done: 2, total: 2 });
    progress.end();
    const lines = out.text().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]!.split('\r').filter(Boolean).map((l) => l.replace(/\u001b\[K$/, '').replace(/ [\d.]+ s$/, ''))).toEqual([
      'vault import checking [##########------------------------------] 1/4 files 25%',
      'vault import checking [########################################] 4/4 files 100%',
    ]);
    expect(lines[1]).toContain('vault import writing [########################################] 2/2 notes 100% 0.5 s');
    expect(lines[2]).toBe('');
  });

  it('prints plain lines now and then, and one when a phase completes, elsewhere', () => {
    const out = recorder(false);
    let clock = 0;
    const progress = progressReporter('vault import', { stream: out.stream, now: () => clock, intervalMs: 1000 });
    progress.update({ phase: 'write', done: 0, total: 3000 });
    progress.update({ phase: 'write', done: 1000, total: 3000 });
    clock = 1500;
    progress.update({ phase: 'write', done: 2000, total: 3000 });
    clock = 1600;
    progress.update({ phase: 'write', done: 3000, total: 3000 });
    progress.end();
    expect(out.text()).toBe('vault import: writing 2,000/3,000 notes (66%, 1.5 s)\nvault import: writing done, 3,000/3,000 notes (1.6 s)\n');
  });
});
