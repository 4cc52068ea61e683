// JSON Canvas (jsoncanvas.org, 1.0) → a Markdown outline in reading order. Deterministic: the same
// canvas always gives the same text. The rule (also in docs/mcp.md):
// 1. Each node belongs to the smallest group whose rectangle fully contains it (ties: smaller id);
//    a group may sit inside another group. Nodes in no group are at the top level.
// 2. Siblings are read in rows, top to bottom, then left to right: sorted by top edge, a node joins
//    the current row while its vertical centre lies within the band of the row's first node;
//    within a row, by left edge, then top edge, then id.
// 3. Groups become headings (## for top-level groups, one level deeper per nesting, bold past ######);
//    text nodes become list items, file nodes WikiLinks, link nodes Markdown links.
// 4. Edges become a "Connections" list in edge order: `from → to`, with the edge label.
import { z } from 'zod';
import { AppError } from '../errors.ts';

export const MAX_CANVAS_NODES = 500;
export const MAX_CANVAS_EDGES = 2_000;
const MAX_TEXT = 100_000;

const finite = z.number().refine(Number.isFinite, 'must be a finite number');
const base = {
  id: z.string().min(1).max(200),
  x: finite,
  y: finite,
  width: finite.refine((v) => v > 0, 'must be positive'),
  height: finite.refine((v) => v > 0, 'must be positive'),
  color: z.string().max(50).optional(),
};

const nodeSchema = z.discriminatedUnion('type', [
  z.looseObject({ ...base, type: z.literal('text'), text: z.string().max(MAX_TEXT) }),
  z.looseObject({ ...base, type: z.literal('file'), file: z.string().min(1).max(2048), subpath: z.string().max(1024).optional() }),
  z.looseObject({ ...base, type: z.literal('link'), url: z.string().min(1).max(4096) }),
  z.looseObject({ ...base, type: z.literal('group'), label: z.string().max(1000).optional(), background: z.string().optional(), backgroundStyle: z.string().optional() }),
]);

const edgeSchema = z.looseObject({
  id: z.string().min(1).max(200),
  fromNode: z.string(),
  toNode: z.string(),
  fromSide: z.enum(['top', 'right', 'bottom', 'left']).optional(),
  toSide: z.enum(['top', 'right', 'bottom', 'left']).optional(),
  fromEnd: z.enum(['none', 'arrow']).optional(),
  toEnd: z.enum(['none', 'arrow']).optional(),
  color: z.string().max(50).optional(),
  label: z.string().max(1000).optional(),
});

export const canvasSchema = z.looseObject({
  nodes: z.array(nodeSchema).max(MAX_CANVAS_NODES, `at most ${MAX_CANVAS_NODES} nodes`).default([]),
  edges: z.array(edgeSchema).max(MAX_CANVAS_EDGES, `at most ${MAX_CANVAS_EDGES} edges`).default([]),
});

type CanvasNode = z.infer<typeof nodeSchema>;
export type Canvas = z.infer<typeof canvasSchema>;

function invalid(reason: string, pointer: string): AppError {
  return new AppError('invalid_canvas', reason, { extensions: { errors: [{ pointer, message: reason, code: 'invalid_canvas' }] } });
}

/** Parses and checks a canvas: schema, node limit, unique ids, edges naming existing nodes. */
export function parseCanvas(input: unknown): Canvas {
  if (input && typeof input === 'object' && Array.isArray((input as { nodes?: unknown }).nodes) && (input as { nodes: unknown[] }).nodes.length > MAX_CANVAS_NODES) {
    throw invalid(`The canvas has ${(input as { nodes: unknown[] }).nodes.length} nodes; at most ${MAX_CANVAS_NODES} are translated.`, '/canvas/nodes');
  }
  const parsed = canvasSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid(issue.message, `/canvas/${issue.path.join('/')}`);
  }
  const canvas = parsed.data;
  const ids = new Set<string>();
  canvas.nodes.forEach((node, i) => {
    if (ids.has(node.id)) throw invalid(`Duplicate node id "${node.id}".`, `/canvas/nodes/${i}/id`);
    ids.add(node.id);
  });
  canvas.edges.forEach((edge, i) => {
    if (!ids.has(edge.fromNode)) throw invalid(`Edge "${edge.id}" starts at unknown node "${edge.fromNode}".`, `/canvas/edges/${i}/fromNode`);
    if (!ids.has(edge.toNode)) throw invalid(`Edge "${edge.id}" ends at unknown node "${edge.toNode}".`, `/canvas/edges/${i}/toNode`);
  });
  return canvas;
}

