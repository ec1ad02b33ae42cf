import { bench as platformMetrics } from './insights/platformMetrics';

// `npm run bench:insights`: the read time of each /insights endpoint at 100k entities, beside its
// floor (the same statements through raw pg), one benchmark after the other. Each lives in
// scripts/bench/insights/ and exports `bench()`; add the next one to BENCHES (bus factor:
// ./insights/sourceMetrics, DORA: ./insights/dora).
const BENCHES: [string, () => Promise<void>][] = [['platform metrics', platformMetrics]];

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
