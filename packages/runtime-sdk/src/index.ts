// @hosted-notes/runtime-sdk: the Product Runtime's operations, typed, over a hosted or a local adapter.
export * from './envelope.ts';
export * from './dto/core.ts';