const contains = (outer: CanvasNode, inner: CanvasNode) =>
  outer !== inner &&
  inner.x >= outer.x &&
  inner.y >= outer.y &&
  inner.x + inner.width <= outer.x + outer.width &&
  inner.y + inner.height <= outer.y + outer.height;

const area = (n: CanvasNode) => n.width * n.height;
const byId = (a: CanvasNode, b: CanvasNode) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Reading order of siblings: rows top to bottom, then left to right (rule 2). */
export function readingOrder(nodes: CanvasNode[]): CanvasNode[] {
  const sorted = [...nodes].sort((a, b) => a.y - b.y || a.x - b.x || byId(a, b));
  const rows: CanvasNode[][] = [];
  let band: { top: number; bottom: number } | null = null;
  for (const node of sorted) {
    const centre = node.y + node.height / 2;
    if (band && centre >= band.top && centre <= band.bottom) rows[rows.length - 1]!.push(node);
    else {
      rows.push([node]);
      band = { top: node.y, bottom: node.y + node.height };
    }
  }
  return rows.flatMap((row) => row.sort((a, b) => a.x - b.x || a.y - b.y || byId(a, b)));
}

function oneLine(text: string, max = 80): string {
  const line = text.trim().split('\n')[0]!.trim().replace(/^#+\s*/, '');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function nodeName(node: CanvasNode): string {
  switch (node.type) {
    case 'text':
      return oneLine(node.text) || `text ${node.id}`;
    case 'file':
      return node.file;
    case 'link':
      return node.url;
    case 'group':
      return node.label?.trim() || `group ${node.id}`;
  }
}

function renderLeaf(node: Exclude<CanvasNode, { type: 'group' }>): string[] {
  switch (node.type) {
    case 'text': {
      const lines = node.text.replace(/\r\n/g, '\n').trim().split('\n');
      return [`- ${lines[0] ?? ''}`, ...lines.slice(1).map((l) => (l ? `  ${l}` : ''))];
    }
    case 'file': {
      const target = node.file.replace(/\.md$/, '') + (node.subpath ?? '');
      return [/\.(md|canvas)$/.test(node.file) || !/\.[a-z0-9]+$/i.test(node.file) ? `- [[${target}]]` : `- ![[${node.file}${node.subpath ?? ''}]]`];
    }
    case 'link':
      return [`- <${node.url}>`];
  }
}

export type CanvasOutline = { markdown: string; nodeCount: number; edgeCount: number; groupCount: number };

export function translateCanvas(input: unknown, options: { title?: string } = {}): CanvasOutline {
  const canvas = parseCanvas(input);
  const groups = canvas.nodes.filter((n) => n.type === 'group');
  const parentOf = new Map<string, string | null>();
  for (const node of canvas.nodes) {
    const containing = groups.filter((g) => contains(g, node)).sort((a, b) => area(a) - area(b) || byId(a, b));
    parentOf.set(node.id, containing[0]?.id ?? null);
  }
  const children = new Map<string | null, CanvasNode[]>();
  for (const node of canvas.nodes) {
    const parent = parentOf.get(node.id) ?? null;
    children.set(parent, [...(children.get(parent) ?? []), node]);
  }

  const lines: string[] = [`# ${options.title?.trim() || 'Canvas'}`];
  const render = (parent: string | null, depth: number) => {
    for (const node of readingOrder(children.get(parent) ?? [])) {
      if (node.type === 'group') {
        const level = depth + 2;
        lines.push('', level <= 6 ? `${'#'.repeat(level)} ${nodeName(node)}` : `**${nodeName(node)}**`, '');
        render(node.id, depth + 1);
      } else {
        lines.push(...renderLeaf(node));
      }
    }
  };
  render(null, 0);

  if (canvas.edges.length > 0) {
    const byNodeId = new Map(canvas.nodes.map((n) => [n.id, n]));
    lines.push('', '## Connections', '');
    for (const edge of canvas.edges) {
      const arrow = edge.fromEnd === 'arrow' && edge.toEnd !== 'none' ? '↔' : edge.toEnd === 'none' ? '—' : '→';
      const label = edge.label?.trim() ? ` (${edge.label.trim()})` : '';
      lines.push(`- ${nodeName(byNodeId.get(edge.fromNode)!)} ${arrow} ${nodeName(byNodeId.get(edge.toNode)!)}${label}`);
    }
  }
  const markdown = `${lines.join('\n').replace(/\n{3,}/g, '\n\n').trim()}\n`;
  return { markdown, nodeCount: canvas.nodes.length, edgeCount: canvas.edges.length, groupCount: groups.length };
}
