// Presentation is never authority: Organization Brand Profiles (every bound, the WCAG contrast
// refusal), branded hosts (syntax, platform-wide uniqueness), the public presentation route (only
// safe fields; unknown, suspended and malformed hosts indistinguishable; a credential adds nothing;
// a brand host plus a foreign credential gains nothing) and getDomainComposition (complete,
// partial with hidden items, unavailable without a pack; the brand's terminology after authorization).
import { describe, expect, it } from 'vitest';
import { AppError } from '../domain/errors.ts';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import {
  addBrandHost,
  brandLimits,
  clearBrandProfile,
  contrastRatio,
  getBrandProfile,
  listBrandHosts,
  normalizeHostname,
  removeBrandHost,
  resolvePresentation,
  setBrandProfile,
} from '../domain/product-runtime/brands.ts';
import type { BrandProfilePatch } from '../domain/product-runtime/brands.ts';
import { assignProductPack } from '../domain/product-runtime/composition.ts';
import {
  assignWorkspace,
  createInstallation,
  createOrganization,
  createServicePrincipal,
  issueServiceCredential,
  setOrganizationStatus,
  setProductDefinitionStatus,
} from '../domain/product-runtime/entities.ts';
import type { Scope } from '../domain/product-runtime/entities.ts';
import { educationPackV1 } from '../domain/product-runtime/packs/education-v1.ts';
import { knownTermKeys } from '../domain/product-runtime/packs/index.ts';
import type { Command } from '../scripts/ops/commands.ts';
import { presentationCommands } from '../scripts/ops/presentation-commands.ts';
import { accountWithToken } from './support/fixtures.ts';
import { useTestApp } from './support/harness.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeChain, RuntimeResponse } from './support/product-runtime.ts';

const PREFIX = '/api/product/v1';
const ctx = useTestApp();

let counter = 0;
const uniqueHost = (label = 'learn') => `${label}-${++counter}-${process.pid}.district.example`;

/** The AppError a call throws, with its pointer codes. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; errors: Array<{ pointer: string; code: string }> }> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'expected a refusal').toBeInstanceOf(AppError);
  const appError = error as AppError;
  return { code: appError.code, errors: (appError.extensions['errors'] as Array<{ pointer: string; code: string }> | undefined) ?? [] };
}

async function expectRefused(call: Promise<unknown>, pointer: string, code: string) {
  const { code: errorCode, errors } = await refusal(call);
  expect(errorCode).toBe('invalid_request');
  expect(errors).toContainEqual(expect.objectContaining({ pointer, code }));
}

const newOrg = async () => (await createOrganization(ctx.db.pool, { name: 'Riverside Schools' })).id;

/** The public route, anonymous unless headers say otherwise. */
async function presentation(query: string, headers: Record<string, string> = {}): Promise<RuntimeResponse> {
  const res = await ctx.app.inject({ method: 'GET', url: `${PREFIX}/presentation${query}`, headers });
  return { statusCode: res.statusCode, headers: res.headers, data: res.body ? JSON.parse(res.body) : {}, body: res.body };
}

/** A second organization's installation of an existing product definition, with its own credential. */
async function installSameProduct(productId: string, scopes: Scope[]) {
  const db = ctx.db.pool;
  const { account } = await accountWithToken(db, 'team');
  const workspace = await createWorkspace(db, { name: 'Hillside curriculum', ownerAccountId: account.id });
  const org = await createOrganization(db, { name: 'Hillside' });
  await assignWorkspace(db, { organizationId: org.id, workspaceId: workspace.id });
  const installation = await createInstallation(db, { organizationId: org.id, productDefinitionId: productId, workspaceId: workspace.id });
  const principal = await createServicePrincipal(db, { installationId: installation.id, name: 'hillside-backend' });
  const credential = await issueServiceCredential(db, { servicePrincipalId: principal.id, scopes });
  return { organizationId: org.id, secret: credential.secret };
}

