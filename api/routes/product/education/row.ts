// One row of the education operations' table (index.ts): what an operation states beyond the SDK's
// operation table. The helpers check a row against that table when the module loads.
import type { z } from 'zod';
import { runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { DtoOf, RuntimeOperationName } from '@hosted-notes/runtime-sdk';
import type { ErrorCode } from '../../../../domain/errors.ts';
import type { StructuredOperation, StructuredResult } from '../../../../domain/intelligence/generation.ts';
import type { OperationDoc } from '../../../openapi.ts';
import type { OperationExamples } from '../../../openapi-examples.ts';

/** What every row states besides its answer. */
type RowDocs<I> = {
  /** The body limit in bytes: the largest valid body, in multi-byte scripts, fits. */
  bodyLimit: number;
  /** The OpenAPI description (the summary is the operation table's). */
  description: string;
  body: z.ZodType<I>;
  /** Refusals of its own, beyond the chain's, the metered and the keyed ones (derived from the table). */
  problems: readonly ErrorCode[];
  docs: OperationDoc;
  examples: OperationExamples;
};

/** The data of a metered answer besides what every one carries (generationId, model, receipt, replayed). */
type MeteredData<N extends RuntimeOperationName> = Omit<DtoOf<(typeof runtimeOperations)[N]['kind']>, 'generationId' | 'model' | 'receipt' | 'replayed'>;

export type DeterministicRow<N extends RuntimeOperationName, I> = RowDocs<I> & { answer(input: I): DtoOf<(typeof runtimeOperations)[N]['kind']> };
export type MeteredRow<N extends RuntimeOperationName, I, O> = RowDocs<I> & {
  /** Refusals before anything is reserved (learner-record language, evidence rules). */
  check(input: I): void;
  /** The domain's structured operation (it meters under the table's metered kind). */
  operation: StructuredOperation<I, O>;
  /** The operation's data from its checked result (and the run, for refusals that name the receipt). */
  answer(result: O, input: I, run: StructuredResult<O>): MeteredData<N>;
};

export type Row = { kind: 'deterministic'; row: DeterministicRow<never, unknown> } | { kind: 'metered'; row: MeteredRow<never, unknown, unknown> };

/** A deterministic education row. */
export function deterministicRow<N extends RuntimeOperationName, I>(name: N, row: DeterministicRow<N, I>): Row & { name: N } {
  if (runtimeOperations[name].metered !== false) throw new Error(`${name} is metered in the operation table`);
  return { name, kind: 'deterministic', row: row as unknown as DeterministicRow<never, unknown> };
}

/** A metered education row (the table gives it a metered kind: its receipts' operation). */
export function meteredRow<N extends RuntimeOperationName, I, O>(name: N, row: MeteredRow<N, I, O>): Row & { name: N } {
  if (runtimeOperations[name].metered === false) throw new Error(`${name} is not metered in the operation table`);
  return { name, kind: 'metered', row: row as unknown as MeteredRow<never, unknown, unknown> };
}

