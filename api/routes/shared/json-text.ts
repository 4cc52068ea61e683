// An answer whose JSON was already written (built by Postgres, say): sent as it is. A string payload
// skips the response serializer, so the route's schema documents the answer without validating it
// again; the route's tests parse the answer with that schema instead.
import type { FastifyReply } from 'fastify';

export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  // The type provider types send() by the response schema; the text is that schema's JSON.
  return reply.type('application/json; charset=utf-8').send(json as never);
}