describe('brand profiles: every field bounded', () => {
  it('display name: 1 to 80 characters (code points), trimmed, no control or bidi-override characters', async () => {
    const org = await newOrg();
    const max = 'é'.repeat(brandLimits.displayNameChars);
    expect((await setBrandProfile(ctx.db.pool, org, { displayName: `  ${max}  ` })).displayName).toBe(max);
    await expectRefused(setBrandProfile(ctx.db.pool, org, { displayName: `${max}x` }), '/displayName', 'display_name_invalid');
    await expectRefused(setBrandProfile(ctx.db.pool, org, { displayName: '   ' }), '/displayName', 'display_name_invalid');
    await expectRefused(setBrandProfile(ctx.db.pool, org, { displayName: 'Riverside\u0007' }), '/displayName', 'display_name_invalid');
    await expectRefused(setBrandProfile(ctx.db.pool, org, { displayName: 'Riverside \u202Eloohcs' }), '/displayName', 'display_name_invalid');
    // Refusals change nothing.
    expect((await getBrandProfile(ctx.db.pool, org))?.displayName).toBe(max);
    expect((await setBrandProfile(ctx.db.pool, org, { displayName: null })).displayName).toBeNull();
  });

  it('colours: #rrggbb per role (stored lower-case); unknown roles and other notations refused', async () => {
    const org = await newOrg();
    const set = await setBrandProfile(ctx.db.pool, org, { colors: { primary: '#1A5FB4', accent: '#e66100' } });
    expect(set.colors).toEqual({ primary: '#1a5fb4', accent: '#e66100', background: null, text: null });
    for (const bad of ['#12345', '#1234567', 'red', 'rgb(0,0,0)', '#ggg000', '1a5fb4', '#fff']) {
      await expectRefused(setBrandProfile(ctx.db.pool, org, { colors: { primary: bad } }), '/colors/primary', 'color_invalid');
    }
    const unknownRole = await refusal(setBrandProfile(ctx.db.pool, org, { colors: { link: '#000000' } } as unknown as BrandProfilePatch));
    expect(unknownRole.code).toBe('invalid_request');
    expect(unknownRole.errors[0]).toMatchObject({ code: 'brand_profile_invalid' });
  });

  it('refuses text on a background below 4.5:1 (WCAG AA), naming the pointer and the ratio; text and background come together', async () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#ffffff', '#ffffff')).toBeCloseTo(1, 5);
    const org = await newOrg();
    // #767676 on white is the lightest grey that passes AA (4.54:1); #777777 is 4.48:1.
    expect((await setBrandProfile(ctx.db.pool, org, { colors: { text: '#767676', background: '#ffffff' } })).colors).toMatchObject({ text: '#767676', background: '#ffffff' });
    const low = await refusal(setBrandProfile(ctx.db.pool, org, { colors: { text: '#777777' } }));
    expect(low.code).toBe('invalid_request');
    expect(low.errors).toEqual([expect.objectContaining({ pointer: '/colors/text', code: 'contrast_too_low', message: expect.stringContaining('4.48:1') })]);
    // A background change is judged against the text already set (the merged profile is checked).
    await expectRefused(setBrandProfile(ctx.db.pool, org, { colors: { background: '#808080' } }), '/colors/text', 'contrast_too_low');
    expect((await getBrandProfile(ctx.db.pool, org))?.colors).toMatchObject({ text: '#767676', background: '#ffffff' });
    // Clearing one of the pair alone is refused; clearing both is fine.
    await expectRefused(setBrandProfile(ctx.db.pool, org, { colors: { background: null } }), '/colors/background', 'color_pair_incomplete');
    const other = await newOrg();
    await expectRefused(setBrandProfile(ctx.db.pool, other, { colors: { text: '#000000' } }), '/colors/background', 'color_pair_incomplete');
    expect((await setBrandProfile(ctx.db.pool, org, { colors: { text: null, background: null } })).colors).toMatchObject({ text: null, background: null });
  });

  it('terminology: known term keys only, at most 40 entries of 1 to 60 characters', async () => {
    const org = await newOrg();
    const sixty = 'x'.repeat(brandLimits.termChars);
    const set = await setBrandProfile(ctx.db.pool, org, { terminology: { learners: ' Pupils ', 'nav.library': sixty } });
    expect(set.terminology).toEqual({ learners: 'Pupils', 'nav.library': sixty });
    await expectRefused(setBrandProfile(ctx.db.pool, org, { terminology: { learners: `${sixty}x` } }), '/terminology/learners', 'term_invalid');
    await expectRefused(setBrandProfile(ctx.db.pool, org, { terminology: { learners: ' ' } }), '/terminology/learners', 'term_invalid');
    await expectRefused(setBrandProfile(ctx.db.pool, org, { terminology: { learners: 'Pu\u0000pils' } }), '/terminology/learners', 'term_invalid');
    await expectRefused(setBrandProfile(ctx.db.pool, org, { terminology: { 'organization.id': 'x' } }), '/terminology/organization.id', 'term_unknown');
    await expectRefused(setBrandProfile(ctx.db.pool, org, { terminology: { 'a/b': 'x' } }), '/terminology/a~1b', 'term_unknown');
    const many = Object.fromEntries(Array.from({ length: brandLimits.terminologyEntries + 1 }, (_, i) => [[...knownTermKeys][i] ?? `extra-${i}`, 'x']));
    await expectRefused(setBrandProfile(ctx.db.pool, org, { terminology: many }), '/terminology', 'terminology_too_large');
    // Every key the packs define can be overridden at once (fewer than the bound today).
    const all = Object.fromEntries([...knownTermKeys].map((key) => [key, 'y']));
    expect(Object.keys((await setBrandProfile(ctx.db.pool, org, { terminology: all })).terminology)).toHaveLength(knownTermKeys.size);
    expect((await setBrandProfile(ctx.db.pool, org, { terminology: null })).terminology).toEqual({});
  });

  it('logo: an https URL (no credentials, no fragment, at most 2048) or an opaque asset id; never anything else', async () => {
    const org = await newOrg();
    expect((await setBrandProfile(ctx.db.pool, org, { logo: 'https://cdn.riverside.example/logo.svg' })).logoRef).toBe('https://cdn.riverside.example/logo.svg');
    expect((await setBrandProfile(ctx.db.pool, org, { logo: 'asset_01J9Z3K' })).logoRef).toBe('asset_01J9Z3K');
    const long = `https://cdn.riverside.example/${'a'.repeat(brandLimits.logoUrlChars)}`;
    for (const bad of ['http://cdn.riverside.example/logo.svg', 'javascript:alert(1)', 'data:image/svg+xml,<svg/>', 'https://user:pw@cdn.example/logo.png', 'https://cdn.example/logo.png#x', 'file:///etc/passwd', '../logo.png', 'asset/../../x', long, '']) {
      await expectRefused(setBrandProfile(ctx.db.pool, org, { logo: bad }), '/logo', 'logo_invalid');
    }
    expect((await getBrandProfile(ctx.db.pool, org))?.logoRef).toBe('asset_01J9Z3K');
  });

  it('an unknown organization is not_found; clearing removes the profile', async () => {
    expect((await refusal(setBrandProfile(ctx.db.pool, '6f0b0b8e-0000-4000-8000-000000000000', { displayName: 'X' }))).code).toBe('not_found');
    const org = await newOrg();
    await setBrandProfile(ctx.db.pool, org, { displayName: 'Riverside' });
    expect(await clearBrandProfile(ctx.db.pool, org)).toEqual({ organizationId: org, cleared: true });
    expect(await getBrandProfile(ctx.db.pool, org)).toBeNull();
    expect(await clearBrandProfile(ctx.db.pool, org)).toEqual({ organizationId: org, cleared: false });
  });
});

