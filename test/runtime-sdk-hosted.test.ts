// The hosted adapter's side of the wire, against a recording fetch: what it sends (credential,
// version pin, Accept, idempotency keys) and that it accepts only answers the contract promises.
// Its behaviour against the real server is test/runtime-sdk-conformance.test.ts.
import { describe, expect, it } from 'vitest';
import { createHostedRuntime, envelope, RuntimeError, RuntimeResponseError } from '@hosted-notes/runtime-sdk';

type Sent = { url: string; method: string; headers: Record<string, string>; body: unknown; redirect: string | undefined };

function recordingFetch(answer: (sent: Sent) => Response) {
  const sent: Sent[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const request: Sent = {
      url: String(input),
      method: init?.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
      redirect: init?.redirect,
    };
    sent.push(request);
    return answer(request);
  }) as typeof globalThis.fetch;
  return { fetch, sent };
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'x-service-runtime-version': '1', ...headers } });

const vaultId = '6f1c2f3e-1f6a-4a57-9d7e-2b1f0f6d9a10';
const revision = `sha256:${'a'.repeat(64)}`;
const note = { vaultId, path: 'Units/A.md', title: 'A', content: '# A\n', revision, size: 4, frontmatter: null, links: [], createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
const publication = {
  mode: 'apply',
  applied: true,
  vaultId,
  path: 'Units/A.md',
  title: 'A',
  operation: 'create',
  beforeRevision: null,
  afterRevision: revision,
  size: 4,
  revisionRequired: null,
  diff: null,
  diffTruncated: null,
  eventId: 'e1',
  replayed: false,
};

describe('hosted adapter on the wire', () => {
  it('sends the credential, the version pin and Accept to {baseUrl}/api/product/v1, with the path as a query value', async () => {
    const { fetch, sent } = recordingFetch(() => json(envelope('runtime.note', note)));
    const runtime = createHostedRuntime({ baseUrl: 'https://notes.example.test/', credential: 'hnp_svc_secret', fetch });
    expect(runtime.endpoint).toBe('https://notes.example.test/api/product/v1');
    const read = await runtime.readNote(vaultId, 'Units/A & B?.md');
    expect(read.data?.title).toBe('A');
    expect(sent[0]).toMatchObject({
      url: `https://notes.example.test/api/product/v1/vaults/${vaultId}/note?path=Units%2FA+%26+B%3F.md`,
      method: 'GET',
      headers: { authorization: 'Bearer hnp_svc_secret', 'x-service-runtime-version': '1', accept: 'application/json' },
      redirect: 'error',
    });
    expect(sent[0]!.headers['idempotency-key']).toBeUndefined();
    // A base that already names the mount is not doubled.
    expect(createHostedRuntime({ baseUrl: 'http://127.0.0.1:1/api/product/v1/', credential: 'k', fetch }).endpoint).toBe('http://127.0.0.1:1/api/product/v1');
  });

  it('keys every applied write (generated, or the caller\'s own), and no preview', async () => {
    const { fetch, sent } = recordingFetch((request) => json(envelope('runtime.note-publication', { ...publication, mode: (request.body as { mode?: string }).mode ?? 'preview' }), 201));
    let n = 0;
    const runtime = createHostedRuntime({ baseUrl: 'https://notes.example.test', credential: 'hnp_svc_secret', fetch, idempotencyKey: () => `generated-${++n}` });
    await runtime.publishNote(vaultId, { path: 'Units/A.md', content: '# A\n' });
    await runtime.publishNote(vaultId, { path: 'Units/A.md', content: '# A\n', mode: 'apply' });
    await runtime.publishNote(vaultId, { path: 'Units/A.md', content: '# A\n', mode: 'apply' }, { idempotencyKey: 'mine-1' });
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual([undefined, 'generated-1', 'mine-1']);
    expect(sent[1]).toMatchObject({ method: 'POST', headers: { 'content-type': 'application/json' }, body: { path: 'Units/A.md', content: '# A\n', mode: 'apply' } });
  });

  it('turns problem+json into RuntimeError with the stable code, extensions and the key to retry with', async () => {
    const { fetch } = recordingFetch(() =>
      json({ type: '/problems/revision_conflict', title: 'Stale', status: 409, code: 'revision_conflict', detail: 'changed', requestId: 'req-1', currentRevision: revision }, 409, {
        'content-type': 'application/problem+json',
      }),
    );
    const runtime = createHostedRuntime({ baseUrl: 'https://notes.example.test', credential: 'hnp_svc_secret', fetch });
    const error = await runtime.publishNote(vaultId, { path: 'Units/A.md', content: 'x', mode: 'apply', expectedRevision: revision }, { idempotencyKey: 'k-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ status: 409, code: 'revision_conflict', detail: 'changed', requestId: 'req-1', idempotencyKey: 'k-1', extensions: { currentRevision: revision } });
    expect(String((error as Error).message)).not.toContain('hnp_svc_secret');
  });

  it('refuses any answer the contract does not promise', async () => {
    const answers: Array<[string, Response]> = [
      ['not JSON', new Response('<html>oops</html>', { status: 200, headers: { 'content-type': 'text/html' } })],
      ['another kind', json(envelope('runtime.note-list', { vaultId, notes: [], hasMore: false, nextCursor: null }))],
      ['a field missing', json(envelope('runtime.note', { ...note, revision: undefined }))],
      ['a malformed revision', json(envelope('runtime.note', { ...note, revision: 'md5:abc' }))],
      ['another runtime version in the body', json({ ...envelope('runtime.note', note), runtimeVersion: '2' })],
      ['another runtime version in the header', json(envelope('runtime.note', note), 200, { 'x-service-runtime-version': '2' })],
      ['complete with a status the schema does not know', json({ ...envelope('runtime.note', note), status: 'mostly' })],
      ['a gateway error without a problem', new Response('Bad gateway', { status: 502 })],
      ['a problem without a code', json({ type: 'x', title: 'x', status: 500 }, 500)],
    ];
    for (const [label, answer] of answers) {
      const { fetch } = recordingFetch(() => answer);
      const runtime = createHostedRuntime({ baseUrl: 'https://notes.example.test', credential: 'hnp_svc_secret', fetch });
      const error = await runtime.readNote(vaultId, 'Units/A.md').catch((e: unknown) => e);
      expect(error, label).toBeInstanceOf(RuntimeResponseError);
    }
  });

  it('refuses a base URL that is not http(s), a blank credential, and a raw request leaving the mount', () => {
    expect(() => createHostedRuntime({ baseUrl: 'file:///etc', credential: 'k' })).toThrow(TypeError);
    expect(() => createHostedRuntime({ baseUrl: 'https://x.test', credential: '  ' })).toThrow(TypeError);
    const { fetch, sent } = recordingFetch(() => json({}));
    const runtime = createHostedRuntime({ baseUrl: 'https://notes.example.test', credential: 'hnp_svc_secret', fetch });
    expect(() => runtime.fetch('//evil.example/steal')).toThrow(TypeError);
    expect(() => runtime.fetch('https://evil.example/')).toThrow(TypeError);
    expect(sent).toEqual([]);
  });
});
