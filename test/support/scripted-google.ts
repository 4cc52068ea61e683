// A scripted Google on loopback: one node:http server speaking the real wire protocol of the
// endpoints the connections use, so the official clients (google-auth-library, @googleapis/drive,
// @googleapis/classroom) run unchanged against it.
// - OAuth 2.0 (accounts.google.com / oauth2.googleapis.com): the consent redirect with PKCE S256
//   checked, single-use codes bound to client, redirect URI and challenge, refresh, revocation of the
//   whole grant, Google-shaped error bodies.
// - Drive v3: generateIds, multipart create/update (Markdown converted to a Google Doc), metadata
//   with `fields`, export, alt=media; `drive.file` scope enforced.
// - Classroom v1: courses, students (profile e-mail and photo only when their scopes were granted,
//   or always when a test says so), courseWork create/list, studentSubmissions with grades and
//   attachments as Google sends them; scopes enforced per endpoint. Classroom `fields` masks are
//   ignored on purpose (the worst case): the clients must pick what they keep.
// Every request is recorded (route, token scopes, status); failures are scripted per route (one per
// request: a status, a cut before or after the work, a hang before or after the work, a delay), and
// a route can be made slow for every request (concurrent creates that overlap at Google).
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GoogleClientSettings } from '../../domain/connections/provider.ts';

export const SCRIPTED_CLIENT_ID = 'scripted-client-1234.apps.googleusercontent.com';
export const SCRIPTED_CLIENT_SECRET = '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';
export const GOOGLE_DOC_MIME = 'application/vnd.google-apps.document';

const SCOPE = {
  driveFile: 'https://www.googleapis.com/auth/drive.file',
  drive: 'https://www.googleapis.com/auth/drive',
  courses: 'https://www.googleapis.com/auth/classroom.courses',
  coursesRead: 'https://www.googleapis.com/auth/classroom.courses.readonly',
  rosters: 'https://www.googleapis.com/auth/classroom.rosters',
  rostersRead: 'https://www.googleapis.com/auth/classroom.rosters.readonly',
  courseworkStudents: 'https://www.googleapis.com/auth/classroom.coursework.students',
  courseworkStudentsRead: 'https://www.googleapis.com/auth/classroom.coursework.students.readonly',
  emails: 'https://www.googleapis.com/auth/classroom.profile.emails',
  photos: 'https://www.googleapis.com/auth/classroom.profile.photos',
};

/** The routes failures can be scripted on. */
export type GoogleRoute =
  | 'authorize'
  | 'token'
  | 'revoke'
  | 'drive.generateIds'
  | 'drive.create'
  | 'drive.get'
  | 'drive.update'
  | 'drive.media'
  | 'drive.export'
  | 'classroom.courses'
  | 'classroom.students'
  | 'classroom.courseWork.create'
  | 'classroom.courseWork.list'
  | 'classroom.submissions';

export type ScriptedFailure =
  /** Answer this status with a Google-shaped error body, without doing the work. */
  | { kind: 'status'; status: number }
  /** Cut the connection before doing anything. */
  | { kind: 'drop' }
  /** Never answer (nothing done): the client's deadline ends the call. */
  | { kind: 'hang' }
  /** Do the work (a file or an assignment exists), then never answer: a timeout after Google applied it. */
  | { kind: 'stall' }
  /** Do the work (a code is consumed, a file or an assignment exists), then cut the connection unanswered. */
  | { kind: 'ambiguous' }
  /** Wait before doing the work, then answer normally (a slow Google: widens any race around the call). */
  | { kind: 'delay'; ms: number };

/** What the person does on the consent screen. */
export type ConsentScript = { kind: 'consent'; grant?: string[] } | { kind: 'deny' } | { kind: 'error' };

export type RecordedGoogleRequest = {
  method: string;
  route: GoogleRoute | 'unknown';
  path: string;
  /** The scopes of the bearer token, when one was sent and known. */
  scopes: string[] | null;
  status: number | 'dropped' | 'hung' | 'stalled' | 'ambiguous';
};

type Grant = { id: string; scopes: string[]; refreshToken: string; revoked: boolean };
type AccessToken = { grantId: string; scopes: string[]; expiresAt: number };
type AuthCode = { grantId: string; redirectUri: string; challenge: string; used: boolean };

type DriveFile = {
  id: string;
  name: string;
  mimeType: string;
  content: string;
  version: number;
  createdTime: string;
  modifiedTime: string;
  headRevisionId: string;
};

