// Search attributes are defined once (domain/automation/search-attributes.ts). The dev server's
// flags are derived from that list in code; docker-compose.yml is not code, so this holds it to the list.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { searchAttributeKeys } from '../../domain/automation/search-attributes.ts';
import { searchAttributes } from '../../platform/local-stack/temporal-dev-server.ts';
import * as workflowKeys from '../../workflows/search-attributes.ts';

const defined = searchAttributeKeys.map((key) => key.name).sort();

describe('search attributes', () => {
  it('are what the dev server registers and what workflow code sets', () => {
    expect(Object.keys(searchAttributes).sort()).toEqual(defined);
    expect(Object.values(workflowKeys).map((key) => key.name).sort()).toEqual(defined);
  });

  it('are exactly the ones docker-compose.yml creates, with the same types', () => {
    const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8')) as { services: Record<string, { command: string[] }> };
    const script = compose.services['temporal-search-attributes']!.command.join('\n');
    const listed = /for attr in ([^;]+);/.exec(script)?.[1]?.trim().split(/\s+/) ?? [];
    expect(listed.map((pair) => pair.split(':')[0]).sort()).toEqual(defined);
    expect(Object.fromEntries(listed.map((pair) => pair.split(':') as [string, string]))).toEqual(searchAttributes);
  });
});
