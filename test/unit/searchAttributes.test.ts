import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  SEARCH_ATTRIBUTE_KEYS,
  SHIPYARD_KIND,
  SHIPYARD_MOLD,
  SHIPYARD_TENANT,
  shipyardSearchAttributes,
} from '../../core/searchAttributes';

// The search attributes are defined once (core/searchAttributes.ts) and registered in three
// places that cannot import it: the provisioning script, docker-compose and (through the TS
// list) the test suite's globalSetup. These keep the first two equal to it.

const ROOT = path.join(__dirname, '..', '..');
const names = SEARCH_ATTRIBUTE_KEYS.map((key) => key.name).sort();

test('every search attribute is a Keyword, named once', () => {
  expect(SEARCH_ATTRIBUTE_KEYS.map((key) => key.type)).toEqual(SEARCH_ATTRIBUTE_KEYS.map(() => 'KEYWORD'));
  expect(new Set(names).size).toBe(names.length);
  expect(names).toEqual(['ShipyardKind', 'ShipyardMold', 'ShipyardTenant']);
});

test('scripts/lib/temporal.sh registers exactly these (start-dev and the idempotent ensure)', () => {
  const listed = execFileSync(
    'bash',
    [
      '-c',
      'source scripts/lib/common.sh && source scripts/lib/temporal.sh && printf "%s\\n" "${TEMPORAL_SEARCH_ATTRIBUTES[@]}"',
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect(listed.trim().split('\n').sort()).toEqual(names);
});

test("docker-compose.yml's temporal service registers exactly these, as Keyword", () => {
  const compose = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
  const flags = [...compose.matchAll(/-\s+--search-attribute\s*\n\s*-\s+'?([A-Za-z]+)=([A-Za-z]+)'?/g)];
  expect(flags.map(([, name]) => name).sort()).toEqual(names);
  expect(flags.map(([, , type]) => type)).toEqual(names.map(() => 'Keyword'));
});

describe('shipyardSearchAttributes', () => {
  const tenantId = '0b7c6f64-8a0e-4b8e-9d7e-1f2a3b4c5d6e';
  const moldId = '5e4d3c2b-1a0f-4e9d-8c7b-6a5f4e3d2c1b';

  test('a forge run: its kind, tenant id and mold id', () => {
    expect(shipyardSearchAttributes({ kind: 'forge-run', tenantId, moldId })).toEqual([
      { key: SHIPYARD_KIND, value: 'forge-run' },
      { key: SHIPYARD_TENANT, value: tenantId },
      { key: SHIPYARD_MOLD, value: moldId },
    ]);
  });

  test('a probe or a prune: its kind only', () => {
    expect(shipyardSearchAttributes({ kind: 'retention' })).toEqual([{ key: SHIPYARD_KIND, value: 'retention' }]);
  });

  test('refuses anything but a uuid as an id, so no name, slug or email is indexed in the clear', () => {
    for (const value of ['acme-corp', 'deploy-payments', 'dev@forge.test', ''])
      expect(() => shipyardSearchAttributes({ kind: 'forge-run', tenantId: value })).toThrow(/takes a uuid/);
    expect(() => shipyardSearchAttributes({ kind: 'forge-run', tenantId, moldId: 'my-mold' })).toThrow(/ShipyardMold/);
  });
});
