// The console's stylesheet and script, read once when the plugin is registered and served under
// content-hashed names with a year's immutable caching: a new build gets new URLs, so no reviewer
// keeps a stale script. Two small files do not need @fastify/static, which does not hash names.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export type Asset = { name: string; contentType: string; body: Buffer; etag: string };
export type Assets = { css: Asset; js: Asset; byName: Map<string, Asset> };

function load(file: string, extension: 'css' | 'js', contentType: string): Asset {
  const body = readFileSync(new URL(`./assets/${file}`, import.meta.url));
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return { name: `console.${hash}.${extension}`, contentType, body, etag: `"${hash}"` };
}

export function loadAssets(): Assets {
  const css = load('console.css', 'css', 'text/css; charset=utf-8');
  const js = load('console.js', 'js', 'text/javascript; charset=utf-8');
  return { css, js, byName: new Map([css, js].map((a) => [a.name, a])) };
}

export const assetPath = (asset: Asset) => `/console/assets/${asset.name}`;
