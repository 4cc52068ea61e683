// Progress of long operations (vault import/export) on stderr, so stdout stays the JSON result.
// On a terminal: one bar redrawn in place. Otherwise (a pipe, a log file, CI): a plain line now and
// then, and always one when a phase completes, so logs show where it got to.
import type { TransferProgress } from '../../domain/notes/vault-transfer.ts';

type Stream = { isTTY?: boolean; columns?: number; write: (text: string) => unknown };

const PHASES: Record<TransferProgress['phase'], { verb: string; unit: string }> = {
  check: { verb: 'checking', unit: 'files' },
  write: { verb: 'writing', unit: 'notes' },
};

export type ProgressOptions = { stream?: Stream; intervalMs?: number; now?: () => number; unit?: Partial<Record<TransferProgress['phase'], string>> };

export function progressReporter(label: string, options: ProgressOptions = {}): { update: (progress: TransferProgress) => void; end: () => void } {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? (() => performance.now());
  const tty = stream.isTTY === true;
  // A terminal redraws ten times a second; a log gets a line every two seconds at most.
  const interval = options.intervalMs ?? (tty ? 100 : 2_000);
  const started = now();
  let last = tty ? Number.NEGATIVE_INFINITY : started;
  let drawn: string | null = null;
  let completed: string | null = null;

  const describe = ({ phase, done, total }: TransferProgress) => {
    const unit = options.unit?.[phase] ?? PHASES[phase].unit;
    const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
    return { text: `${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${unit}`, percent, unit };
  };
  const elapsed = () => `${((now() - started) / 1000).toFixed(1)} s`;

  const draw = (progress: TransferProgress) => {
    const { text, percent } = describe(progress);
    const width = Math.max(10, Math.min(40, (stream.columns ?? 80) - 60));
    const filled = Math.round((percent / 100) * width);
    const line = `${label} ${PHASES[progress.phase].verb} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${text} ${percent}% ${elapsed()}`;
    stream.write(`\r${line}\u001b[K`);
    drawn = progress.phase;
  };

  return {
    update(progress) {
      const complete = progress.done >= progress.total;
      if (tty) {
        if (drawn !== null && drawn !== progress.phase) {
          // A new phase gets its own bar, drawn at once.
          stream.write('\n');
          drawn = null;
          last = Number.NEGATIVE_INFINITY;
        }
        if (complete || now() - last >= interval) {
          draw(progress);
          last = now();
        }
        return;
      }
      const key = `${progress.phase}:${progress.total}`;
      if (complete) {
        if (completed === key) return;
        completed = key;
        stream.write(`${label}: ${PHASES[progress.phase].verb} done, ${describe(progress).text} (${elapsed()})\n`);
      } else if (now() - last >= interval && progress.done > 0) {
        const { text, percent } = describe(progress);
        stream.write(`${label}: ${PHASES[progress.phase].verb} ${text} (${percent}%, ${elapsed()})\n`);
      } else return;
      last = now();
    },
    end() {
      if (tty && drawn !== null) stream.write('\n');
      drawn = null;
    },
  };
}