describe('brand hosts', () => {
  it('validates hostname syntax and lower-cases it', () => {
    expect(normalizeHostname('Learn.District-9.EXAMPLE')).toBe('learn.district-9.example');
    expect(normalizeHostname('xn--bcher-kva.example')).toBe('xn--bcher-kva.example');
    expect(normalizeHostname(`${'a'.repeat(63)}.example`)).not.toBeNull();
    const bad = [
      '',
      'localhost',
      '127.0.0.1',
      '[::1]',
      'learn.example.org:443',
      'https://learn.example.org',
      'learn.example.org.',
      '.learn.example.org',
      'learn..example.org',
      '-learn.example.org',
      'learn-.example.org',
      '*.example.org',
      'learn_1.example.org',
      'lé.example.org',
      'learn example.org',
      'learn.example.123',
      `${'a'.repeat(64)}.example`,
      `${Array.from({ length: 64 }, () => 'abc').join('.')}.org`, // 259 characters
    ];
    for (const host of bad) expect(normalizeHostname(host), host).toBeNull();
  });

  it('maps a hostname to one organization across the platform; a taken or malformed one is refused', async () => {
    const a = await newOrg();
    const b = await newOrg();
    const host = uniqueHost();
    const added = await addBrandHost(ctx.db.pool, { hostname: host.toUpperCase(), organizationId: a });
    expect(added).toMatchObject({ hostname: host, organizationId: a, productDefinitionId: null });
    const taken = await refusal(addBrandHost(ctx.db.pool, { hostname: host, organizationId: b }));
    expect(taken).toMatchObject({ code: 'conflict', errors: [expect.objectContaining({ pointer: '/hostname', code: 'hostname_taken' })] });
    expect((await refusal(addBrandHost(ctx.db.pool, { hostname: host, organizationId: a }))).code).toBe('conflict');
    await expectRefused(addBrandHost(ctx.db.pool, { hostname: 'learn.example.org:8443', organizationId: a }), '/hostname', 'hostname_invalid');
    expect((await listBrandHosts(ctx.db.pool, { organizationId: a })).map((h) => h.hostname)).toEqual([host]);
    expect(await listBrandHosts(ctx.db.pool, { organizationId: b })).toEqual([]);
    await removeBrandHost(ctx.db.pool, host.toUpperCase());
    expect(await listBrandHosts(ctx.db.pool, { organizationId: a })).toEqual([]);
    expect((await refusal(removeBrandHost(ctx.db.pool, host))).code).toBe('not_found');
    // Free again: another organization may take it now.
    expect((await addBrandHost(ctx.db.pool, { hostname: host, organizationId: b })).organizationId).toBe(b);
  });

  it('a host may name only a product the organization has installed', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const stranger = await newOrg();
    expect((await refusal(addBrandHost(ctx.db.pool, { hostname: uniqueHost(), organizationId: stranger, productDefinitionId: chain.productId }))).code).toBe('not_found');
    const host = await addBrandHost(ctx.db.pool, { hostname: uniqueHost(), organizationId: chain.organizationId, productDefinitionId: chain.productId });
    expect(host.productDefinitionId).toBe(chain.productId);
  });
});

