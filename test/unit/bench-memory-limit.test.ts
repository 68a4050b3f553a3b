// The bench runs the servers it measures under the pod's memory limit (bench/memory-limit.ts):
// these check how it reads that limit and finds where to put a server, without touching cgroups.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bytesOf, deploymentMemoryLimit, memoryLimit, placementFrom } from '../../bench/memory-limit.js';

describe('the bench memory limit', () => {
  it('reads Kubernetes memory quantities', () => {
    assert.equal(bytesOf('512Mi'), 512 * 2 ** 20);
    assert.equal(bytesOf('1Gi'), 2 ** 30);
    assert.equal(bytesOf('268435456'), 268435456);
    assert.equal(bytesOf('1G'), 1e9);
    assert.throws(() => bytesOf('512MB'), /512MB is not a memory quantity/);
    assert.throws(() => bytesOf('0.5Gi'), /not a memory quantity/);
  });

  it("takes the Deployment's own limit, a quantity it can read", () => {
    assert.ok(bytesOf(deploymentMemoryLimit()) >= 128 * 2 ** 20);
  });

  it('runs servers without a limit when told to', () => {
    assert.deepEqual(memoryLimit('none'), { note: 'none (BENCH_MEMORY_LIMIT=none)' });
  });

  it("puts a server below the bench's own memory cgroup, v1 or v2", () => {
    const v1 = '5:cpu,cpuacct:/\n4:memory:/process_api/abc\n0::/\n';
    assert.deepEqual(placementFrom(v1), { parent: '/sys/fs/cgroup/memory/process_api/abc', limitFile: 'memory.limit_in_bytes' });
    assert.deepEqual(placementFrom('0::/user.slice/bench.scope\n'), {
      parent: '/sys/fs/cgroup/user.slice/bench.scope',
      limitFile: 'memory.max',
    });
    assert.deepEqual(placementFrom('0::/\n'), { parent: '/sys/fs/cgroup', limitFile: 'memory.max' });
    assert.throws(() => placementFrom('1:name=systemd:/\n'), /no memory cgroup/);
  });
});
