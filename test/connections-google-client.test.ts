// The Google side of delegated connections, through the official clients (google-auth-library,
// @googleapis/drive, @googleapis/classroom) against the scripted loopback Google: PKCE and
// single-use codes, refresh and revocation, denied consent, retry-safe Drive creates and Classroom
// assignments, conflict-checked Drive updates, bounded reads, rosters without e-mails, no grades,
// no secret in any error, and every way Google can fail to answer in time read as a timeout from
// both gaxios majors the clients bundle. Needs neither Postgres nor Temporal.
import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCourseWork, findCourseWorkByMarker, listActiveCourses, listRoster, listSubmissionAttachments, newCourseWorkMarker } from '../domain/connections/google-classroom.ts';
import {
  DRIVE_LIMITS,
  DriveContentTooLargeError,
  DriveVersionConflictError,
  createDocument,
  getLineage,
  readDocumentText,
  reserveFileId,
  updateDocument,
} from '../domain/connections/google-drive.ts';
import { auth as classroomAuth, classroom } from '@googleapis/classroom';
import { auth as driveAuth, drive as driveApi } from '@googleapis/drive';
import { GoogleApiError, GoogleInputError, createGoogleOAuthProvider, inspectFailure, newPkcePair, newState } from '../domain/connections/google-oauth.ts';
import type { GoogleAccess } from '../domain/connections/google-oauth.ts';
import { OAuthProviderError, scopesFor } from '../domain/connections/provider.ts';
import type { GoogleService, OAuthProvider, OAuthTokens } from '../domain/connections/provider.ts';
import { GOOGLE_DOC_MIME, ScriptedGoogle } from './support/scripted-google.ts';

const REDIRECT_URI = 'https://notes.example/api/product/v1/connections/provider/oauth/callback';
const EMAILS_SCOPE = 'https://www.googleapis.com/auth/classroom.profile.emails';

let google: ScriptedGoogle;
let provider: OAuthProvider;

beforeAll(async () => {
  google = await new ScriptedGoogle({ redirectUris: [REDIRECT_URI] }).start();
  provider = createGoogleOAuthProvider(google.settings());
  google
    .addCourse({ id: '7001', name: 'Biology 7B', section: 'Period 2', room: 'Lab 3', courseState: 'ACTIVE', taughtByMe: true })
    .addCourse({ id: '7002', name: 'Chemistry 8A', courseState: 'ACTIVE', taughtByMe: true })
    .addCourse({ id: '7003', name: 'Physics (archived)', courseState: 'ARCHIVED', taughtByMe: true })
    .addCourse({ id: '7004', name: 'Someone else’s course', courseState: 'ACTIVE', taughtByMe: false })
    .addStudents('7001', [
      { userId: 's-101', givenName: 'Ada', familyName: 'Park', emailAddress: 'ada.park@school.example', photoUrl: 'https://lh3.googleusercontent.com/a/ada' },
      { userId: 's-102', givenName: 'Ben', familyName: 'Ruiz', emailAddress: 'ben.ruiz@school.example', photoUrl: 'https://lh3.googleusercontent.com/a/ben' },
      { userId: 's-103', givenName: 'Cleo', familyName: 'Ng', emailAddress: 'cleo.ng@school.example', photoUrl: 'https://lh3.googleusercontent.com/a/cleo' },
    ]);
});

afterAll(async () => {
  await google?.close();
});

/** The whole consent round trip: URL, the person's visit, the code exchange. */
async function connect(services: GoogleService[], p: OAuthProvider = provider): Promise<OAuthTokens> {
  const pkce = newPkcePair();
  const state = newState();
  const visit = await google.visit(p.authorizationUrl({ state, codeChallenge: pkce.challenge, redirectUri: REDIRECT_URI, scopes: scopesFor(services) }));
  expect(visit.redirect?.searchParams.get('state')).toBe(state);
  const code = visit.redirect?.searchParams.get('code');
  expect(code).toBeTruthy();
  return p.exchangeCode({ code: code!, codeVerifier: pkce.verifier, redirectUri: REDIRECT_URI });
}

