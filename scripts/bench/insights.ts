import { bench as dora } from './insights/dora';
import { bench as platformMetrics } from './insights/platformMetrics';
import { bench as sourceMetrics } from './insights/sourceMetrics';

// `npm run bench:insights`: the read time of each /insights endpoint at 100k entities, beside its
// floor (the same statements through raw pg), one benchmark after the other. Each lives in
// scripts/bench/insights/ and exports `bench()`.
const BENCHES: [string, () => Promise<void>][] = [
  ['DORA metrics', dora],
  ['bus factor', sourceMetrics],
  ['platform metrics', platformMetrics],
];

async function main(): Promise<void> {
  for (const [name, bench] of BENCHES) {
    console.log(`\n— ${name}`);
    await bench();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
