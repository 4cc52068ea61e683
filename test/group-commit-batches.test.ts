// What one group-commit transaction takes from a vault's queue (domain/notes/group-commit.ts): at
// most groupCommitLimits.maxItems writes and maxBytes of content (domain/turns.ts takeTurn), and always at least one
// write, however large, so nothing waits forever. test/group-commit.test.ts shows the sharing itself.
import { describe, expect, it } from 'vitest';
import { groupCommitLimits } from '../domain/notes/group-commit.ts';
import { takeTurn } from '../domain/turns.ts';
import { noteLimits } from '../domain/notes/paths.ts';

const queue = (sizes: number[]) => sizes.map((bytes, i) => ({ i, bytes }));

describe('a group commit transaction takes', () => {
  it(`at most ${groupCommitLimits.maxItems} writes, in arrival order, leaving the rest queued`, () => {
    const waiting = queue(Array(250).fill(10));
    const batches = [takeTurn(waiting, groupCommitLimits), takeTurn(waiting, groupCommitLimits), takeTurn(waiting, groupCommitLimits)];
    expect(batches.map((b) => b.length)).toEqual([100, 100, 50]);
    expect(batches.flat().map((w) => w.i)).toEqual(Array.from({ length: 250 }, (_, i) => i));
    expect(waiting).toEqual([]);
  });

  it('at most maxBytes of content: four notes of the largest size, not five', () => {
    expect(4 * noteLimits.maxContentBytes).toBeLessThanOrEqual(groupCommitLimits.maxBytes);
    const waiting = queue(Array(9).fill(noteLimits.maxContentBytes));
    expect([takeTurn(waiting, groupCommitLimits).length, takeTurn(waiting, groupCommitLimits).length, takeTurn(waiting, groupCommitLimits).length]).toEqual([4, 4, 1]);
  });

  it('a write larger than the limit alone, and the small ones after it next', () => {
    const waiting = queue([groupCommitLimits.maxBytes + 1, 10, 10]);
    expect(takeTurn(waiting, groupCommitLimits).map((w) => w.i)).toEqual([0]);
    expect(takeTurn(waiting, groupCommitLimits).map((w) => w.i)).toEqual([1, 2]);
  });
});