/** A consented code not yet exchanged, with its verifier. */
async function consentedCode(services: GoogleService[]): Promise<{ code: string; verifier: string }> {
  const pkce = newPkcePair();
  const visit = await google.visit(provider.authorizationUrl({ state: newState(), codeChallenge: pkce.challenge, redirectUri: REDIRECT_URI, scopes: scopesFor(services) }));
  return { code: visit.redirect!.searchParams.get('code')!, verifier: pkce.verifier };
}

const access = (tokens: OAuthTokens, settings = google.settings()): GoogleAccess => ({ settings, accessToken: tokens.accessToken });

/** Awaits a rejection, checks its type and code, and that nothing secret is anywhere in it. */
async function failure<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E, code?: string): Promise<E> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  if (code !== undefined) expect((error as unknown as { code: string }).code).toBe(code);
  // Stack frames are our own file paths (a checkout named ci14 would match the `4/` of a code): left out.
  const inspected = inspect(error, { depth: 10, showHidden: true }).split('\n').filter((line) => !/^\s+at /.test(line)).join('\n');
  const text = `${String(error)}\n${inspected}\n${JSON.stringify(error)}`;
  for (const secret of google.secrets()) expect(text).not.toContain(secret);
  expect(text).not.toMatch(/@school\.example|Bearer|ya29\.|1\/\/|4\//);
  expect((error as { cause?: unknown }).cause).toBeUndefined();
  return error as E;
}

