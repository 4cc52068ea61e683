// translate_canvas: containment, reading order, edges, limits and invalid canvases.
import { describe, expect, it } from 'vitest';
import { readingOrder, translateCanvas } from '../domain/canvas/translate.ts';

const text = (id: string, x: number, y: number, t = id, w = 100, h = 40) => ({ id, type: 'text' as const, text: t, x, y, width: w, height: h });
const group = (id: string, x: number, y: number, w: number, h: number, label = id) => ({ id, type: 'group' as const, label, x, y, width: w, height: h });

describe('translate_canvas', () => {
  it('puts each node under the smallest containing group, nesting groups as deeper headings', () => {
    const { markdown } = translateCanvas({
      nodes: [
        group('outer', 0, 0, 1000, 1000, 'Outer'),
        group('inner', 100, 100, 400, 400, 'Inner'),
        text('in-inner', 150, 150, 'Inside inner'),
        text('in-outer', 600, 150, 'Inside outer only'),
        text('loose', 2000, 0, 'Outside everything'),
        { id: 'f', type: 'file', file: 'Projects/Plan.md', subpath: '#Goals', x: 150, y: 300, width: 100, height: 40 },
        { id: 'l', type: 'link', url: 'https://example.com/spec', x: 700, y: 700, width: 100, height: 40 },
      ],
      edges: [],
    });
    expect(markdown).toBe(
      [
        '# Canvas',
        '',
        '## Outer',
        '',
        '### Inner',
        '',
        '- Inside inner',
        '- [[Projects/Plan#Goals]]',
        '- Inside outer only',
        '- <https://example.com/spec>',
        '- Outside everything',
        '',
      ].join('\n'),
    );
  });

  it('reads siblings in rows top to bottom, then left to right', () => {
    // Row 1: b (x=300), a (x=0) at slightly different heights; row 2: c below both.
    const order = readingOrder([text('b', 300, 10), text('a', 0, 0), text('c', 100, 200), text('d', 0, 205)]);
    expect(order.map((n) => n.id)).toEqual(['a', 'b', 'd', 'c']);
  });

  it('orders overlapping nodes deterministically and keeps a partly overlapping node outside the group', () => {
    const nodes = [group('g', 0, 0, 300, 300, 'G'), text('x', 10, 10, 'X'), text('y', 10, 10, 'Y'), text('edge', 250, 250, 'Straddles', 100, 100)];
    const first = translateCanvas({ nodes, edges: [] }).markdown;
    const reversed = translateCanvas({ nodes: [...nodes].reverse(), edges: [] }).markdown;
    expect(first).toBe(reversed);
    expect(first).toBe(['# Canvas', '', '## G', '', '- X', '- Y', '- Straddles', ''].join('\n'));
  });

  it('lists edges as connections with labels and directions, and keeps multi-line text', () => {
    const { markdown, edgeCount } = translateCanvas(
      {
        nodes: [text('a', 0, 0, '# Idea\nsecond line'), text('b', 200, 0, 'Plan')],
        edges: [
          { id: 'e1', fromNode: 'a', toNode: 'b', label: 'leads to' },
          { id: 'e2', fromNode: 'b', toNode: 'a', fromEnd: 'arrow', toEnd: 'arrow' },
          { id: 'e3', fromNode: 'a', toNode: 'b', toEnd: 'none' },
        ],
      },
      { title: 'Board' },
    );
    expect(edgeCount).toBe(3);
    expect(markdown).toContain('# Board');
    expect(markdown).toContain('- # Idea\n  second line');
    expect(markdown).toContain('## Connections\n\n- Idea → Plan (leads to)\n- Plan ↔ Idea\n- Idea — Plan');
  });

  it('refuses more than 2,000 edges', () => {
    const nodes = [text('a', 0, 0), text('b', 200, 0)];
    const edges = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `e${i}`, fromNode: 'a', toNode: 'b' }));
    expect(translateCanvas({ nodes, edges: edges(2000) }).edgeCount).toBe(2000);
    expect(() => translateCanvas({ nodes, edges: edges(2001) })).toThrow(expect.objectContaining({ code: 'invalid_canvas' }));
  });

  it('accepts 500 nodes and refuses 501', () => {
    const nodes = (n: number) => Array.from({ length: n }, (_, i) => text(`n${i}`, (i % 20) * 120, Math.floor(i / 20) * 60));
    expect(translateCanvas({ nodes: nodes(500), edges: [] }).nodeCount).toBe(500);
    expect(() => translateCanvas({ nodes: nodes(501), edges: [] })).toThrow(expect.objectContaining({ code: 'invalid_canvas' }));
  });

  it.each([
    ['a non-object', 'nope', '/canvas/'],
    ['an unknown node type', { nodes: [{ id: 'a', type: 'video', x: 0, y: 0, width: 1, height: 1 }] }, '/canvas/nodes/0/type'],
    ['a missing coordinate', { nodes: [{ id: 'a', type: 'text', text: 't', y: 0, width: 1, height: 1 }] }, '/canvas/nodes/0/x'],
    ['a zero width', { nodes: [{ id: 'a', type: 'text', text: 't', x: 0, y: 0, width: 0, height: 1 }] }, '/canvas/nodes/0/width'],
    ['duplicate ids', { nodes: [text('a', 0, 0), text('a', 10, 10)] }, '/canvas/nodes/1/id'],
    ['an edge to an unknown node', { nodes: [text('a', 0, 0)], edges: [{ id: 'e', fromNode: 'a', toNode: 'zz' }] }, '/canvas/edges/0/toNode'],
  ])('refuses %s with a reason', (_label, canvas, pointer) => {
    try {
      translateCanvas(canvas);
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: 'invalid_canvas', extensions: { errors: [{ pointer: expect.stringContaining(pointer) }] } });
    }
  });
});
