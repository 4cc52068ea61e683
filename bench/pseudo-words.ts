// Deterministic text for the benches: a xorshift generator and a vocabulary of pseudo-words drawn
// from it, so every run seeds the same corpus.

/** A xorshift generator in [0, 1), the same sequence for the same seed. */
export function xorshift(seed: number): () => number {
  let x = seed | 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** `count` pseudo-words of 3–10 letters drawn from `next`. */
export function pseudoWords(next: () => number, count: number): string[] {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  return Array.from({ length: count }, () => Array.from({ length: 3 + Math.floor(next() * 8) }, () => letters[Math.floor(next() * 26)]).join(''));
}