/** A chain whose product composes education@1, with a brand profile and a host naming the product. */
async function brandedChain(options: { scopes?: Scope[] } = {}) {
  const chain = await buildRuntimeChain(ctx.db.pool, options.scopes ? { scopes: options.scopes } : {});
  await assignProductPack(ctx.db.pool, chain.productId, 'education@1');
  await setBrandProfile(ctx.db.pool, chain.organizationId, {
    displayName: 'Riverside Learning',
    colors: { primary: '#1a5fb4', accent: '#e66100', background: '#ffffff', text: '#1c1c1c' },
    terminology: { learners: 'Pupils', 'nav.library': 'Resource bank' },
    logo: 'https://cdn.riverside.example/logo.svg',
  });
  const productHost = (await addBrandHost(ctx.db.pool, { hostname: uniqueHost('learn'), organizationId: chain.organizationId, productDefinitionId: chain.productId })).hostname;
  const orgHost = (await addBrandHost(ctx.db.pool, { hostname: uniqueHost('www'), organizationId: chain.organizationId })).hostname;
  return { ...chain, productHost, orgHost };
}

/** Every id and secret a chain has: none may appear in a public answer. */
const secretsOf = (chain: RuntimeChain) => [chain.organizationId, chain.productId, chain.installationId, chain.principalId, chain.credentialId, chain.workspaceId, chain.vaultId, chain.secret];

