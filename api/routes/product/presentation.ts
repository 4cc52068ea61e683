// The public presentation of a custom branded host (GET /presentation?host=…): no credential, not a
// runtime operation (plain JSON, no envelope), and not authority. It answers safe presentation only
// (display name, colours, logo reference, terminology), never an id, an installation, a setting or
// another host; every host it will not present (unknown, malformed, suspended organization, no
// profile) answers the same presentation_not_found. It never reads the Authorization header, so a
// credential changes nothing. Resolution: domain/product-runtime/brands.ts.
import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { presentationSchema, resolvePublicPresentation } from '../../../domain/product-runtime/brands.ts';
import { findPack } from '../../../domain/product-runtime/packs/index.ts';
import type { OperationExamples } from '../../openapi-examples.ts';
import { headerValue } from '../shared/headers.ts';
import type { RuntimeRouteDeps } from './kit.ts';

/** Short enough that a changed brand shows within a minute, long enough to spare the database a page's every load. */
const CACHE_CONTROL = 'public, max-age=60';

const etagOf = (body: unknown) => `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27)}"`;

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** The OpenAPI example: a branded host, its terminology the education pack's overlaid by the brand's. */
const presentationExamples: OperationExamples = {
  parameters: { host: 'learn.riverside.example' },
  responses: {
    200: {
      value: presentationSchema.parse({
        displayName: 'Riverside Learning',
        colors: { primary: '#1a5fb4', accent: '#e66100', background: '#ffffff', text: '#1c1c1c' },
        logo: { kind: 'url', ref: 'https://cdn.riverside.example/logo.svg' },
        terminology: { ...findPack('education', 1)!.experience.terminology, learners: 'Pupils', 'nav.library': 'Resource bank' },
      }),
    },
  },
};

export const presentationRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, { db }) => {
  app.get(
    '/presentation',
    {
      config: { publicRuntime: true },
      schema: {
        tags: ['product-runtime'],
        security: [],
        operationId: 'getPublicPresentation',
        summary: 'The public presentation of a custom branded host (no credential)',
        description:
          'Resolves a custom hostname to safe public presentation only: display name, colours, logo reference and terminology (the product pack\'s defaults ' +
          'overlaid by the organization\'s brand profile). Never an organization id, installation, setting or other host. An unknown host, a malformed one and ' +
          'one of a suspended organization answer the same 404 presentation_not_found. Presentation grants nothing; a credential sent here is ignored. ' +
          'Cacheable (Cache-Control: public, max-age=60) with an ETag; If-None-Match answers 304.',
        querystring: z.strictObject({
          // A repeated or malformed host is answered like an unknown one, so it is not refused as invalid input.
          host: z
            .union([z.string(), z.array(z.string())])
            .optional()
            .describe('The custom hostname, e.g. learn.example.org (lower or upper case; no port).'),
        }),
        response: { 200: presentationSchema, 304: z.null().describe('Not modified: If-None-Match matched. No body.') },
        problems: ['presentation_not_found'],
        docs: {
          responses: {
            200: { description: 'Safe public presentation of the host (BrandPresentation); Cache-Control: public, max-age=60; ETag.', headers: ['ETag'] },
            304: { description: 'Not modified: If-None-Match matched the ETag. No body.', headers: ['ETag'] },
          },
        },
        examples: presentationExamples,
      },
    },
    async (request, reply) => {
      const host = typeof request.query.host === 'string' ? request.query.host : null;
      const presentation = await resolvePublicPresentation(db, host);
      const etag = etagOf(presentation);
      reply.header('cache-control', CACHE_CONTROL).header('etag', etag);
      if (matches(headerValue(request, 'if-none-match'), etag)) return reply.code(304).send(null as never);
      return presentation;
    },
  );
};