describe('OAuth: authorization code with PKCE', () => {
  it('PKCE helpers: a 256-bit verifier and state, the S256 challenge of the verifier', () => {
    const { verifier, challenge } = newPkcePair();
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(challenge).toBe(createHash('sha256').update(verifier).digest('base64url'));
    expect(newState()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newState()).not.toBe(newState());
  });

  it('the URL asks for a code with offline access, a consent prompt, S256 and exactly the scopes; the exchange returns tokens', async () => {
    const pkce = newPkcePair();
    const state = newState();
    const url = new URL(provider.authorizationUrl({ state, codeChallenge: pkce.challenge, redirectUri: REDIRECT_URI, scopes: scopesFor(['drive', 'classroom']) }));
    expect(`${url.origin}${url.pathname}`).toBe(google.settings().endpoints.authorizeUrl);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: google.clientId,
      redirect_uri: REDIRECT_URI,
      scope: scopesFor(['drive', 'classroom']).join(' '),
      state,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
      access_type: 'offline',
      prompt: 'consent',
    });
    const visit = await google.visit(url.toString());
    expect(visit.status).toBe(302);
    expect(visit.redirect?.searchParams.get('state')).toBe(state);
    const tokens = await provider.exchangeCode({ code: visit.redirect!.searchParams.get('code')!, codeVerifier: pkce.verifier, redirectUri: REDIRECT_URI });
    expect(tokens.accessToken).toMatch(/^ya29\./);
    expect(tokens.refreshToken).toMatch(/^1\/\//);
    expect(Date.parse(tokens.expiresAt)).toBeGreaterThan(Date.now());
    expect(tokens.grantedScopes).toEqual(scopesFor(['drive', 'classroom']));
  });

  it('refuses to build a URL with a scope outside the least-privilege set', () => {
    const { challenge } = newPkcePair();
    expect(() => provider.authorizationUrl({ state: newState(), codeChallenge: challenge, redirectUri: REDIRECT_URI, scopes: [...scopesFor(['classroom']), EMAILS_SCOPE] })).toThrow(RangeError);
    expect(() => provider.authorizationUrl({ state: 'short', codeChallenge: challenge, redirectUri: REDIRECT_URI, scopes: scopesFor(['drive']) })).toThrow(RangeError);
  });

  it('a wrong PKCE verifier is provider_invalid_grant', async () => {
    const { code } = await consentedCode(['drive']);
    const error = await failure(provider.exchangeCode({ code, codeVerifier: newPkcePair().verifier, redirectUri: REDIRECT_URI }), OAuthProviderError, 'provider_invalid_grant');
    expect(error.status).toBe(400);
  });

  it('a code works once', async () => {
    const { code, verifier } = await consentedCode(['drive']);
    await provider.exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT_URI });
    await failure(provider.exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT_URI }), OAuthProviderError, 'provider_invalid_grant');
  });

  it('a code exchanged with another redirect URI is provider_invalid_grant', async () => {
    const { code, verifier } = await consentedCode(['drive']);
    await failure(provider.exchangeCode({ code, codeVerifier: verifier, redirectUri: 'https://notes.example/elsewhere' }), OAuthProviderError, 'provider_invalid_grant');
  });

  it('a refused client secret is provider_invalid_client', async () => {
    const { code, verifier } = await consentedCode(['drive']);
    const wrongClient = createGoogleOAuthProvider(google.settings({ clientSecret: 'GOCSPX-not-the-secret' }));
    await failure(wrongClient.exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT_URI }), OAuthProviderError, 'provider_invalid_client');
  });

  it('a denied consent and a provider error come back to the redirect URI as error + state, with no code', async () => {
    google.scriptConsent({ kind: 'deny' }, { kind: 'error' });
    for (const expected of ['access_denied', 'server_error']) {
      const state = newState();
      const visit = await google.visit(provider.authorizationUrl({ state, codeChallenge: newPkcePair().challenge, redirectUri: REDIRECT_URI, scopes: scopesFor(['drive']) }));
      expect(visit.status).toBe(302);
      expect(`${visit.redirect!.origin}${visit.redirect!.pathname}`).toBe(REDIRECT_URI);
      expect(Object.fromEntries(visit.redirect!.searchParams)).toEqual({ error: expected, state });
    }
  });

  it('a partial grant reports only the scopes granted', async () => {
    google.scriptConsent({ kind: 'consent', grant: scopesFor(['drive']) });
    const tokens = await connect(['drive', 'classroom']);
    expect(tokens.grantedScopes).toEqual(scopesFor(['drive']));
    // And the API holds the token to it.
    await failure(listActiveCourses(access(tokens)), GoogleApiError, 'provider_forbidden');
  });

  it('an expired access token is refused; a refresh brings a working one (and no new refresh token)', async () => {
    const tokens = await connect(['drive']);
    await reserveFileId(access(tokens));
    google.expireAccessTokens();
    await failure(reserveFileId(access(tokens)), GoogleApiError, 'provider_unauthorized');
    const refreshed = await provider.refresh(tokens.refreshToken!);
    expect(refreshed.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.refreshToken).toBeNull();
    expect(refreshed.grantedScopes).toEqual(scopesFor(['drive']));
    expect(await reserveFileId(access(refreshed))).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('revoke ends the grant: the refresh token and the access token stop working; revoking again is fine', async () => {
    const tokens = await connect(['drive']);
    const before = google.revocations.length;
    await provider.revoke(tokens.refreshToken!);
    expect(google.revocations.slice(before)).toEqual([{ tokenIn: 'body', known: true }]);
    await failure(provider.refresh(tokens.refreshToken!), OAuthProviderError, 'provider_invalid_grant');
    await failure(reserveFileId(access(tokens)), GoogleApiError, 'provider_unauthorized');
    await provider.revoke(tokens.refreshToken!);
    expect(google.revocations.at(-1)).toEqual({ tokenIn: 'body', known: false });
  });

  it('a 5xx is provider_error after exactly one attempt; a hang is provider_timeout; nothing listening is provider_unreachable', async () => {
    const { code, verifier } = await consentedCode(['drive']);
    const before = google.requestsTo('token').length;
    google.fail('token', { kind: 'status', status: 503 });
    const error = await failure(provider.exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT_URI }), OAuthProviderError, 'provider_error');
    expect(error.status).toBe(503);
    expect(google.requestsTo('token').length - before).toBe(1);

    google.fail('token', { kind: 'hang' });
    const impatient = createGoogleOAuthProvider(google.settings({ timeoutMs: 300 }));
    await failure(impatient.exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT_URI }), OAuthProviderError, 'provider_timeout');

    const nowhere = google.settings();
    nowhere.endpoints = { ...nowhere.endpoints, tokenUrl: 'http://127.0.0.1:9/token' };
    await failure(createGoogleOAuthProvider(nowhere).exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT_URI }), OAuthProviderError, 'provider_unreachable');
  });

  it('an exchange cut after Google used the code cannot be replayed into a second grant', async () => {
    const { code, verifier } = await consentedCode(['drive']);
    google.fail('token', { kind: 'ambiguous' });
    await failure(provider.exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT_URI }), OAuthProviderError, 'provider_unreachable');
    await failure(provider.exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT_URI }), OAuthProviderError, 'provider_invalid_grant');
  });
});