describe('GET /presentation (public)', () => {
  it('answers a branded host with safe presentation only: exactly displayName, colors, logo, terminology', async () => {
    const chain = await brandedChain();
    const res = await presentation(`?host=${chain.productHost}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.headers['x-service-runtime-version']).toBe('1');
    expect(Object.keys(res.data).sort()).toEqual(['colors', 'displayName', 'logo', 'terminology']);
    expect(Object.keys(res.data.colors).sort()).toEqual(['accent', 'background', 'primary', 'text']);
    expect(Object.keys(res.data.logo).sort()).toEqual(['kind', 'ref']);
    expect(res.data).toMatchObject({
      displayName: 'Riverside Learning',
      colors: { primary: '#1a5fb4', accent: '#e66100', background: '#ffffff', text: '#1c1c1c' },
      logo: { kind: 'url', ref: 'https://cdn.riverside.example/logo.svg' },
    });
    // The product's pack defaults, overlaid by the organization's overrides.
    expect(res.data.terminology).toEqual({ ...educationPackV1.experience.terminology, learners: 'Pupils', 'nav.library': 'Resource bank' });
    for (const secret of secretsOf(chain)) expect(res.body).not.toContain(secret);
    // Not its other host, not the organization's name.
    expect(res.body).not.toContain(chain.orgHost);
    expect(res.body).not.toContain('District 9');
    // A host without a product presents the organization's own overrides only.
    const orgOnly = await presentation(`?host=${chain.orgHost.toUpperCase()}`);
    expect(orgOnly.statusCode).toBe(200);
    expect(orgOnly.data.terminology).toEqual({ learners: 'Pupils', 'nav.library': 'Resource bank' });
    expect(orgOnly.body).not.toContain(chain.productHost);
  });

  it('is cacheable for a short while, with an ETag that If-None-Match answers with 304', async () => {
    const chain = await brandedChain();
    const res = await presentation(`?host=${chain.productHost}`);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    const etag = String(res.headers['etag']);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await presentation(`?host=${chain.productHost}`, { 'if-none-match': `W/"nope", ${etag}` });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers['etag']).toBe(etag);
    await setBrandProfile(ctx.db.pool, chain.organizationId, { displayName: 'Riverside' });
    const changed = await presentation(`?host=${chain.productHost}`, { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers['etag']).not.toBe(etag);
  });

  it('answers unknown, malformed, suspended, unbranded and retired-product hosts with one indistinguishable 404', async () => {
    const suspended = await brandedChain();
    await setOrganizationStatus(ctx.db.pool, suspended.organizationId, 'suspended');
    const unbranded = await buildRuntimeChain(ctx.db.pool);
    const unbrandedHost = (await addBrandHost(ctx.db.pool, { hostname: uniqueHost(), organizationId: unbranded.organizationId })).hostname;
    const retired = await brandedChain();
    await setProductDefinitionStatus(ctx.db.pool, retired.productId, 'retired');
    const cases: Record<string, string> = {
      unknown: `?host=${uniqueHost('nobody')}`,
      suspended: `?host=${suspended.productHost}`,
      'suspended, organization host': `?host=${suspended.orgHost}`,
      malformed: '?host=learn.example.org%3A443',
      'malformed, script': '?host=%3Cscript%3E',
      'malformed, too long': `?host=${'a'.repeat(5000)}.example`,
      missing: '',
      empty: '?host=',
      repeated: `?host=${retired.orgHost}&host=${retired.orgHost}`,
      unbranded: `?host=${unbrandedHost}`,
      'retired product': `?host=${retired.productHost}`,
    };
    const shapes = new Map<string, string>();
    for (const [name, query] of Object.entries(cases)) {
      const res = await presentation(query);
      expect(res.statusCode, name).toBe(404);
      expect(res.headers['content-type'], name).toContain('application/problem+json');
      expect(res.headers['cache-control'], name).toBeUndefined();
      expect(res.headers['etag'], name).toBeUndefined();
      const { instance, requestId, ...rest } = res.data;
      void instance;
      void requestId;
      expect(rest, name).toMatchObject({ code: 'presentation_not_found', status: 404 });
      shapes.set(name, JSON.stringify(rest));
    }
    // The same body in every case, apart from instance and requestId.
    expect(new Set(shapes.values()).size).toBe(1);
    // The retired product's organization host still presents (the organization is active).
    expect((await presentation(`?host=${retired.orgHost}`)).statusCode).toBe(200);
  });

  it('checks the runtime version like every runtime route, before anything else', async () => {
    const chain = await brandedChain();
    const res = await presentation(`?host=${chain.productHost}`, { 'x-service-runtime-version': '2' });
    expect(res.statusCode).toBe(400);
    expect(res.data).toMatchObject({ code: 'runtime_version_unsupported', supportedVersions: ['1'] });
  });

  it('reveals nothing more to a credential, its own organization\'s or another\'s', async () => {
    const a = await brandedChain();
    const b = await buildRuntimeChain(ctx.db.pool);
    const anonymous = await presentation(`?host=${a.productHost}`);
    for (const secret of [a.secret, b.secret, 'hnp_svc_not-a-credential']) {
      const res = await presentation(`?host=${a.productHost}`, { authorization: `Bearer ${secret}` });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(anonymous.body);
      expect(res.headers['etag']).toBe(anonymous.headers['etag']);
    }
    const unknown = await presentation(`?host=${uniqueHost('nobody')}`, { authorization: `Bearer ${a.secret}` });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('a brand host plus a foreign credential gains nothing', () => {
  it("organization B's credential sees only B's data, whatever brand host of A it claims", async () => {
    const a = await brandedChain();
    const b = await buildRuntimeChain(ctx.db.pool);
    const client = runtimeClient(ctx.app, b.secret);
    const claims = { host: a.productHost, 'x-forwarded-host': a.productHost, origin: `https://${a.productHost}`, referer: `https://${a.productHost}/library` };

    const context = await client.request('GET', '/context', { headers: claims });
    expect(context.statusCode).toBe(200);
    expect(context.data.data).toMatchObject({ organization: { id: b.organizationId }, product: { id: b.productId }, installation: { id: b.installationId } });
    // B has neither a brand nor a pack: no presentation, and never A's.
    expect(context.data.data.presentation).toBeNull();
    const workspace = await client.request('GET', '/workspace', { headers: claims });
    expect(workspace.data.data.workspace.id).toBe(b.workspaceId);
    const notes = await client.request('GET', `/vaults/${a.vaultId}/notes`, { headers: claims });
    expect(notes.statusCode).toBe(403);
    expect(notes.data).toMatchObject({ code: 'vault_not_granted', failedLink: 'vault_grant' });
    // B's product has no pack: A's composition is not lent by A's host.
    const composition = await client.request('GET', '/composition', { headers: claims });
    expect(composition.data).toMatchObject({ kind: 'runtime.domain-composition', status: 'unavailable', data: null });
    for (const res of [context, workspace, notes, composition]) {
      // A problem's instance echoes the path the caller sent (A's vault id); nothing else may name A.
      const body = JSON.stringify({ ...res.data, instance: undefined });
      for (const secret of secretsOf(a)) expect(body).not.toContain(secret);
      expect(body).not.toContain('Riverside Learning');
      expect(body).not.toContain('Resource bank');
    }
  });
});

describe('resolvePresentation (applied after authorization, for getRuntimeContext)', () => {
  it("is the product's pack defaults overlaid by the organization's profile; null with neither", async () => {
    const a = await brandedChain();
    const resolved = await resolvePresentation(ctx.db.pool, { organizationId: a.organizationId, productDefinitionId: a.productId });
    expect(resolved).toEqual((await presentation(`?host=${a.productHost}`)).data);
    // getRuntimeContext carries it, for the caller's own organization and product.
    const context = await runtimeClient(ctx.app, a.secret).context();
    expect(context.data.data.presentation).toEqual(resolved);
    const bare = await buildRuntimeChain(ctx.db.pool);
    expect(await resolvePresentation(ctx.db.pool, { organizationId: bare.organizationId, productDefinitionId: bare.productId })).toBeNull();
    // Another organization installing the same product gets the pack's defaults, never A's overrides.
    const other = await installSameProduct(a.productId, ['runtime.read']);
    const theirs = await resolvePresentation(ctx.db.pool, { organizationId: other.organizationId, productDefinitionId: a.productId });
    expect(theirs).toEqual({ displayName: null, colors: { primary: null, accent: null, background: null, text: null }, logo: null, terminology: educationPackV1.experience.terminology });
  });
});

describe('getDomainComposition', () => {
  const navIds = (res: RuntimeResponse) => (res.data.data.experiencePack.navigation as Array<{ id: string }>).map((item) => item.id);

  it('is unavailable (setting_missing) while no pack is assigned, never made up', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const res = await runtimeClient(ctx.app, chain.secret).request('GET', '/composition');
    expect(res.statusCode).toBe(200);
    expect(res.data).toEqual({
      runtimeVersion: '1',
      kind: 'runtime.domain-composition',
      status: 'unavailable',
      data: null,
      missing: [{ part: 'domain-composition', reason: 'setting_missing', detail: expect.any(String) }],
    });
  });

  it('is complete for a credential with every scope: both packs, the brand terminology applied after authorization', async () => {
    const chain = await brandedChain();
    const res = await runtimeClient(ctx.app, chain.secret).request('GET', '/composition');
    expect(res.statusCode).toBe(200);
    expect(res.data).toMatchObject({ kind: 'runtime.domain-composition', status: 'complete', missing: [] });
    const data = res.data.data;
    expect(data.product).toMatchObject({ id: chain.productId });
    expect(data.packRef).toBe('education@1');
    expect(data.verticalPack).toMatchObject({ id: 'education', version: '1.0.0' });
    const ops = Object.fromEntries((data.verticalPack.operations as Array<{ id: string }>).map((op) => [op.id, op]));
    for (const id of ['projection', 'artifacts/recommend', 'standards/crosswalk']) {
      expect(ops[id], id).toMatchObject({ requiredScope: 'intelligence.execute', deterministic: true, metered: false, path: `/intelligence/education/${id}` });
    }
    for (const id of ['generate', 'assessment-draft', 'quality-review', 'rubric-draft', 'student-guidance']) {
      expect(ops[id], id).toMatchObject({ requiredScope: 'intelligence.execute', metered: true });
    }
    expect(navIds(res)).toEqual(educationPackV1.experience.navigation.map((item) => item.id));
    const library = (data.experiencePack.navigation as Array<{ id: string; label: string; termKey: string }>).find((item) => item.id === 'library');
    expect(library).toMatchObject({ label: 'Resource bank', termKey: 'nav.library', capability: 'notes.read', parentId: null });
    expect(data.experiencePack.terminology).toMatchObject({ learners: 'Pupils', educators: 'Teachers' });
    expect(data.experiencePack.onboarding.steps).toHaveLength(educationPackV1.experience.onboarding.steps.length);
    expect((data.experiencePack.capabilityVisibility as Array<{ visible: boolean }>).every((c) => c.visible)).toBe(true);
  });

  it('is partial when the credential lacks scopes: items needing them (and their children) are hidden, each named scope_missing', async () => {
    const chain = await brandedChain({ scopes: ['runtime.read', 'notes.read'] });
    const res = await runtimeClient(ctx.app, chain.secret).request('GET', '/composition');
    expect(res.statusCode).toBe(200);
    expect(res.data).toMatchObject({ kind: 'runtime.domain-composition', status: 'partial' });
    expect(navIds(res)).toEqual(['home', 'library', 'courses']);
    const missing = res.data.missing as Array<{ part: string; reason: string; scope: string }>;
    expect(missing.every((m) => m.reason === 'scope_missing')).toBe(true);
    expect(missing).toContainEqual(expect.objectContaining({ part: 'navigation.library.publish', scope: 'notes.write' }));
    expect(missing).toContainEqual(expect.objectContaining({ part: 'navigation.standards', scope: 'intelligence.execute' }));
    expect(missing).toContainEqual(expect.objectContaining({ part: 'navigation.standards.crosswalk', scope: 'intelligence.execute' }));
    expect(missing).toContainEqual(expect.objectContaining({ part: 'navigation.class-context.shared-memory', scope: 'memory.propose' }));
    expect(missing).toContainEqual(expect.objectContaining({ part: 'onboarding.connect-vault', scope: 'vaults.bind' }));
    expect(res.data.data.experiencePack.onboarding.steps.map((s: { id: string }) => s.id)).toEqual(['open-library']);
    const visibility = Object.fromEntries((res.data.data.experiencePack.capabilityVisibility as Array<{ capability: string; visible: boolean }>).map((c) => [c.capability, c.visible]));
    expect(visibility).toMatchObject({ 'notes.read': true, 'notes.write': false, 'intelligence.education': false, 'vaults.bind': false });
    // The vertical pack still says what its operations need; saying so grants nothing.
    expect(res.data.data.verticalPack.operations.length).toBe(educationPackV1.vertical.operations.length);
  });

  it('needs runtime.read, and another organization on the same product sees the pack defaults, not this brand', async () => {
    const chain = await brandedChain();
    const noScope = await installSameProduct(chain.productId, ['notes.read']);
    const refused = await runtimeClient(ctx.app, noScope.secret).request('GET', '/composition');
    expect(refused.statusCode).toBe(403);
    expect(refused.data).toMatchObject({ code: 'scope_missing', failedLink: 'credential_scope' });
    const other = await installSameProduct(chain.productId, ['runtime.read', 'notes.read', 'notes.write', 'vaults.bind', 'scopes.read', 'memory.propose', 'intelligence.execute']);
    const res = await runtimeClient(ctx.app, other.secret).request('GET', '/composition');
    expect(res.data.status).toBe('complete');
    expect(res.data.data.experiencePack.terminology).toEqual(educationPackV1.experience.terminology);
    expect(res.body).not.toContain('Resource bank');
  });

  it('a pack is assigned by id@major; unknown packs are refused; none clears it', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    expect(await assignProductPack(ctx.db.pool, chain.productId, 'education')).toMatchObject({ pack: 'education@1' });
    for (const bad of ['education@2', 'maths@1', 'Education@1', 'education@', '']) {
      const { code, errors } = await refusal(assignProductPack(ctx.db.pool, chain.productId, bad));
      expect(code, bad).toBe('invalid_request');
      expect(errors[0], bad).toMatchObject({ pointer: '/pack', code: 'pack_unknown' });
    }
    expect((await refusal(assignProductPack(ctx.db.pool, '6f0b0b8e-0000-4000-8000-000000000000', 'education@1'))).code).toBe('not_found');
    expect(await assignProductPack(ctx.db.pool, chain.productId, null)).toMatchObject({ pack: null });
    expect((await runtimeClient(ctx.app, chain.secret).request('GET', '/composition')).data.status).toBe('unavailable');
  });
});

