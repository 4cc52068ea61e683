// The reviewer console (/console): server-rendered pages over the automation gateway's domain, for
// the people who approve action proposals. Sign in once with a personal access token (exchanged for
// a session cookie, domain/console/sessions.ts); every page is then admitted like an automation
// request (domain/principals/admission.ts) and authorized exactly like the API (another workspace's
// proposal is not found). Decisions and undo go through the same code as the API's
// (api/routes/shared/proposal-decisions.ts). Every page also answers its data as JSON, from the
// domain's zod schemas, to `Accept: application/json`. docs/console.md.
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { Client } from '@temporalio/client';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import type { AllowanceLeases } from '../../../domain/allowance-lease.ts';
import { inboxQuerySchema, inboxSchema, readInbox } from '../../../domain/console/inbox.ts';
import { proposalPageSchema, readProposalPage } from '../../../domain/console/proposal-page.ts';
import type { ProposalPage } from '../../../domain/console/proposal-page.ts';
import { decisionReasonMaxChars } from '../../../domain/automation/review-rules.ts';
import { openSession, signOut } from '../../../domain/console/sessions.ts';
import { AppError } from '../../../domain/errors.ts';
import { admitAccessToken } from '../../../domain/principals/admission.ts';
import { assertNoNulInRecord } from '../../edge.ts';
import { logFailure, sendProblem, toAppError } from '../../problems.ts';
import { decideProposal, undoProposal } from '../shared/proposal-decisions.ts';
import { assetPath, loadAssets } from './assets.ts';
import { errorBody, etagOf, signInBody } from './fragments.ts';
import { page } from './html.ts';
import type { Html } from './html.ts';
import { inboxBody, inboxList, inboxRefreshMs } from './inbox-page.ts';
import { openLiveStream } from './live.ts';
import { oauthConsent } from './oauth-consent.ts';
import type { LiveOptions, LiveStreams } from './live.ts';
import { decisionRefusalText, proposalBody, proposalFragment, refreshIntervalOf } from './proposal-view.ts';
import type { ProposalViewContext } from './proposal-view.ts';
import { admitSession, clearSessionCookie, requireCsrf, requireSameOrigin, sessionSecretOf, setSessionCookie } from './session.ts';
import type { WorkflowStarter } from '../shared/workflow-starts.ts';

export type ConsoleDeps = {
  db: DatabasePool;
  leases: AllowanceLeases;
  temporal: Client;
  taskQueue: string;
  starter: WorkflowStarter;
  publicBaseUrl: string | undefined;
  /** Where proposal workflows are linked (TEMPORAL_UI_URL); null shows their ids only. */
  temporalUi: { baseUrl: string; namespace: string } | null;
  /** The live stream's listener and bounds, and the streams this process holds (live.ts). */
  live: LiveOptions;
  streams: LiveStreams;
};

/** Form bodies are a token, a reason (≤ 2,000 characters) and a few short fields. */
const FORM_BODY_LIMIT = 16 * 1024;

const csrfField = z.string().max(200);
const idParams = z.object({ id: z.uuid() });

/** Where sign-in may send the reviewer afterwards: a console path on this origin, nothing else. */
export function safeNext(next: string | undefined): string {
  if (!next) return '/console';
  try {
    const url = new URL(next, 'http://console.invalid');
    if (url.origin !== 'http://console.invalid' || !/^\/console(\/|$)/.test(url.pathname) || next.startsWith('//') || next.includes('\\')) return '/console';
    return url.pathname + url.search;
  } catch {
    return '/console';
  }
}

/** The OAuth consent page (oauth-consent.ts), where sign-in leads a person connecting an application. */
const isConsentPath = (next: string) => next.startsWith('/console/oauth/authorize');

/** The page's data as JSON instead of HTML: asked for with Accept: application/json (and not text/html). */
function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