export type ScriptedCourse = {
  id: string;
  name: string;
  section?: string;
  room?: string;
  courseState: 'ACTIVE' | 'ARCHIVED' | 'PROVISIONED' | 'DECLINED';
  /** Whether the authorized user teaches it (teacherId=me). */
  taughtByMe: boolean;
};
export type ScriptedStudent = { userId: string; givenName: string; familyName: string; emailAddress: string; photoUrl: string };
type CourseWork = Record<string, unknown> & { id: string; courseId: string; description?: string; state: string; updateTime: string };
export type ScriptedSubmission = {
  id: string;
  userId: string;
  state: 'NEW' | 'CREATED' | 'TURNED_IN' | 'RETURNED' | 'RECLAIMED_BY_STUDENT';
  assignedGrade?: number;
  draftGrade?: number;
  attachments: Record<string, unknown>[];
};

export class ScriptedGoogle {
  readonly requests: RecordedGoogleRequest[] = [];
  /** Tokens sent to /revoke, with where they came (the body is what we expect). */
  readonly revocations: { tokenIn: 'body' | 'query'; known: boolean }[] = [];
  /** When true, students carry `emailAddress` and `photoUrl` whatever the token's scopes. */
  sendProfileExtrasRegardless = false;
  /** expires_in of issued access tokens. */
  accessTokenLifetimeSeconds = 3599;
  url = '';

  readonly clientId: string;
  readonly clientSecret: string;
  private readonly redirectUris = new Set<string>();
  private readonly consentQueue: ConsentScript[] = [];
  private readonly failures = new Map<GoogleRoute, ScriptedFailure[]>();
  private readonly slowRoutes = new Map<GoogleRoute, number>();
  private readonly grants = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, AccessToken>();
  private readonly codes = new Map<string, AuthCode>();
  private readonly issuedSecrets: string[] = [];
  private readonly generatedIds = new Set<string>();
  private readonly files = new Map<string, DriveFile>();
  private readonly courses = new Map<string, ScriptedCourse>();
  private readonly students = new Map<string, ScriptedStudent[]>();
  private readonly courseWork = new Map<string, CourseWork[]>();
  private readonly submissions = new Map<string, ScriptedSubmission[]>();
  private server: Server | null = null;
  private clock = Date.parse('2026-11-02T09:00:00Z');

