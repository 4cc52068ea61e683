// What a Product Runtime route declares and how the document publishes it: the chain needs of its
// config (RuntimeRouteConfig), the envelope of its answer and its security requirement. Its own
// module so that operation-route.ts (the table's completion of a route) and kit.ts (admission,
// which registers that completion) both read it without importing each other.
import type { z } from 'zod';
import { envelopeSchema } from '@hosted-notes/runtime-sdk';
import type { Scope } from '../../../domain/product-runtime/entities.ts';

/** What a runtime route needs from its caller's chain. */
export type RuntimeRouteConfig = {
  /** The credential scope the operation needs; null for those that describe the credential itself. */
  scope: Scope | null;
  /** The route parameter naming the logical vault, and the grant the operation needs on it. */
  vault?: { param: string; access: 'read' | 'write' };
  /**
   * The handler admits the request itself with `deps.admission.admit(…, fusion)`, its own work
   * fused into the chain's statement (the hot readNote); the hook then checks only the version.
   */
  admitsInHandler?: boolean;
};

/** The 200 schema of a runtime operation: the envelope of `kind` around `data`, named for OpenAPI. */
export function runtimeEnvelope<K extends string, D extends z.ZodType>(kind: K, data: D) {
  const name = kind
    .split(/[.-]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
  return envelopeSchema(kind, data).meta({ id: `${name}Envelope`, description: `The versioned envelope of a ${kind} answer.` });
}

/** The security requirement of runtime routes in OpenAPI. */
export const runtimeSecurity = [{ serviceCredential: [] }];
