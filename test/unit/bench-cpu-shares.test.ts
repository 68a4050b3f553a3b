// The bench reports what the server's and the load generator's CPUs did during each run
// (bench/probe.ts): these check how it reads that from two snapshots of /proc/stat.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpuSharesBetween } from '../../bench/probe.js';

//          user nice system idle iowait irq softirq steal guest guest_nice
const before = `cpu  900 0 300 5000 0 0 100 200 0 0
cpu0 400 0 100 3000 0 0 50 100 0 0
cpu1 500 0 200 2000 0 0 50 100 0 0
intr 123`;
const after = `cpu  1700 0 500 5300 100 0 200 500 0 0
cpu0 600 0 150 3250 0 0 60 140 0 0
cpu1 1100 0 350 2050 100 0 140 360 0 0
intr 456`;

describe('the bench CPU shares', () => {
  it('splits each CPU time between busy (user, nice, system, irq, softirq), idle (with iowait) and stolen', () => {
    // cpu1: busy 600 + 150 + 90 = 840, idle 50 + 100 = 150, stolen 260, of 1,250 ticks.
    assert.deepEqual(cpuSharesBetween(before, after, 1), { busy: 67, idle: 12, stolen: 21 });
    // cpu0: busy 200 + 50 + 10 = 260, idle 250, stolen 40, of 550.
    assert.deepEqual(cpuSharesBetween(before, after, 0), { busy: 47, idle: 45, stolen: 7 });
  });

  it('reads a kernel without a steal column as never stolen', () => {
    assert.deepEqual(cpuSharesBetween('cpu0 10 0 0 90 0 0 0\n', 'cpu0 60 0 0 140 0 0 0\n', 0), { busy: 50, idle: 50, stolen: 0 });
  });

  it('has nothing to say of a CPU the snapshots lack', () => {
    assert.equal(cpuSharesBetween(before, after, 2), undefined);
  });
});
