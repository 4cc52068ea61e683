// The few linked notes of the demo vault `npm start` seeds. Written through the knowledge core
// (source `ops`) so they carry revisions, links and provenance events like any other note.
import type { DatabasePool } from 'slonik';
import { applyTransaction } from '../../domain/notes/knowledge.ts';
import { listNoteSummaries } from '../../domain/notes/store.ts';

export const demoNotes = [
  {
    path: 'Welcome/Start here.md',
    content: `# Start here

This vault is hosted: agents and scripts reach it through the Developer REST API and the MCP gateway.

- Plans live in [[Projects/Roadmap]].
- Meeting notes: [[Projects/Weekly sync|the weekly sync]].
`,
  },
  {
    path: 'Projects/Roadmap.md',
    content: `---
title: Roadmap
status: active
owners: [demo]
---
# Roadmap

1. Ship the notes API. See [[Weekly sync#Decisions]].
2. Write the onboarding guide ([[Welcome/Start here]]).
`,
  },
  {
    path: 'Projects/Weekly sync.md',
    content: `---
date: 2026-11-20
tags: [meeting]
---
# Weekly sync

## Decisions
- Previews by default; applies need an Idempotency-Key. ^decision-1

![[Roadmap]]
`,
  },
];

/** Seeds the notes into an empty demo vault; a vault that already has notes is left alone. */
export async function seedDemoNotes(db: DatabasePool, demo: { accountId: string; vaultId: string; mappingId: string }): Promise<void> {
  if ((await listNoteSummaries(db, demo.vaultId, { limit: 1 })).length > 0) return;
  await applyTransaction(
    db,
    { vaultId: demo.vaultId, mappingId: demo.mappingId },
    demoNotes.map((n) => ({ type: 'write-note' as const, ...n })),
    { actor: { type: 'account', id: demo.accountId }, source: 'ops', requestId: null, idempotencyKey: 'demo-seed' },
    { accountId: demo.accountId, route: 'ops:seed-demo', scope: demo.mappingId, key: 'demo-seed', fingerprint: 'demo-seed-v1' },
  );
}
