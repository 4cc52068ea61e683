// POST /intelligence/education/standards/crosswalk: candidate alignments between two CASE framework
// slices (domain/education/crosswalk.ts). Deterministic and read-only: no model, no metering, no
// database write; it answers with no provider configured. The answer names items only by the
// identifiers the caller sent; every candidate is a proposal for a qualified reviewer.
import { CROSSWALK_DEFAULTS, CROSSWALK_LIMITS, crosswalkInputSchema, envelope, runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { OperationDoc } from '../../../openapi.ts';
import { deterministicRow } from './row.ts';
import type { OperationExamples } from '../../../openapi-examples.ts';
import { crosswalkStandards as crosswalk } from '../../../../domain/education/crosswalk.ts';
import type { CrosswalkInput } from '@hosted-notes/runtime-sdk';

const KIND = runtimeOperations.crosswalkStandards.kind;

const docs: OperationDoc = {
  responses: {
    200: { description: 'Proposed alignment candidates with confidence, signals, cautions and rationale (service.education-standards-crosswalk envelope).' },
  },
};

const exampleRequest = {
  source: {
    framework: { identifier: 'c6496676-d7cb-11e8-824f-0242ac160002', title: 'Common Core State Standards for Mathematics', publisher: 'NGA Center and CCSSO' },
    items: [
      {
        identifier: '6b9ee8e6-d7cc-11e8-824f-0242ac160002',
        humanCodingScheme: '4.NF.A.1',
        fullStatement:
          'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b) by using visual fraction models, with attention to how the number and ' +
          'size of the parts differ even though the two fractions themselves are the same size.',
        educationLevel: ['04'],
        subject: ['Mathematics'],
        domain: 'Number and Operations—Fractions',
        conceptKeywords: ['equivalent fractions'],
      },
      {
        identifier: '6b9ef1a4-d7cc-11e8-824f-0242ac160002',
        humanCodingScheme: '4.NF.A.2',
        fullStatement:
          'Compare two fractions with different numerators and different denominators, e.g., by creating common denominators or numerators, or by ' +
          'comparing to a benchmark fraction such as 1/2.',
        educationLevel: ['04'],
        subject: ['Mathematics'],
        domain: 'Number and Operations—Fractions',
        conceptKeywords: ['comparing fractions'],
      },
    ],
  },
  target: {
    framework: { identifier: '3f1c9a52-8e0b-4d5e-9a77-2c4b1d6e8f90', title: 'State Mathematics Standards (2026)', publisher: 'State Department of Education' },
    items: [
      {
        identifier: 'a41d0c3e-5b7f-4e21-8c9d-0f1e2d3c4b5a',
        humanCodingScheme: 'MA.4.NF.A.1',
        fullStatement:
          'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b) using visual fraction models, attending to how the number and size ' +
          'of the parts differ while the fractions are the same size.',
        educationLevel: ['4'],
        subject: ['Math'],
        domain: 'Number and Operations - Fractions',
        conceptKeywords: ['equivalent fraction'],
      },
      {
        identifier: 'b52e1d4f-6c80-4f32-9dae-1a2f3e4d5c6b',
        humanCodingScheme: 'MA.5.NF.A.1',
        fullStatement: 'Add and subtract fractions with unlike denominators (including mixed numbers) by replacing given fractions with equivalent fractions.',
        educationLevel: ['5'],
        subject: ['Math'],
        domain: 'Number and Operations - Fractions',
        conceptKeywords: ['equivalent fractions', 'adding fractions'],
      },
    ],
  },
  options: { minConfidence: 0.35, maxCandidatesPerItem: 2 },
} satisfies CrosswalkInput;

const examples: OperationExamples = {
  request: { value: exampleRequest },
  // Computed by the operation itself, so the example is exactly what the service answers.
  responses: { 200: { value: envelope(KIND, crosswalk(crosswalkInputSchema.parse(exampleRequest))) } },
};

export const crosswalkStandards = deterministicRow('crosswalkStandards', {
  bodyLimit: CROSSWALK_LIMITS.bodyBytes,
  description:
    'Needs intelligence.execute; no model, no metering, no Idempotency-Key, nothing stored. Two slices of at most ' +
    `${CROSSWALK_LIMITS.items.toLocaleString('en-US')} CASE items each are compared by CASE identifier (decisive), statement words, normalized ` +
    'code, grade, subject, domain and concept keywords; each candidate carries its confidence, the signals behind it, cautions and a fixed-text ' +
    `rationale. At most maxCandidatesPerItem (default ${CROSSWALK_DEFAULTS.maxCandidatesPerItem}) per source item at or above minConfidence ` +
    `(default ${CROSSWALK_DEFAULTS.minConfidence}). The same slices in any order give the same answer byte for byte. Items are named only by ` +
    'their identifiers: no statement, code, title or keyword is returned. Every candidate is proposed and requires qualified human review.',
  body: crosswalkInputSchema,
  problems: ['payload_too_large'],
  answer: crosswalk,
  docs,
  examples,
});
