// @hosted-notes/runtime-sdk: the Product Runtime's operations, typed, over a hosted or a local adapter.
//
//   import { createHostedRuntime } from '@hosted-notes/runtime-sdk/hosted';
//   import { createLocalRuntime } from '@hosted-notes/runtime-sdk/local';
//
// The root entry holds the contract both share (envelopes, DTO schemas, the adapter interface,
// errors, the NDJSON reader) and the hosted adapter; it uses no Node module, so a browser bundle
// can import it. The local adapter reads the file system: import it from `/local`.
export * from './envelope.ts';
export * from './dto/core.ts';
export * from './dto/composition.ts';
export * from './dto/scopes.ts';
export * from './dto/intelligence.ts';
export * from './dto/media.ts';
export * from './dto/connections.ts';
export * from './operations.ts';
export * from './ndjson.ts';
export { createHostedRuntime, RUNTIME_MOUNT } from './hosted.ts';
export type { HostedRuntime, HostedRuntimeOptions } from './hosted.ts';