describe('Drive', () => {
  let drive: GoogleAccess;
  beforeAll(async () => {
    drive = access(await connect(['drive']));
  });

  it('creates a Google Doc from Markdown under a reserved id, with the upload sent to the configured root', async () => {
    const fileId = await reserveFileId(drive);
    const created = await createDocument(drive, { fileId, name: 'Cell biology notes', markdown: '# Cells\n\nMitochondria.' });
    expect(created).toEqual({ fileId, name: 'Cell biology notes', mimeType: GOOGLE_DOC_MIME, version: '1', modifiedTime: expect.any(String) });
    expect(google.file(fileId)?.content).toBe('# Cells\n\nMitochondria.');
    expect(google.requestsTo('drive.create').at(-1)).toMatchObject({ method: 'POST', path: '/upload/drive/v3/files', status: 200, scopes: scopesFor(['drive']) });
    expect(await getLineage(drive, fileId)).toEqual(created);
  });

  it('a create retried after an ambiguous failure, and again after success, leaves exactly one file', async () => {
    const fileId = await reserveFileId(drive);
    const before = google.fileCount();
    google.fail('drive.create', { kind: 'ambiguous' });
    const cut = await failure(createDocument(drive, { fileId, name: 'Retry me', markdown: 'one' }), GoogleApiError, 'provider_unreachable');
    expect(cut.maybeApplied).toBe(true);
    const retried = await createDocument(drive, { fileId, name: 'Retry me', markdown: 'one' });
    const again = await createDocument(drive, { fileId, name: 'Retry me', markdown: 'one' });
    expect(retried.fileId).toBe(fileId);
    expect(again).toEqual(retried);
    expect(google.fileCount() - before).toBe(1);
  });

  it('an update with the version last seen writes; a stale one is a conflict carrying the current lineage, and the remote file is untouched', async () => {
    const fileId = await reserveFileId(drive);
    const created = await createDocument(drive, { fileId, name: 'Shared plan', markdown: 'v1' });
    const updated = await updateDocument(drive, { fileId, expectedVersion: created.version, markdown: 'v2 from us' });
    expect(BigInt(updated.version)).toBeGreaterThan(BigInt(created.version));
    expect(google.file(fileId)?.content).toBe('v2 from us');

    google.editRemotely(fileId, 'their edit');
    const remote = google.file(fileId)!;
    const patchesBefore = google.requestsTo('drive.update').length;
    const conflict = await failure(updateDocument(drive, { fileId, expectedVersion: updated.version, markdown: 'v3 would overwrite' }), DriveVersionConflictError, 'drive_version_conflict');
    expect(conflict.current).toEqual(await getLineage(drive, fileId));
    expect(conflict.current.version).toBe(String(remote.version));
    expect(google.file(fileId)).toEqual(remote);
    expect(google.requestsTo('drive.update').length).toBe(patchesBefore);
  });

  it('reads a Doc back as Markdown within the bound, and refuses past it', async () => {
    const fileId = await reserveFileId(drive);
    const markdown = `# Long\n\n${'word '.repeat(400)}`;
    await createDocument(drive, { fileId, name: 'Long doc', markdown });
    const read = await readDocumentText(drive, { fileId, maxBytes: 4096 });
    expect(read).toMatchObject({ text: markdown, mimeType: 'text/markdown', lineage: { fileId } });
    await failure(readDocumentText(drive, { fileId, maxBytes: 1000 }), DriveContentTooLargeError, 'drive_content_too_large');
  });

  it('a text file larger than the bound is refused from its size, before any download', async () => {
    const fileId = google.addFile({ name: 'notes.md', mimeType: 'text/markdown', content: 'x'.repeat(5000) });
    const downloads = google.requestsTo('drive.media').length;
    await failure(readDocumentText(drive, { fileId, maxBytes: 4096 }), DriveContentTooLargeError);
    expect(google.requestsTo('drive.media').length).toBe(downloads);
    expect((await readDocumentText(drive, { fileId, maxBytes: 5000 })).text).toHaveLength(5000);
  });

  it('bounded inputs are refused before any request', async () => {
    const fileId = await reserveFileId(drive);
    const requests = google.requests.length;
    await failure(createDocument(drive, { fileId, name: 'n'.repeat(DRIVE_LIMITS.nameChars + 1), markdown: '' }), GoogleInputError, 'invalid_input');
    await failure(createDocument(drive, { fileId, name: 'ok', markdown: 'x'.repeat(DRIVE_LIMITS.markdownBytes + 1) }), GoogleInputError, 'invalid_input');
    await failure(readDocumentText(drive, { fileId, maxBytes: DRIVE_LIMITS.readBytes + 1 }), GoogleInputError, 'invalid_input');
    await failure(updateDocument(drive, { fileId, expectedVersion: 'latest', markdown: '' }), GoogleInputError, 'invalid_input');
    expect(google.requests.length).toBe(requests);
  });

  it('a token without drive.file is refused by the API as provider_forbidden', async () => {
    const classroomOnly = access(await connect(['classroom']));
    await failure(reserveFileId(classroomOnly), GoogleApiError, 'provider_forbidden');
  });
});