describe('ops: brand, host and pack commands', () => {
  const run = (cmd: Command, options: Record<string, unknown>) => cmd.run(ctx.db.pool, cmd.options.parse(options) as never);

  it('sets, shows and clears a brand; adds, lists and removes hosts; lists and assigns packs', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const { brand, host, pack } = presentationCommands as Record<'brand' | 'host' | 'pack', Record<string, Command>>;
    expect(await run(pack.list!, {})).toEqual([expect.objectContaining({ ref: 'education@1', termKeys: expect.arrayContaining(['learners', 'nav.library']) })]);
    expect(await run(pack.assign!, { product: chain.productId, pack: 'education@1' })).toMatchObject({ pack: 'education@1' });
    await run(brand.set!, { org: chain.organizationId, displayName: 'Riverside', text: '#111111', background: '#fafafa', term: ['learners=Pupils', 'nav.home=Start'] });
    await run(brand.set!, { org: chain.organizationId, logo: 'asset_riverside' });
    const hostname = uniqueHost();
    await run(host.add!, { host: hostname, org: chain.organizationId, product: chain.productId });
    expect(await run(brand.show!, { org: chain.organizationId })).toMatchObject({
      profile: { displayName: 'Riverside', colors: { text: '#111111', background: '#fafafa' }, terminology: { learners: 'Pupils', 'nav.home': 'Start' }, logoRef: 'asset_riverside' },
      hosts: [expect.objectContaining({ hostname })],
    });
    const res = await presentation(`?host=${hostname}`);
    expect(res.data).toMatchObject({ displayName: 'Riverside', logo: { kind: 'asset', ref: 'asset_riverside' }, terminology: { learners: 'Pupils', 'nav.home': 'Start' } });
    await run(brand.set!, { org: chain.organizationId, displayName: 'none', term: ['none'] });
    expect(await getBrandProfile(ctx.db.pool, chain.organizationId)).toMatchObject({ displayName: null, terminology: {}, logoRef: 'asset_riverside' });
    await expect(run(brand.set!, { org: chain.organizationId, term: ['learners'] })).rejects.toThrow(/key=value/);
    expect(await run(host.list!, { org: chain.organizationId })).toEqual([expect.objectContaining({ hostname })]);
    await run(brand.clear!, { org: chain.organizationId });
    expect((await presentation(`?host=${hostname}`)).statusCode).toBe(404);
    await run(host.remove!, { host: hostname });
    expect(await run(host.list!, { org: chain.organizationId })).toEqual([]);
  });
});