  constructor(options: { clientId?: string; clientSecret?: string; redirectUris?: string[] } = {}) {
    this.clientId = options.clientId ?? SCRIPTED_CLIENT_ID;
    this.clientSecret = options.clientSecret ?? SCRIPTED_CLIENT_SECRET;
    for (const uri of options.redirectUris ?? []) this.redirectUris.add(uri);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** Client settings pointing every endpoint at this server. */
  settings(overrides: Partial<GoogleClientSettings> = {}): GoogleClientSettings {
    return {
      clientId: this.clientId,
      clientSecret: this.clientSecret,
      endpoints: {
        authorizeUrl: `${this.url}/o/oauth2/v2/auth`,
        tokenUrl: `${this.url}/token`,
        revokeUrl: `${this.url}/revoke`,
        driveRootUrl: `${this.url}/`,
        classroomRootUrl: `${this.url}/`,
      },
      timeoutMs: 5_000,
      ...overrides,
    };
  }

  registerRedirectUri(uri: string): this {
    this.redirectUris.add(uri);
    return this;
  }

  /** Queue what the next visits to the consent screen do (default: consent to every scope asked). */
  scriptConsent(...scripts: ConsentScript[]): this {
    this.consentQueue.push(...scripts);
    return this;
  }

  /** Queue failures for a route, played one per request before normal answers resume. */
  fail(route: GoogleRoute, ...failures: ScriptedFailure[]): this {
    this.failures.set(route, [...(this.failures.get(route) ?? []), ...failures]);
    return this;
  }

  /** Every request to the route waits `ms` before doing the work (null: no longer), until changed: a slow Google for many concurrent calls. */
  slow(route: GoogleRoute, ms: number | null): this {
    if (ms === null) this.slowRoutes.delete(route);
    else this.slowRoutes.set(route, ms);
    return this;
  }

  /** The browser's part: follows the authorization URL once and reads where Google sends the person. */
  async visit(authorizationUrl: string): Promise<{ status: number; redirect: URL | null }> {
    const res = await fetch(authorizationUrl, { redirect: 'manual' });
    await res.arrayBuffer();
    const location = res.headers.get('location');
    return { status: res.status, redirect: location ? new URL(location) : null };
  }

  /** Every access token stops working now (refresh tokens still do). */
  expireAccessTokens(): void {
    for (const token of this.accessTokens.values()) token.expiresAt = 0;
  }

  /** Every code, token and secret this server issued or holds: none may appear in an error or log. */
  secrets(): string[] {
    return [this.clientSecret, ...this.issuedSecrets];
  }

  requestsTo(route: GoogleRoute): RecordedGoogleRequest[] {
    return this.requests.filter((r) => r.route === route);
  }

  // --- Drive state ---

  fileCount(): number {
    return this.files.size;
  }

  file(fileId: string): Readonly<DriveFile> | undefined {
    const file = this.files.get(fileId);
    return file ? { ...file } : undefined;
  }

  /** Someone else edits the file in Drive: new content, a higher version. */
  editRemotely(fileId: string, content: string): void {
    const file = this.files.get(fileId);
    if (!file) throw new Error(`no file ${fileId}`);
    this.touch(file, content);
  }

  /** A plain (non-Docs) file the app may read, e.g. one the person opened with it. */
  addFile(input: { name: string; mimeType: string; content: string }): string {
    const id = newId(24);
    const now = this.tick();
    this.files.set(id, { id, ...input, version: 1, createdTime: now, modifiedTime: now, headRevisionId: newId(16) });
    return id;
  }

  // --- Classroom state ---

  addCourse(course: ScriptedCourse): this {
    this.courses.set(course.id, course);
    return this;
  }

  addStudents(courseId: string, students: ScriptedStudent[]): this {
    this.students.set(courseId, [...(this.students.get(courseId) ?? []), ...students]);
    return this;
  }

  addSubmissions(courseId: string, courseWorkId: string, submissions: ScriptedSubmission[]): this {
    const key = `${courseId}/${courseWorkId}`;
    this.submissions.set(key, [...(this.submissions.get(key) ?? []), ...submissions]);
    return this;
  }

  courseWorkCount(courseId: string): number {
    return this.courseWork.get(courseId)?.length ?? 0;
  }

  courseWorkOf(courseId: string): readonly CourseWork[] {
    return this.courseWork.get(courseId) ?? [];
  }

  // --- the server ---

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const route = routeOf(method, url.pathname, url.searchParams);
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const record: RecordedGoogleRequest = {
      method,
      route: route?.name ?? 'unknown',
      path: url.pathname,
      scopes: bearer ? (this.accessTokens.get(bearer)?.scopes ?? null) : null,
      status: 0,
    };
    this.requests.push(record);
    if (!route) {
      record.status = 404;
      return send(res, 404, googleApiError(404, 'Not Found', 'notFound', 'NOT_FOUND'));
    }
    const failure = this.failures.get(route.name)?.shift();
    const slow = this.slowRoutes.get(route.name);
    if (slow !== undefined) await new Promise((resolve) => setTimeout(resolve, slow));
    if (failure?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, failure.ms));
    if (failure?.kind === 'hang') {
      record.status = 'hung';
      return;
    }
    if (failure?.kind === 'drop') {
      record.status = 'dropped';
      res.socket?.destroy();
      return;
    }
    if (failure?.kind === 'status') {
      record.status = failure.status;
      const body = route.name === 'token' || route.name === 'revoke' ? { error: 'internal_failure', error_description: 'Backend Error' } : googleApiError(failure.status, 'Backend Error', 'backendError', 'UNAVAILABLE');
      return send(res, failure.status, body);
    }
    let reply: Reply;
    try {
      reply = this.answer(route, { method, url, raw, headers: req.headers, bearer });
    } catch (error) {
      reply = { status: 500, body: googleApiError(500, error instanceof Error ? error.message : 'error', 'backendError', 'INTERNAL') };
    }
    if (failure?.kind === 'ambiguous') {
      record.status = 'ambiguous';
      res.socket?.destroy();
      return;
    }
    if (failure?.kind === 'stall') {
      record.status = 'stalled';
      return;
    }
    record.status = reply.status;
    if (reply.location) {
      res.writeHead(reply.status, { location: reply.location });
      res.end();
      return;
    }
    send(res, reply.status, reply.body, reply.contentType);
  }

  private answer(route: Route, req: Request): Reply {
    switch (route.name) {
      case 'authorize':
        return this.authorize(req.url.searchParams);
      case 'token':
        return this.token(new URLSearchParams(req.raw), req.headers.authorization);
      case 'revoke':
        return this.revoke(req);
      default:
        break;
    }
    const token = req.bearer ? this.accessTokens.get(req.bearer) : undefined;
    const grant = token ? this.grants.get(token.grantId) : undefined;
    if (!token || !grant || grant.revoked || token.expiresAt <= Date.now()) {
      return { status: 401, body: googleApiError(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token.', 'authError', 'UNAUTHENTICATED') };
    }
    const needs = scopesNeeded[route.name];
    if (!needs.some((scope) => token.scopes.includes(scope))) {
      return { status: 403, body: googleApiError(403, 'Request had insufficient authentication scopes.', 'insufficientPermissions', 'PERMISSION_DENIED') };
    }
    if (route.name.startsWith('drive.')) return this.drive(route, req);
    return this.classroom(route, req, token.scopes);
  }

  // --- OAuth 2.0 ---

  private authorize(q: URLSearchParams): Reply {
    const redirectUri = q.get('redirect_uri') ?? '';
    // Google shows its own error page (no redirect) for an unknown client or redirect URI.
    if (q.get('client_id') !== this.clientId) return { status: 401, body: { error: 'invalid_client' } };
    if (!this.redirectUris.has(redirectUri)) return { status: 400, body: { error: 'redirect_uri_mismatch' } };
    const state = q.get('state');
    const scopes = (q.get('scope') ?? '').split(' ').filter(Boolean);
    const problems = [
      q.get('response_type') !== 'code' && 'response_type',
      scopes.length === 0 && 'scope',
      !state && 'state',
      !/^[A-Za-z0-9_-]{43,128}$/.test(q.get('code_challenge') ?? '') && 'code_challenge',
      q.get('code_challenge_method') !== 'S256' && 'code_challenge_method',
      q.get('access_type') !== 'offline' && 'access_type',
    ].filter(Boolean);
    if (problems.length > 0) return { status: 400, body: { error: 'invalid_request', error_description: `bad ${problems.join(', ')}` } };
    const back = new URL(redirectUri);
    const script = this.consentQueue.shift() ?? { kind: 'consent' };
    if (script.kind === 'deny' || script.kind === 'error') {
      back.searchParams.set('error', script.kind === 'deny' ? 'access_denied' : 'server_error');
      back.searchParams.set('state', state!);
      return { status: 302, location: back.toString() };
    }
    const granted = script.grant ? scopes.filter((s) => script.grant!.includes(s)) : scopes;
    const grant: Grant = { id: newId(12), scopes: granted, refreshToken: `1//${newId(32)}`, revoked: false };
    this.grants.set(grant.id, grant);
    const code = `4/${newId(32)}`;
    this.codes.set(code, { grantId: grant.id, redirectUri, challenge: q.get('code_challenge')!, used: false });
    this.issuedSecrets.push(code, grant.refreshToken);
    back.searchParams.set('code', code);
    back.searchParams.set('scope', granted.join(' '));
    back.searchParams.set('state', state!);
    return { status: 302, location: back.toString() };
  }

  private token(form: URLSearchParams, authorization: string | undefined): Reply {
    let clientId = form.get('client_id');
    let clientSecret = form.get('client_secret');
    const basic = /^Basic (.+)$/.exec(authorization ?? '')?.[1];
    if (basic) {
      const decoded = Buffer.from(basic, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      clientId = decodeURIComponent(decoded.slice(0, colon));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1));
    }
    if (clientId !== this.clientId || clientSecret !== this.clientSecret) {
      return { status: 401, body: { error: 'invalid_client', error_description: 'Unauthorized' } };
    }
    const invalidGrant = (description: string): Reply => ({ status: 400, body: { error: 'invalid_grant', error_description: description } });
    switch (form.get('grant_type')) {
      case 'authorization_code': {
        const code = this.codes.get(form.get('code') ?? '');
        if (!code) return invalidGrant('Malformed auth code.');
        if (code.used) return invalidGrant('Bad Request');
        code.used = true;
        if (form.get('redirect_uri') !== code.redirectUri) return { status: 400, body: { error: 'redirect_uri_mismatch', error_description: 'Bad Request' } };
        const verifier = form.get('code_verifier');
        if (!verifier) return invalidGrant('Missing code verifier.');
        if (createHash('sha256').update(verifier).digest('base64url') !== code.challenge) return invalidGrant('Invalid code verifier.');
        const grant = this.grants.get(code.grantId)!;
        return { status: 200, body: { ...this.issueAccessToken(grant), refresh_token: grant.refreshToken } };
      }
      case 'refresh_token': {
        const grant = [...this.grants.values()].find((g) => g.refreshToken === form.get('refresh_token'));
        if (!grant || grant.revoked) return invalidGrant('Token has been expired or revoked.');
        return { status: 200, body: this.issueAccessToken(grant) };
      }
      default:
        return { status: 400, body: { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' } };
    }
  }

  private issueAccessToken(grant: Grant): Record<string, unknown> {
    const accessToken = `ya29.${newId(40)}`;
    this.accessTokens.set(accessToken, { grantId: grant.id, scopes: grant.scopes, expiresAt: Date.now() + this.accessTokenLifetimeSeconds * 1000 });
    this.issuedSecrets.push(accessToken);
    return { access_token: accessToken, expires_in: this.accessTokenLifetimeSeconds, scope: grant.scopes.join(' '), token_type: 'Bearer' };
  }

  private revoke(req: Request): Reply {
    const fromBody = new URLSearchParams(req.raw).get('token');
    const fromQuery = req.url.searchParams.get('token');
    const token = fromBody ?? fromQuery ?? '';
    const grant =
      [...this.grants.values()].find((g) => g.refreshToken === token) ??
      this.grants.get(this.accessTokens.get(token)?.grantId ?? '');
    const known = Boolean(grant && !grant.revoked);
    this.revocations.push({ tokenIn: fromBody ? 'body' : 'query', known });
    if (!grant || grant.revoked) return { status: 400, body: { error: 'invalid_token', error_description: 'Token expired or revoked' } };
    // Revoking any token of a grant ends the whole grant: its refresh and access tokens.
    grant.revoked = true;
    return { status: 200, body: {} };
  }

  // --- Drive v3 ---

  private drive(route: Route, req: Request): Reply {
    const q = req.url.searchParams;
    const notFound = (id: string): Reply => ({ status: 404, body: googleApiError(404, `File not found: ${id}.`, 'notFound', 'NOT_FOUND') });
    switch (route.name) {
      case 'drive.generateIds': {
        const count = Math.min(Number(q.get('count') ?? 10), 1000);
        const ids = Array.from({ length: count }, () => newId(24));
        for (const id of ids) this.generatedIds.add(id);
        return { status: 200, body: { kind: 'drive#generatedIds', space: q.get('space') ?? 'drive', ids } };
      }
      case 'drive.create': {
        const parts = multipart(req);
        if (!parts) return { status: 400, body: googleApiError(400, 'Bad multipart body', 'badContent', 'INVALID_ARGUMENT') };
        const metadata = parts.metadata;
        const id = typeof metadata['id'] === 'string' ? metadata['id'] : newId(24);
        if (this.files.has(id)) return { status: 409, body: googleApiError(409, 'A file already exists with the provided ID.', 'fileIdInUse', 'ALREADY_EXISTS') };
        if (typeof metadata['id'] === 'string' && !this.generatedIds.has(id)) {
          return { status: 400, body: googleApiError(400, 'The provided file ID is not usable.', 'fileIdNotUsable', 'INVALID_ARGUMENT') };
        }
        const target = typeof metadata['mimeType'] === 'string' ? metadata['mimeType'] : parts.mediaType;
        if (target === GOOGLE_DOC_MIME && !['text/markdown', 'text/plain', 'text/html'].includes(parts.mediaType)) {
          return { status: 400, body: googleApiError(400, 'Conversion not supported.', 'badContent', 'INVALID_ARGUMENT') };
        }
        const now = this.tick();
        const file: DriveFile = { id, name: String(metadata['name'] ?? 'Untitled'), mimeType: target, content: parts.media, version: 1, createdTime: now, modifiedTime: now, headRevisionId: newId(16) };
        this.files.set(id, file);
        return { status: 200, body: fileResource(file, q.get('fields')) };
      }
      case 'drive.get':
      case 'drive.media': {
        const file = this.files.get(route.params[0]!);
        if (!file) return notFound(route.params[0]!);
        if (route.name === 'drive.get') return { status: 200, body: fileResource(file, q.get('fields')) };
        if (file.mimeType.startsWith('application/vnd.google-apps.')) {
          return { status: 403, body: googleApiError(403, 'Only files with binary content can be downloaded. Use Export with Docs Editors files.', 'fileNotDownloadable', 'PERMISSION_DENIED') };
        }
        return { status: 200, body: file.content, contentType: file.mimeType };
      }
      case 'drive.export': {
        const file = this.files.get(route.params[0]!);
        if (!file) return notFound(route.params[0]!);
        const mimeType = q.get('mimeType') ?? '';
        if (file.mimeType !== GOOGLE_DOC_MIME || !['text/markdown', 'text/plain'].includes(mimeType)) {
          return { status: 403, body: googleApiError(403, 'Export only supports Docs Editors files.', 'fileNotExportable', 'PERMISSION_DENIED') };
        }
        return { status: 200, body: file.content, contentType: mimeType };
      }
      case 'drive.update': {
        const file = this.files.get(route.params[0]!);
        if (!file) return notFound(route.params[0]!);
        const parts = multipart(req);
        if (!parts) return { status: 400, body: googleApiError(400, 'Bad multipart body', 'badContent', 'INVALID_ARGUMENT') };
        if (typeof parts.metadata['name'] === 'string') file.name = parts.metadata['name'];
        this.touch(file, parts.media);
        return { status: 200, body: fileResource(file, q.get('fields')) };
      }
      default:
        return { status: 404, body: googleApiError(404, 'Not Found', 'notFound', 'NOT_FOUND') };
    }
  }

  private touch(file: DriveFile, content: string): void {
    file.content = content;
    // Drive's version grows by some amount on every change, not necessarily by one.
    file.version += 1 + Math.floor(Math.random() * 3);
    file.modifiedTime = this.tick();
    file.headRevisionId = newId(16);
  }

  // --- Classroom v1 ---

  private classroom(route: Route, req: Request, scopes: string[]): Reply {
    const q = req.url.searchParams;
    const notFound: Reply = { status: 404, body: googleApiError(404, 'Requested entity was not found.', 'notFound', 'NOT_FOUND') };
    const course = route.params[0] === undefined ? undefined : this.courses.get(route.params[0]);
    if (route.name !== 'classroom.courses' && !course) return notFound;
    switch (route.name) {
      case 'classroom.courses': {
        const states = q.getAll('courseStates');
        const mine = [...this.courses.values()].filter((c) => (q.get('teacherId') !== 'me' || c.taughtByMe) && (states.length === 0 || states.includes(c.courseState)));
        return { status: 200, body: page('courses', mine.map(courseResource), q) };
      }
      case 'classroom.students': {
        const withEmail = this.sendProfileExtrasRegardless || scopes.includes(SCOPE.emails);
        const withPhoto = this.sendProfileExtrasRegardless || scopes.includes(SCOPE.photos);
        const students = (this.students.get(course!.id) ?? []).map((s) => ({
          courseId: course!.id,
          userId: s.userId,
          profile: {
            id: s.userId,
            name: { givenName: s.givenName, familyName: s.familyName, fullName: `${s.givenName} ${s.familyName}` },
            ...(withEmail ? { emailAddress: s.emailAddress } : {}),
            ...(withPhoto ? { photoUrl: s.photoUrl } : {}),
          },
          studentWorkFolder: { id: newId(20), title: `${s.givenName} work`, alternateLink: `https://drive.google.com/drive/folders/${s.userId}` },
        }));
        return { status: 200, body: page('students', students, q) };
      }
      case 'classroom.courseWork.create': {
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(req.raw) as Record<string, unknown>;
        } catch {
          return { status: 400, body: googleApiError(400, 'Invalid JSON payload received.', 'badRequest', 'INVALID_ARGUMENT') };
        }
        if (typeof body['title'] !== 'string' || body['title'] === '' || body['workType'] !== 'ASSIGNMENT') {
          return { status: 400, body: googleApiError(400, 'Invalid value', 'badRequest', 'INVALID_ARGUMENT') };
        }
        if (body['dueDate'] !== undefined && body['dueTime'] === undefined) {
          return { status: 400, body: googleApiError(400, 'Due time must be set when due date is.', 'badRequest', 'INVALID_ARGUMENT') };
        }
        const now = this.tick();
        const id = String(100_000 + this.courseWorkCount(course!.id) + Math.floor(Math.random() * 1000) * 1000);
        const work: CourseWork = {
          ...body,
          courseId: course!.id,
          id,
          state: typeof body['state'] === 'string' ? body['state'] : 'DRAFT',
          alternateLink: `https://classroom.google.com/c/${course!.id}/a/${id}/details`,
          creationTime: now,
          updateTime: now,
          assigneeMode: 'ALL_STUDENTS',
          submissionModificationMode: 'MODIFIABLE_UNTIL_TURNED_IN',
          creatorUserId: 'teacher-1',
        };
        this.courseWork.set(course!.id, [...(this.courseWork.get(course!.id) ?? []), work]);
        return { status: 200, body: work };
      }
      case 'classroom.courseWork.list': {
        const states = q.getAll('courseWorkStates');
        const wanted = states.length > 0 ? states : ['PUBLISHED'];
        const all = (this.courseWork.get(course!.id) ?? []).filter((w) => wanted.includes(w.state));
        // Google's default order is `updateTime desc`.
        const ordered = q.get('orderBy') === 'updateTime asc' ? all : [...all].reverse();
        return { status: 200, body: page('courseWork', ordered, q) };
      }
      case 'classroom.submissions': {
        const key = `${course!.id}/${route.params[1]}`;
        if (!this.courseWork.get(course!.id)?.some((w) => w.id === route.params[1]) && !this.submissions.has(key)) return notFound;
        const list = (this.submissions.get(key) ?? []).map((s) => ({
          courseId: course!.id,
          courseWorkId: route.params[1],
          id: s.id,
          userId: s.userId,
          state: s.state,
          late: false,
          creationTime: this.tick(),
          updateTime: this.tick(),
          ...(s.assignedGrade === undefined ? {} : { assignedGrade: s.assignedGrade }),
          ...(s.draftGrade === undefined ? {} : { draftGrade: s.draftGrade }),
          courseWorkType: 'ASSIGNMENT',
          alternateLink: `https://classroom.google.com/c/${course!.id}/a/${route.params[1]}/submissions/student/${s.userId}`,
          assignmentSubmission: { attachments: s.attachments },
          submissionHistory: [{ gradeHistory: { pointsEarned: s.assignedGrade ?? 0, gradeChangeType: 'ASSIGNED_GRADE_POINTS_EARNED_CHANGE', actorUserId: 'teacher-1' } }],
        }));
        return { status: 200, body: page('studentSubmissions', list, q) };
      }
      default:
        return notFound;
    }
  }

  /** A later instant on each call, so versions and update times order. */
  private tick(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }
}

type Request = { method: string; url: URL; raw: string; headers: IncomingMessage['headers']; bearer: string | undefined };
type Reply = { status: number; body?: unknown; contentType?: string; location?: string };
type Route = { name: GoogleRoute; params: string[] };

const scopesNeeded: Record<Exclude<GoogleRoute, 'authorize' | 'token' | 'revoke'>, string[]> = {
  'drive.generateIds': [SCOPE.driveFile, SCOPE.drive],
  'drive.create': [SCOPE.driveFile, SCOPE.drive],
  'drive.get': [SCOPE.driveFile, SCOPE.drive],
  'drive.update': [SCOPE.driveFile, SCOPE.drive],
  'drive.media': [SCOPE.driveFile, SCOPE.drive],
  'drive.export': [SCOPE.driveFile, SCOPE.drive],
  'classroom.courses': [SCOPE.courses, SCOPE.coursesRead],
  'classroom.students': [SCOPE.rosters, SCOPE.rostersRead],
  'classroom.courseWork.create': [SCOPE.courseworkStudents],
  'classroom.courseWork.list': [SCOPE.courseworkStudents, SCOPE.courseworkStudentsRead],
  'classroom.submissions': [SCOPE.courseworkStudents, SCOPE.courseworkStudentsRead],
};

function routeOf(method: string, path: string, q: URLSearchParams): Route | null {
  const table: [string, RegExp, GoogleRoute | ((q: URLSearchParams) => GoogleRoute | null)][] = [
    ['GET', /^\/o\/oauth2\/v2\/auth$/, 'authorize'],
    ['POST', /^\/token$/, 'token'],
    ['POST', /^\/revoke$/, 'revoke'],
    // The official client sends generateIds as a GET (Drive v3 discovery document).
    ['GET', /^\/drive\/v3\/files\/generateIds$/, 'drive.generateIds'],
    ['POST', /^\/upload\/drive\/v3\/files$/, (q) => (q.get('uploadType') === 'multipart' ? 'drive.create' : null)],
    ['PATCH', /^\/upload\/drive\/v3\/files\/([^/]+)$/, (q) => (q.get('uploadType') === 'multipart' ? 'drive.update' : null)],
    ['GET', /^\/drive\/v3\/files\/([^/]+)\/export$/, 'drive.export'],
    ['GET', /^\/drive\/v3\/files\/([^/]+)$/, (q) => (q.get('alt') === 'media' ? 'drive.media' : 'drive.get')],
    ['GET', /^\/v1\/courses$/, 'classroom.courses'],
    ['GET', /^\/v1\/courses\/([^/]+)\/students$/, 'classroom.students'],
    ['POST', /^\/v1\/courses\/([^/]+)\/courseWork$/, 'classroom.courseWork.create'],
    ['GET', /^\/v1\/courses\/([^/]+)\/courseWork$/, 'classroom.courseWork.list'],
    ['GET', /^\/v1\/courses\/([^/]+)\/courseWork\/([^/]+)\/studentSubmissions$/, 'classroom.submissions'],
  ];
  for (const [m, pattern, name] of table) {
    const match = pattern.exec(path);
    if (m !== method || !match) continue;
    const resolved = typeof name === 'function' ? name(q) : name;
    if (resolved) return { name: resolved, params: match.slice(1).map(decodeURIComponent) };
  }
  return null;
}

/** Google's JSON error envelope for its REST APIs. */
function googleApiError(code: number, message: string, reason: string, status: string) {
  return { error: { code, message, errors: [{ message, domain: 'global', reason }], status } };
}

function fileResource(file: DriveFile, fields: string | null): Record<string, unknown> {
  const isDoc = file.mimeType.startsWith('application/vnd.google-apps.');
  const full: Record<string, unknown> = {
    kind: 'drive#file',
    id: file.id,
    name: file.name,
    mimeType: file.mimeType,
    version: String(file.version),
    createdTime: file.createdTime,
    modifiedTime: file.modifiedTime,
    // Docs Editors files have neither a head revision of binary content nor a size.
    ...(isDoc ? {} : { headRevisionId: file.headRevisionId, size: String(Buffer.byteLength(file.content)) }),
    owners: [{ kind: 'drive#user', displayName: 'Teacher One', emailAddress: 'teacher.one@school.example', me: true }],
  };
  const wanted = fields ? fields.split(',').map((f) => f.trim()) : ['kind', 'id', 'name', 'mimeType'];
  return Object.fromEntries(Object.entries(full).filter(([key]) => wanted.includes(key)));
}

function courseResource(c: ScriptedCourse): Record<string, unknown> {
  return {
    id: c.id,
    name: c.name,
    ...(c.section === undefined ? {} : { section: c.section }),
    ...(c.room === undefined ? {} : { room: c.room }),
    ownerId: 'teacher-1',
    creationTime: '2026-08-20T08:00:00Z',
    updateTime: '2026-08-20T08:00:00Z',
    enrollmentCode: 'abc123x',
    courseState: c.courseState,
    alternateLink: `https://classroom.google.com/c/${c.id}`,
    teacherGroupEmail: `teachers-${c.id}@school.example`,
    courseGroupEmail: `course-${c.id}@school.example`,
    teacherFolder: { id: `folder-${c.id}`, title: `${c.name} teachers`, alternateLink: `https://drive.google.com/drive/folders/folder-${c.id}` },
    guardiansEnabled: false,
    calendarId: `classroom-${c.id}@group.calendar.google.com`,
  };
}

/** Classroom paging: pageSize (0 or absent means the server's choice), an opaque pageToken. */
function page<T>(key: string, items: T[], q: URLSearchParams): Record<string, unknown> {
  const size = Number(q.get('pageSize') ?? 0) || 30;
  const start = q.get('pageToken') ? Number(Buffer.from(q.get('pageToken')!, 'base64url').toString('utf8')) : 0;
  const slice = items.slice(start, start + size);
  const next = start + size < items.length ? Buffer.from(String(start + size)).toString('base64url') : undefined;
  // Google omits an empty list entirely.
  return { ...(slice.length > 0 ? { [key]: slice } : {}), ...(next ? { nextPageToken: next } : {}) };
}

/** The metadata and media parts of a multipart/related upload. */
function multipart(req: Request): { metadata: Record<string, unknown>; media: string; mediaType: string } | null {
  const boundary = /boundary=("?)([^";]+)\1/.exec(String(req.headers['content-type'] ?? ''))?.[2];
  if (!boundary || !String(req.headers['content-type']).startsWith('multipart/related')) return null;
  const parts = req.raw
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((part) => {
      const body = part.replace(/^\r\n/, '');
      const split = body.indexOf('\r\n\r\n');
      const headers = body.slice(0, split).toLowerCase();
      return { type: /content-type:\s*([^\r\n;]+)/.exec(headers)?.[1]?.trim() ?? '', content: body.slice(split + 4).replace(/\r\n$/, '') };
    });
  if (parts.length !== 2 || parts[0]!.type !== 'application/json') return null;
  try {
    return { metadata: JSON.parse(parts[0]!.content) as Record<string, unknown>, media: parts[1]!.content, mediaType: parts[1]!.type };
  } catch {
    return null;
  }
}

function send(res: ServerResponse, status: number, body: unknown, contentType?: string): void {
  if (res.destroyed) return;
  if (typeof body === 'string') {
    res.writeHead(status, { 'content-type': contentType ?? 'text/plain' });
    res.end(body);
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify(body ?? {}));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

function newId(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}
