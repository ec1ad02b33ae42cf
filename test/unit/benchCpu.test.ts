import { meterCpu, processCpuNs } from '../../scripts/bench/cpu';

// bench:http's CPU columns: the scheduler's per-thread run time must add up to what the kernel
// accounts to the process, or the figures printed beside each case mean nothing.

/** Keeps this thread busy until the process has used `ms` more of CPU. */
function spin(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const { user, system } = process.cpuUsage(start);
    if (user + system >= ms * 1000) return;
  }
}

test('a process CPU time summed over its threads follows what the kernel accounts to it', () => {
  const before = processCpuNs(process.pid);
  const usage = process.cpuUsage();
  spin(60);
  const byThreads = (processCpuNs(process.pid) - before) / 1e6;
  const byKernel = (({ user, system }) => (user + system) / 1000)(process.cpuUsage(usage));
  expect(byThreads).toBeGreaterThan(byKernel * 0.8);
  expect(byThreads).toBeLessThan(byKernel * 1.25);
});

test('meterCpu charges a busy stretch to the driver and to a server given by pid, and nothing to a missing one', () => {
  const asServer = meterCpu(process.pid);
  const noServer = meterCpu();
  spin(60);
  const spent = asServer();
  expect(spent.driver).toBeGreaterThanOrEqual(60_000);
  expect(spent.server).toBeGreaterThan(48_000);
  expect(noServer().server).toBe(0);
  expect(processCpuNs(2 ** 22 + 1)).toBe(0); // above Linux's highest pid: no such process
});