describe('Classroom', () => {
  let teacher: GoogleAccess;
  beforeAll(async () => {
    teacher = access(await connect(['classroom']));
  });

  it('lists the teacher’s active courses, paged, with only id, name, section, room and link', async () => {
    const first = await listActiveCourses(teacher, { pageSize: 1 });
    expect(first.courses).toEqual([{ id: '7001', name: 'Biology 7B', section: 'Period 2', room: 'Lab 3', alternateLink: 'https://classroom.google.com/c/7001' }]);
    expect(first.nextPageToken).toBeTruthy();
    const second = await listActiveCourses(teacher, { pageSize: 1, pageToken: first.nextPageToken! });
    expect(second).toEqual({ courses: [{ id: '7002', name: 'Chemistry 8A', section: null, room: null, alternateLink: 'https://classroom.google.com/c/7002' }], nextPageToken: null });
    // The double sends group e-mail addresses and folders with each course; none come through.
    expect(JSON.stringify([first, second])).not.toMatch(/@|Email|teacherFolder|enrollmentCode/);
  });

  it('a roster is user ids and full names only, even when Google sends e-mails and photos', async () => {
    google.sendProfileExtrasRegardless = true;
    try {
      // What the double answers, read directly: the e-mails are there to be dropped.
      const raw = await fetch(`${google.url}/v1/courses/7001/students`, { headers: { authorization: `Bearer ${teacher.accessToken}` } });
      expect(await raw.text()).toContain('ada.park@school.example');

      const roster = await listRoster(teacher, '7001', { pageSize: 2 });
      expect(roster.students).toEqual([
        { userId: 's-101', fullName: 'Ada Park' },
        { userId: 's-102', fullName: 'Ben Ruiz' },
      ]);
      const rest = await listRoster(teacher, '7001', { pageSize: 2, pageToken: roster.nextPageToken! });
      expect(rest).toEqual({ students: [{ userId: 's-103', fullName: 'Cleo Ng' }], nextPageToken: null });
      expect(JSON.stringify([roster, rest])).not.toMatch(/@|photo|googleusercontent|email/i);
    } finally {
      google.sendProfileExtrasRegardless = false;
    }
  });

  it('a create cut after Classroom made the assignment is found by its marker, so the retry makes no second one', async () => {
    const marker = newCourseWorkMarker();
    const input = {
      courseId: '7002',
      title: 'Titration lab write-up',
      description: 'Write up Tuesday’s lab.',
      workType: 'ASSIGNMENT' as const,
      materials: [{ url: 'https://notes.example/n/titration' }],
      dueDate: '2026-11-20',
      marker,
    };
    expect(await findCourseWorkByMarker(teacher, '7002', marker)).toBeNull();
    google.fail('classroom.courseWork.create', { kind: 'ambiguous' });
    const cut = await failure(createCourseWork(teacher, input), GoogleApiError, 'provider_unreachable');
    expect(cut.maybeApplied).toBe(true);
    expect(google.courseWorkCount('7002')).toBe(1);

    // The caller's reconcile: find before creating again.
    const found = await findCourseWorkByMarker(teacher, '7002', marker);
    expect(found).toEqual({ courseWorkId: expect.any(String), title: 'Titration lab write-up', state: 'PUBLISHED', alternateLink: expect.stringContaining('https://classroom.google.com/') });
    expect(google.courseWorkCount('7002')).toBe(1);
    const stored = google.courseWorkOf('7002')[0]!;
    expect(stored['description']).toBe(`Write up Tuesday’s lab.\n\n[ref:${marker}]`);
    expect(stored).toMatchObject({ dueDate: { year: 2026, month: 11, day: 20 }, dueTime: { hours: 23, minutes: 59 }, materials: [{ link: { url: 'https://notes.example/n/titration' } }] });

    // Another intent is another assignment, found by its own marker only.
    const other = await createCourseWork(teacher, { ...input, title: 'Second lab', marker: newCourseWorkMarker(), state: 'DRAFT' });
    expect(other.state).toBe('DRAFT');
    expect(google.courseWorkCount('7002')).toBe(2);
    expect((await findCourseWorkByMarker(teacher, '7002', marker))?.courseWorkId).toBe(found!.courseWorkId);
  });

  it('submission attachments of every kind, with no grade anywhere in the output', async () => {
    google.addSubmissions('7001', '555', [
      {
        id: 'sub-1',
        userId: 's-101',
        state: 'TURNED_IN',
        assignedGrade: 91,
        draftGrade: 93,
        attachments: [
          { driveFile: { id: 'drive-file-1', title: 'Essay.docx', alternateLink: 'https://drive.google.com/open?id=drive-file-1', thumbnailUrl: 'https://x/t' } },
          { link: { url: 'https://example.org/source', title: 'Source', thumbnailUrl: 'https://x/t' } },
        ],
      },
      {
        id: 'sub-2',
        userId: 's-102',
        state: 'RETURNED',
        assignedGrade: 77,
        attachments: [
          { youTubeVideo: { id: 'yt1', title: 'Demo', alternateLink: 'https://www.youtube.com/watch?v=yt1' } },
          { form: { formUrl: 'https://docs.google.com/forms/d/f1', title: 'Quiz', responseUrl: 'https://docs.google.com/spreadsheets/d/r1' } },
        ],
      },
    ]);
    const raw = await fetch(`${google.url}/v1/courses/7001/courseWork/555/studentSubmissions`, { headers: { authorization: `Bearer ${teacher.accessToken}` } });
    expect(await raw.text()).toContain('assignedGrade');

    const page = await listSubmissionAttachments(teacher, '7001', '555', { pageSize: 10 });
    expect(page).toEqual({
      submissions: [
        {
          submissionId: 'sub-1',
          userId: 's-101',
          state: 'TURNED_IN',
          attachments: [
            { kind: 'driveFile', title: 'Essay.docx', driveFileId: 'drive-file-1', url: 'https://drive.google.com/open?id=drive-file-1' },
            { kind: 'link', title: 'Source', url: 'https://example.org/source' },
          ],
        },
        {
          submissionId: 'sub-2',
          userId: 's-102',
          state: 'RETURNED',
          attachments: [
            { kind: 'youTubeVideo', title: 'Demo', url: 'https://www.youtube.com/watch?v=yt1' },
            { kind: 'form', title: 'Quiz', url: 'https://docs.google.com/forms/d/f1' },
          ],
        },
      ],
      nextPageToken: null,
    });
    expect(JSON.stringify(page)).not.toMatch(/grade|points|91|93|77|responseUrl|thumbnail/i);
  });

  it('page sizes and ids are bounded before any request; scopes are enforced per endpoint', async () => {
    const requests = google.requests.length;
    await failure(listActiveCourses(teacher, { pageSize: 101 }), GoogleInputError, 'invalid_input');
    await failure(listRoster(teacher, '../7001'), GoogleInputError, 'invalid_input');
    await failure(createCourseWork(teacher, { courseId: '7001', title: 'x', workType: 'ASSIGNMENT', marker: 'short' }), GoogleInputError, 'invalid_input');
    await failure(createCourseWork(teacher, { courseId: '7001', title: 'x', workType: 'ASSIGNMENT', marker: newCourseWorkMarker(), materials: [{ url: 'javascript:alert(1)' }] }), GoogleInputError);
    expect(google.requests.length).toBe(requests);

    const driveOnly = access(await connect(['drive']));
    await failure(listRoster(driveOnly, '7001'), GoogleApiError, 'provider_forbidden');
    await failure(listRoster(teacher, '9999'), GoogleApiError, 'provider_not_found');
  });
});

