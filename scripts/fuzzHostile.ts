import { performance } from 'node:perf_hooks';
import { bodyText, HOSTILE_REQUESTS } from '../test/support/hostileBodies';

// The hostile half of `npm run fuzz`: each hostile request (test/support/hostileBodies.ts) is sent
// to the fuzzed API while /healthz is probed back to back. Fails when a hostile request gets
// anything but one of its expected 4xx, or when a probe waits longer than the budget while it is
// in flight (the API's event loop was held). Usage: tsx scripts/fuzzHostile.ts BASE_URL TOKEN

const HEALTHZ_BUDGET_MS = Number(process.env.FUZZ_HEALTHZ_BUDGET_MS ?? 200);

async function probeWhile(base: string, pending: Promise<unknown>): Promise<number> {
  let settled = false;
  void pending.finally(() => (settled = true)).catch(() => undefined);
  let slowest = 0;
  while (!settled) {
    const before = performance.now();
    const res = await fetch(`${base}/healthz`);
    await res.arrayBuffer();
    slowest = Math.max(slowest, performance.now() - before);
  }
  return slowest;
}

async function main([base, token]: string[]): Promise<void> {
  if (!base || !token) throw new Error('usage: fuzzHostile.ts BASE_URL TOKEN');
  let failures = 0;
  for (const hostile of HOSTILE_REQUESTS) {
    const started = performance.now();
    const sent = fetch(`${base}/api/v1${hostile.path}`, {
      method: hostile.method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: bodyText(hostile),
    }).then(async (res) => ({ status: res.status, text: await res.text() }));
    const [{ status, text }, slowestProbe] = await Promise.all([sent, probeWhile(base, sent)]);
    const took = performance.now() - started;
    const problems = [
      ...(hostile.expect.includes(status) ? [] : [`answered ${status}, expected ${hostile.expect.join(' or ')}`]),
      ...(slowestProbe > HEALTHZ_BUDGET_MS
        ? [`/healthz waited ${slowestProbe.toFixed(0)} ms (budget ${HEALTHZ_BUDGET_MS})`]
        : []),
    ];
    failures += problems.length ? 1 : 0;
    console.log(
      `${problems.length ? 'FAIL' : 'ok  '} ${hostile.name}: ${status} in ${took.toFixed(0)} ms, slowest /healthz ${slowestProbe.toFixed(0)} ms${problems.length ? ` (${problems.join('; ')}): ${text.slice(0, 200)}` : ''}`,
    );
  }
  console.log(`hostile bodies: ${HOSTILE_REQUESTS.length - failures} of ${HOSTILE_REQUESTS.length} passed`);
  if (failures) process.exitCode = 1;
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