export const reviewerConsole: FastifyPluginAsyncZod<ConsoleDeps> = async (app, deps) => {
  const { db, publicBaseUrl } = deps;
  const sessionDeps = { db, leases: deps.leases, publicBaseUrl };
  const assets = loadAssets();
  const assetLinks = { css: assetPath(assets.css), js: assetPath(assets.js) };
  const { streams } = deps;
  // Before the server waits for its connections: an open stream would hold close() for ever.
  app.addHook('preClose', async () => streams.endAll());

  app.decorateRequest('consoleSession', null);
  await app.register(cookie);
  // Forms only: the console takes no JSON bodies (the API is for those).
  app.removeAllContentTypeParsers();
  await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    // Not helmet's no-referrer: under it Chromium sends `Origin: null` with our own form posts, which
    // the Origin check must refuse. same-origin still tells no other site where a reviewer was.
    referrerPolicy: { policy: 'same-origin' },
  });

  // Every page is private to its reviewer; every change must come from our own pages.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store'); // the assets route replaces it with its own
    if (request.method === 'POST') requireSameOrigin(request, publicBaseUrl);
    if (!request.routeOptions.config.consolePublic) await admitSession(request, reply, sessionDeps);
  });
  // Before validation, so a forged form is refused as forged (403), not as malformed.
  app.addHook('preValidation', async (request) => {
    if (request.method !== 'POST') return;
    assertNoNulInRecord(request.body, '/body');
    if (request.consoleSession) requireCsrf(request, (request.body as Record<string, string> | undefined)?.['csrf']);
  });

  const reviewerOf = (request: FastifyRequest) =>
    request.principal && request.consoleSession ? { displayName: request.principal.account.displayName, csrfToken: request.consoleSession.csrfToken } : undefined;

  function sendPage(request: FastifyRequest, reply: FastifyReply, title: string, body: Html, status = 200) {
    return reply.code(status).type('text/html; charset=utf-8').send(page({ title, body, assets: assetLinks, reviewer: reviewerOf(request) }));
  }

  /** A live part alone, for the page's script: 304 when unchanged, and the next refresh interval. */
  function sendFragment(request: FastifyRequest, reply: FastifyReply, markup: Html, refreshMs: number) {
    const etag = etagOf(markup);
    reply.header('etag', etag).header('x-console-refresh-ms', String(refreshMs));
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('text/html; charset=utf-8').send(markup.value);
  }

  const sendJson = <T extends z.ZodType>(reply: FastifyReply, schema: T, data: z.input<T>) => reply.type('application/json; charset=utf-8').send(JSON.stringify(schema.parse(data)));

  app.setErrorHandler((error, request, reply) => {
    const problem = toAppError(error);
    logFailure(request, error, problem);
    if (problem.code === 'session_invalid' && sessionSecretOf(request) !== undefined) clearSessionCookie(request, reply, publicBaseUrl);
    // A script (JSON, the refresher fetching a live part, the live stream) gets problem+json; a person a page.
    if (wantsJson(request) || request.url.includes('fragment=') || request.routeOptions.url === '/console/live') return sendProblem(reply, problem);
    if (problem.code === 'session_invalid' && request.method === 'GET') {
      // A session cookie was sent, so there was a session and it ended: the sign-in page says so.
      const ended = sessionSecretOf(request) !== undefined ? '&expired=1' : '';
      return reply.redirect(`/console/sign-in?next=${encodeURIComponent(safeNext(request.url))}${ended}`, 303);
    }
    for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
    if (request.routeOptions.url === '/console/sign-in') {
      const next = safeNext((request.body as Record<string, string> | undefined)?.['next']);
      return sendPage(request, reply, 'Sign in', signInBody({ next, problem, connecting: isConsentPath(next) }), problem.status);
    }
    const title = problem.status === 404 ? 'Not found' : problem.status === 503 ? 'Temporarily unavailable' : 'Something went wrong';
    return sendPage(request, reply, title, errorBody(problem, request.id), problem.status);
  });
  app.setNotFoundHandler((request, reply) => {
    const problem = new AppError('route_not_found', `No console page at ${request.url.split('?')[0]}.`);
    if (wantsJson(request)) return sendProblem(reply, problem);
    return sendPage(request, reply, 'Not found', errorBody(problem, request.id), 404);
  });

  app.get('/assets/:name', { schema: { hide: true, params: z.object({ name: z.string().max(64) }) }, config: { consolePublic: true } }, async (request, reply) => {
    const asset = assets.byName.get(request.params.name);
    if (!asset) throw new AppError('not_found', 'No such console asset.');
    return reply.header('cache-control', 'public, max-age=31536000, immutable').header('etag', asset.etag).type(asset.contentType).send(asset.body);
  });

  app.get(
    '/sign-in',
    {
      schema: { hide: true, querystring: z.object({ next: z.string().max(2048).optional(), signedOut: z.literal('1').optional(), expired: z.literal('1').optional() }) },
      config: { consolePublic: true },
    },
    async (request, reply) =>
      sendPage(request, reply, 'Sign in', signInBody({ next: safeNext(request.query.next), connecting: isConsentPath(safeNext(request.query.next)), signedOut: request.query.signedOut === '1', expired: request.query.expired === '1' })),
  );

  app.post(
    '/sign-in',
    { schema: { hide: true, body: z.strictObject({ token: z.string().min(1).max(200), next: z.string().max(2048).optional() }) }, config: { consolePublic: true } },
    async (request, reply) => {
      // Admitted exactly as the automation gateway admits the token: judged (active, plan) and charged.
      // A sign-in on the way to connecting an application (OAuth consent) is judged for MCP instead,
      // uncharged: any plan with MCP may connect one, and the console's own pages still refuse it.
      const token = request.body.token.trim();
      const principal = isConsentPath(safeNext(request.body.next))
        ? await admitAccessToken(db, { token, iface: 'mcp', leases: deps.leases, charge: false })
        : await admitAccessToken(db, { token, iface: 'automation', leases: deps.leases });
      const signedIn = await openSession(db, { principal, userAgent: request.headers['user-agent'] });
      // A session this browser held before is ended, not just overwritten: one browser, one session.
      const previous = sessionSecretOf(request);
      if (previous) await signOut(db, previous);
      setSessionCookie(request, reply, signedIn, publicBaseUrl);
      return reply.redirect(safeNext(request.body.next), 303);
    },
  );

  app.post('/sign-out', { schema: { hide: true, body: z.strictObject({ csrf: csrfField.optional() }) }, config: { consolePublic: true } }, async (request, reply) => {
    const secret = sessionSecretOf(request);
    if (secret) {
      // A live session ends only with its own CSRF token (no other site can sign a reviewer out); a dead one is just forgotten.
      const live = await admitSession(request, reply, sessionDeps, { charge: false }).catch((error: unknown) => {
        if (error instanceof AppError && (error.code === 'session_invalid' || error.code === 'account_inactive' || error.code === 'entitlement_required')) return null;
        throw error;
      });
      if (live) requireCsrf(request, request.body.csrf);
      await signOut(db, secret);
      clearSessionCookie(request, reply, publicBaseUrl);
    }
    return reply.redirect('/console/sign-in?signedOut=1', 303);
  });

  app.get('/', { schema: { hide: true, querystring: inboxQuerySchema.extend({ fragment: z.literal('list').optional() }) } }, async (request, reply) => {
    const { fragment, ...query } = request.query;
    const inbox = await readInbox(db, request.principal!.account.id, query);
    if (wantsJson(request)) return sendJson(reply, inboxSchema, inbox);
    const paged = query.cursor !== undefined;
    const now = Date.now();
    const list = inboxList(inbox, paged, now);
    if (fragment) return sendFragment(request, reply, list, paged ? 0 : inboxRefreshMs);
    return sendPage(request, reply, 'Inbox', inboxBody(inbox, paged, etagOf(list), now));
  });

  // Server-Sent Events: which proposals changed, as they commit (live.ts); the page fetches its fragment.
  app.get('/live', { schema: { hide: true, querystring: z.strictObject({}) }, config: { longLived: true } }, async (request, reply) =>
    openLiveStream(request, reply, { sessionDeps, live: deps.live, streams }),
  );

  app.get(
    '/proposals/:id',
    { schema: { hide: true, params: idParams, querystring: z.strictObject({ fragment: z.literal('proposal').optional(), done: z.enum(['approve', 'reject', 'undo']).optional() }) } },
    async (request, reply) => {
      const view = await readProposalPage(db, request.principal!.account.id, request.params.id);
      if (wantsJson(request)) return sendJson(reply, proposalPageSchema, view);
      return sendProposalPage(request, reply, view, { done: request.query.done, fragment: request.query.fragment !== undefined });
    },
  );

  function sendProposalPage(
    request: FastifyRequest,
    reply: FastifyReply,
    view: ProposalPage,
    options: { done?: ProposalViewContext['done']; fragment?: boolean; refused?: ProposalViewContext['refused']; status?: number },
  ) {
    const context: ProposalViewContext = { csrfToken: request.consoleSession!.csrfToken, temporalUi: deps.temporalUi, done: options.done, refused: options.refused };
    const fragment = proposalFragment(view, context);
    if (options.fragment) return sendFragment(request, reply, fragment, refreshIntervalOf(view));
    // A refused decision's page shows the proposal as its live part would, plus the refusal and the
    // reason as typed: it carries the live part's ETag, so only a change of the proposal replaces it.
    const liveEtag = etagOf(options.refused ? proposalFragment(view, { ...context, refused: undefined }) : fragment);
    return sendPage(request, reply, view.proposal.summary || view.proposal.actionKind, proposalBody(view, context, liveEtag), options.status);
  }

  app.post(
    '/proposals/:id/decision',
    {
      schema: {
        hide: true,
        params: idParams,
        // The reason's limit is checked below, so a reason too long is answered on the page, kept.
        body: z.strictObject({ csrf: csrfField, decision: z.enum(['approve', 'reject']), reason: z.string().max(FORM_BODY_LIMIT).optional() }),
      },
    },
    async (request, reply) => {
      const typed = request.body.reason ?? '';
      const reason = typed.trim() || null;
      const accountId = request.principal!.account.id;
      try {
        if (reason && reason.length > decisionReasonMaxChars) {
          throw new AppError('invalid_request', `Your reason has ${reason.length.toLocaleString('en')} characters; a reason holds at most ${decisionReasonMaxChars.toLocaleString('en')}. Shorten it, then decide again: nothing was decided.`, {
            extensions: { errors: [{ pointer: '/body/reason', message: `at most ${decisionReasonMaxChars} characters` }] },
          });
        }
        const outcome = await decideProposal(deps.starter, { proposalId: request.params.id, accountId, actingForAccountId: null, decision: request.body.decision, reason });
        if (wantsJson(request)) return outcome;
        return reply.redirect(`/console/proposals/${outcome.id}?done=${request.body.decision}`, 303);
      } catch (error) {
        // A person gets the proposal again, as it is now, with what went wrong in words and their reason kept.
        const problem = toAppError(error);
        if (wantsJson(request) || (problem.status >= 500 && problem.code !== 'workflow_service_unavailable') || problem.code === 'proposal_not_found') throw error;
        logFailure(request, error, problem);
        for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
        const view = await readProposalPage(db, accountId, request.params.id);
        return sendProposalPage(request, reply, view, { refused: { message: decisionRefusalText(problem, request.body.decision), code: problem.code, reason: typed }, status: problem.status });
      }
    },
  );

  app.post('/proposals/:id/undo', { schema: { hide: true, params: idParams, body: z.strictObject({ csrf: csrfField }) } }, async (request, reply) => {
    const outcome = await undoProposal(db, deps.starter, request.log, { proposalId: request.params.id, accountId: request.principal!.account.id });
    if (wantsJson(request)) return reply.code(202).send(outcome);
    return reply.redirect(`/console/proposals/${outcome.id}?done=undo`, 303);
  });

  // The OAuth authorization endpoint: consent is a console page (oauth-consent.ts).
  await app.register(oauthConsent, { db, leases: deps.leases, publicBaseUrl, sendPage });
};