// ---- no answer in time -----------------------------------------------------------------------------

describe('Google not answering in time', () => {
  const TIMEOUT_MS = 250;
  let both: OAuthTokens;
  let impatient: GoogleAccess;
  beforeAll(async () => {
    both = await connect(['drive', 'classroom']);
    impatient = access(both, google.settings({ timeoutMs: TIMEOUT_MS }));
  });

  /** The call with `route` left unanswered once: a provider_timeout within the deadline, flagged maybe-applied for a write. */
  async function timesOut(route: Parameters<ScriptedGoogle['fail']>[0], call: () => Promise<unknown>, write: boolean, kind: 'hang' | 'stall' = 'hang') {
    google.fail(route, { kind });
    const started = performance.now();
    const error = await failure(call(), GoogleApiError, 'provider_timeout');
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 1_000);
    expect(google.requestsTo(route).at(-1)!.status).toBe(kind === 'hang' ? 'hung' : 'stalled');
    expect(error.maybeApplied).toBe(write);
  }

  it('every Drive call (through gaxios 8) and every Classroom call (through gaxios 7) is provider_timeout', async () => {
    await timesOut('drive.generateIds', () => reserveFileId(impatient), false);
    const fileId = await reserveFileId(impatient);
    await timesOut('drive.create', () => createDocument(impatient, { fileId, name: 'Hung', markdown: '# Hung' }), true, 'stall');
    // Made before the stall: the retry meets it.
    const made = await createDocument(impatient, { fileId, name: 'Hung', markdown: '# Hung' });
    await timesOut('drive.get', () => getLineage(impatient, fileId), false);
    await timesOut('drive.update', () => updateDocument(impatient, { fileId, expectedVersion: made.version, markdown: 'x' }), true);
    await timesOut('drive.export', () => readDocumentText(impatient, { fileId, maxBytes: 1024 }), false);

    await timesOut('classroom.courses', () => listActiveCourses(impatient), false);
    await timesOut('classroom.students', () => listRoster(impatient, '7001'), false);
    await timesOut('classroom.courseWork.list', () => findCourseWorkByMarker(impatient, '7001', newCourseWorkMarker()), false);
    await timesOut('classroom.submissions', () => listSubmissionAttachments(impatient, '7001', '555'), false);
    const before = google.courseWorkCount('7001');
    const marker = newCourseWorkMarker();
    await timesOut('classroom.courseWork.create', () => createCourseWork(impatient, { courseId: '7001', title: 'Hung', workType: 'ASSIGNMENT', marker }), true, 'stall');
    expect(google.courseWorkCount('7001')).toBe(before + 1);
    expect(await findCourseWorkByMarker(impatient, '7001', marker)).toMatchObject({ title: 'Hung' });
  });

  it('the token exchange and refresh (google-auth-library, gaxios 8) are provider_timeout; refused and 5xx are not', async () => {
    const slow = createGoogleOAuthProvider(google.settings({ timeoutMs: TIMEOUT_MS }));
    google.fail('token', { kind: 'hang' });
    await failure(slow.refresh(both.refreshToken!), OAuthProviderError, 'provider_timeout');
    const { code, verifier } = await consentedCode(['drive']);
    google.fail('token', { kind: 'stall' });
    await failure(slow.exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT_URI }), OAuthProviderError, 'provider_timeout');

    google.fail('token', { kind: 'status', status: 502 });
    await failure(slow.refresh(both.refreshToken!), OAuthProviderError, 'provider_error');
    google.fail('classroom.courses', { kind: 'status', status: 500 });
    await failure(listActiveCourses(impatient), GoogleApiError, 'provider_error');
    google.fail('drive.get', { kind: 'status', status: 503 });
    await failure(getLineage(impatient, 'a-file-id-long-enough'), GoogleApiError, 'provider_error');

    // Nothing listening: refused, never a timeout, and nothing can have been applied.
    const nowhere = google.settings({ timeoutMs: TIMEOUT_MS });
    nowhere.endpoints = { ...nowhere.endpoints, driveRootUrl: 'http://127.0.0.1:9/', classroomRootUrl: 'http://127.0.0.1:9/' };
    const closed = access(both, nowhere);
    const refused = await failure(createCourseWork(closed, { courseId: '7001', title: 'x', workType: 'ASSIGNMENT', marker: newCourseWorkMarker() }), GoogleApiError, 'provider_unreachable');
    expect(refused.maybeApplied).toBe(false);
    await failure(reserveFileId(closed), GoogleApiError, 'provider_unreachable');
  });

  it('inspectFailure reads both gaxios majors by their properties: the timeout option, an AbortSignal deadline, an abort; a reset after the deadline', async () => {
    const bearer = <T extends { setCredentials(c: { access_token: string }): void }>(client: T) => {
      client.setCredentials({ access_token: both.accessToken });
      return client;
    };
    // The raw clients the modules build on, so their own errors (not ours) are what is read.
    const classroomClient = classroom({ version: 'v1', auth: bearer(new classroomAuth.OAuth2({})), rootUrl: `${google.url}/`, retry: false });
    const driveClient = driveApi({ version: 'v3', auth: bearer(new driveAuth.OAuth2({})), rootUrl: `${google.url}/`, retry: false });
    const raw = async (route: 'classroom.courses' | 'drive.get', options: { timeout?: number; signal?: AbortSignal }) => {
      google.fail(route, { kind: 'hang' });
      const call = route === 'drive.get' ? driveClient.files.get({ fileId: 'a-file-id-long-enough' }, options) : classroomClient.courses.list({}, options);
      return call.then(
        () => {
          throw new Error('answered');
        },
        (e: unknown) => e,
      );
    };
    const abortSoon = () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      return controller.signal;
    };
    for (const route of ['classroom.courses', 'drive.get'] as const) {
      const ways = {
        'the timeout option': await raw(route, { timeout: TIMEOUT_MS }),
        'an AbortSignal deadline': await raw(route, { signal: AbortSignal.timeout(TIMEOUT_MS) }),
        // Aborted while Google holds the request (not before it is sent: the hang is then played).
        'an abort': await raw(route, { signal: abortSoon() }),
      };
      for (const [way, error] of Object.entries(ways)) expect(inspectFailure(error).transport, `${route}, ${way}`).toBe('timeout');
      expect(google.requestsTo(route).slice(-3).map((r) => r.status)).toEqual(['hung', 'hung', 'hung']);
    }

    // What the transport may surface while a call hangs, once its deadline has fired: still a timeout.
    const deadline = AbortSignal.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    expect(inspectFailure(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', config: { signal: deadline } })).transport).toBe('timeout');
    expect(inspectFailure(Object.assign(new Error('read'), { cause: Object.assign(new Error('x'), { code: 'ETIMEDOUT' }) })).transport).toBe('timeout');
    expect(inspectFailure(new DOMException('The operation was aborted due to timeout', 'TimeoutError')).transport).toBe('timeout');
    // A reset before any deadline, and a refusal, are not; nor is a message that merely says "timeout".
    expect(inspectFailure(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', config: { signal: new AbortController().signal } })).transport).toBe('cut');
    expect(inspectFailure(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })).transport).toBe('refused');
    expect(inspectFailure(new Error('upstream said: timeout')).transport).toBe('cut');
  });
});
