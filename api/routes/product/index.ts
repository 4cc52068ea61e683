// Product Runtime (/api/product/v1): partner products acting through an installation's service
// credential. Every route declares the scope (and vault grant) it needs; the plugin's hooks
// (kit.ts) check the version header, run the whole chain and charge the organization's monthly
// operations before any handler runs. Answers are versioned envelopes (@hosted-notes/runtime-sdk).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { OperationLeases } from '../../../domain/product-runtime/operation-leases.ts';
import type { AdmissionCache } from '../../../domain/principals/admission-cache.ts';
import type { ChainAdmission } from '../../../domain/product-runtime/chain.ts';
import { registerRuntimeAccess, runtimeAdmission } from './kit.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import type { BlobStore } from '../../../domain/media/blob-store.ts';
import { hasDomainComposition } from '../../../domain/product-runtime/composition.ts';
import { resolvePresentation } from '../../../domain/product-runtime/brands.ts';
import { compositionRoutes } from './composition.ts';
import { contextScopeRoutes } from './context-scopes.ts';
import { intelligenceRoutes } from './intelligence.ts';
import { generationRoutes } from './generations.ts';
import { NotificationListener } from '../../../db/notification-listener.ts';
import { GENERATION_CHANNEL, GenerationWakes } from '../../../domain/intelligence/generation-log.ts';
import { educationRoutes } from './education/index.ts';
import { mediaRoutes } from './media/index.ts';
import { connectionRoutes } from './connections/index.ts';
import { presentationRoutes } from './presentation.ts';
import { runtimeNotesRoutes } from './notes.ts';
import { runtimeRoutes } from './runtime.ts';
import { vaultBindingRoutes } from './vault-bindings.ts';

export type ProductRuntimeDeps = Omit<RuntimeRouteDeps, 'admission'> & {
  mediaStore: BlobStore;
  /** The process's kept chains (decision 112), shared with whatever else admits service credentials. */
  admissions: AdmissionCache<ChainAdmission>;
  /**
   * A session-mode URL for the LISTEN connection of generation events and cancels (a transaction
   * pooler delivers no notifications); the pool's URL when none is given.
   */
  listenDatabaseUrl?: string | undefined;
};

export const productRuntime: FastifyPluginAsyncZod<ProductRuntimeDeps> = async (app, options) => {
  // Only the dependencies travel on: the plugin's own options (its prefix) must not.
  // The organization's monthly operations are counted through this process's leases; unused
  // reservations go back when the app closes.
  const leases = new OperationLeases(options.db);
  app.addHook('onClose', async () => {
    await leases.releaseAll().catch((error: unknown) => app.log.warn({ err: error }, 'returning operation leases failed'));
  });
  const deps: RuntimeRouteDeps = {
    db: options.db,
    temporal: options.temporal,
    taskQueue: options.taskQueue,
    starter: options.starter,
    proposalExpirySeconds: options.proposalExpirySeconds,
    intelligence: options.intelligence,
    connections: options.connections,
    admission: runtimeAdmission(options.db, leases, options.admissions),
  };
  // Runtime bodies are JSON only: a text/plain body is 415, not a string the schema then refuses.
  app.removeContentTypeParser('text/plain');
  registerRuntimeAccess(app, deps.admission);
  await app.register(runtimeRoutes, {
    ...deps,
    // Presentation is resolved after authorization, for the caller's organization and product only.
    presentation: (caller) => resolvePresentation(deps.db, caller),
    hasComposition: (caller) => hasDomainComposition(deps.db, caller),
  });
  await app.register(compositionRoutes, deps);
  await app.register(presentationRoutes, deps);
  await app.register(runtimeNotesRoutes, deps);
  await app.register(vaultBindingRoutes, deps);
  await app.register(contextScopeRoutes, deps);
  // One LISTEN connection per process for every reader of a generation's events and every cancel of a
  // generation this process pumps, made when the first one comes (domain/intelligence/generation-log.ts).
  const generationChannel = new NotificationListener(() => options.listenDatabaseUrl ?? options.db.configuration.connectionUri, GENERATION_CHANNEL, app.log);
  const wakes = new GenerationWakes(generationChannel);
  // Closing waits for the generations this process pumps (background ones have no request to wait
  // on), listening for their cancels meanwhile; then the connection goes.
  app.addHook('onClose', async () => {
    await wakes.drained();
    await generationChannel.stop();
  });
  await app.register(intelligenceRoutes, { ...deps, wakes });
  await app.register(generationRoutes, { ...deps, wakes });
  await app.register(educationRoutes, deps);
  await app.register(mediaRoutes, { ...deps, mediaStore: options.mediaStore });
  await app.register(connectionRoutes, deps);
};
