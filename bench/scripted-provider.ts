// The model provider of the intelligence benchmark, in a process of its own (so its event loop is
// neither the API's nor the load generator's): the tests' ScriptedProvider (the real OpenAI wire
// protocol) plus a small control server on another port:
//   POST /mode {"mode":"fast"|"slow"}  fast: every chunk at once; slow: the first chunk at once,
//                                      then one every 100 ms (a generation to walk away from)
//   GET  /aborts?count=N               waits (≤ 5 s) until N client requests in all went away
//                                      mid-answer, and answers when each was seen
//   GET  /clock                        this process's clock, to check it against the bench's
// Times are epoch milliseconds from performance.timeOrigin + performance.now(), the clock the
// bench reads too, so an abort can be timed across the two processes.
//   node bench/scripted-provider.ts   → prints "listening <provider base URL> <control URL>"
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { ScriptedProvider } from '../test/support/scripted-provider.ts';
import type { ScriptedTurn } from '../test/support/scripted-provider.ts';

const epochMs = (at: number) => performance.timeOrigin + at;

const turns: Record<'fast' | 'slow', ScriptedTurn> = {
  fast: { kind: 'chat', chunks: ['Fold ', 'a strip ', 'in half.'], usage: { prompt_tokens: 120, completion_tokens: 3 } },
  // 50 chunks at 100 ms: 5 s, far longer than any abort the bench waits for.
  slow: { kind: 'chat', chunks: Array.from({ length: 50 }, (_, i) => `word${i} `), beforeChunk: (index) => (index === 0 ? Promise.resolve() : sleep(100)) },
};

const provider = await new ScriptedProvider().start();
provider.fallback = turns.fast;

const modeBody = z.object({ mode: z.enum(['fast', 'slow']) });

const control = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const answer = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'POST' && url.pathname === '/mode') {
    let raw = '';
    req.on('data', (part: Buffer) => (raw += part.toString()));
    req.on('end', () => {
      const parsed = modeBody.safeParse(JSON.parse(raw || '{}'));
      if (!parsed.success) return answer(400, { error: 'mode must be fast or slow' });
      // Recorded calls and aborts start over with each mode (and do not grow without bound).
      provider.reset();
      provider.fallback = turns[parsed.data.mode];
      answer(200, { mode: parsed.data.mode });
    });
    return;
  }
  if (req.method === 'GET' && url.pathname === '/aborts') {
    const count = Number(url.searchParams.get('count') ?? '0');
    void Promise.race([provider.waitForAborts(count), sleep(5_000)]).then(() =>
      answer(200, { aborts: provider.aborts.map((a) => epochMs(a.at)), calls: provider.calls.length }),
    );
    return;
  }
  if (req.method === 'GET' && url.pathname === '/clock') return answer(200, { now: epochMs(performance.now()) });
  answer(404, { error: 'unknown path' });
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));

process.stdout.write(`listening ${provider.url} http://127.0.0.1:${(control.address() as AddressInfo).port}\n`);
process.on('SIGTERM', () => {
  control.closeAllConnections();
  control.close();
  void provider.close().then(() => process.exit(0));
});
