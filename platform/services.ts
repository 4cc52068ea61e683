// Transitional: the composition roots now live beside their entry points (api/compose.ts,
// workers/compose.ts). Only bench/serve.ts still imports this path; delete this file once it
// imports api/compose.ts (and drop its entry in eslint.config.js's layerExceptions).
export { startApi } from '../api/compose.ts';
