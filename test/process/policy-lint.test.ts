// The lattice policy lint: lattices `a` and `a-…` collide in wadm 0.21 (collisions.ts), so a policy
// that can produce both is warned about, or refused with LATTICE_POLICY_STRICT=true: at start (one
// line, exit 1) and on reload (the previous policy stays). The service runs as its own process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describePair, globsIntersect, prefixPairs } from '../../src/core/policy-lint.js';
import { parsePolicy } from '../../src/core/tenancy.js';
import { freePort } from '../support/ports.js';
import { wasmApp, hookRequest } from '../support/resources.js';
import { startServiceProcess } from '../support/service-process.js';

const TEAMS = 'rules:\n  - namespaces: ["team", "team-a"]\n    lattices: ["{namespace}"]\n';
const TEAM_ONLY = 'rules:\n  - namespaces: ["team"]\n    lattices: ["{namespace}"]\n';
const NO_DASH = 'rules:\n  - namespaces: ["alpha", "beta"]\n    lattices: ["{namespace}", "shared"]\n';

const pairsOf = (text: string) => prefixPairs(parsePolicy(text)).map((p) => [p.shorter.glob, p.longer.glob]);

describe('lattice pairs a policy can produce', () => {
  it('finds team / team-a through {namespace}, literal pairs, globs, and nothing in a policy without such pairs', () => {
    assert.deepEqual(pairsOf(TEAMS), [['team', 'team-a']]);
    assert.match(
      describePair(prefixPairs(parsePolicy(TEAMS))[0]!),
      /\{namespace\} of namespaces "team" and \{namespace\} of namespaces "team-a"/,
    );
    assert.deepEqual(pairsOf('rules:\n  - namespaces: ["x"]\n    lattices: ["ks", "ks-web", "prod"]\n'), [['ks', 'ks-web']]);
    assert.deepEqual(pairsOf('rules:\n  - namespaces: ["team-*"]\n    lattices: ["{namespace}"]\n'), [['team-*', 'team-*']]);
    assert.match(
      describePair(prefixPairs(parsePolicy('rules:\n  - namespaces: ["team-*"]\n    lattices: ["{namespace}"]\n'))[0]!),
      /^\{namespace\} of namespaces "team-\*" can produce a lattice and that lattice followed by "-…"/,
    );
    assert.deepEqual(
      pairsOf('rules:\n  - namespaces: ["dev"]\n    lattices: ["{namespace}"]\n  - namespaces: ["*"]\n    lattices: ["dev-shared"]\n'),
      [['dev', 'dev-shared']],
    );
    assert.deepEqual(pairsOf(NO_DASH), []);
  });

  it('decides glob intersection as brute force over short strings does', () => {
    const glob = fc.stringMatching(/^[ab*-]{0,4}$/);
    const matches = (g: string, s: string) => new RegExp(`^${g.replace(/-/g, '\\-').replace(/\*/g, '.*')}$`).test(s);
    const words = ['', 'a', 'b', '-'];
    for (let n = 0; n < 5; n++) words.push(...words.filter((w) => w.length === n).flatMap((w) => ['a', 'b', '-'].map((c) => w + c)));
    const all = [...new Set(words)];
    fc.assert(
      fc.property(glob, glob, (p, q) => {
        // Every common string of up to 5 characters must be seen; a miss (no short witness) is not asserted.
        const witness = all.some((w) => matches(p, w) && matches(q, w));
        if (witness) assert.equal(globsIntersect(p, q), true, `${p} ∩ ${q}`);
      }),
      { seed: 1103, numRuns: 500 },
    );
  });
});

function policyFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'lint-')), 'policy.yaml');
  writeFileSync(path, text);
  return path;
}

describe('the service and a colliding policy', () => {
  it('warns at start, naming the pair, and serves', async () => {
    const service = await startServiceProcess({ NATS_URL: 'nats://127.0.0.1:1', LATTICE_POLICY_FILE: policyFile(TEAMS) });
    try {
      const warnings = service.logs.filter((l) => l['level'] === 40 && String(l['msg']).includes('collide in wadm'));
      assert.equal(warnings.length, 1);
      assert.match(String(warnings[0]!['pair']), /namespaces "team" and .*namespaces "team-a"/);
    } finally {
      await service.stop();
    }
  });

  it('with LATTICE_POLICY_STRICT=true refuses to start: one line, exit 1', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, '../../src/main.ts')], {
      env: {
        ...process.env,
        PORT: String(port),
        NATS_URL: 'nats://127.0.0.1:1',
        LATTICE_POLICY_FILE: policyFile(TEAMS),
        LATTICE_POLICY_STRICT: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on('exit', done));
    assert.equal(code, 1);
    assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
    assert.match(stderr, /can produce lattices that collide in wadm .*"team" and .*"team-a"/);
  });

  it('with LATTICE_POLICY_STRICT=true keeps the previous policy when a reload would collide', async () => {
    const path = policyFile(TEAM_ONLY);
    // No NATS and no grace (wiring/readiness.ts): a lone replica answers at once.
    const service = await startServiceProcess({
      NATS_URL: 'nats://127.0.0.1:1',
      NATS_OUTAGE_GRACE: '0s',
      LATTICE_POLICY_FILE: path,
      LATTICE_POLICY_STRICT: 'true',
    });
    try {
      writeFileSync(path, TEAMS);
      while (!service.logs.some((l) => l['level'] === 50 && String(l['err']).includes('collide in wadm')))
        await new Promise((r) => setTimeout(r, 50));
      const request = hookRequest(wasmApp().inLattice('team-a').named('app').inNamespace('team-a').unannotated().build());
      const answer = await fetch(`${service.url}/sync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request),
      });
      const status = ((await answer.json()) as { status: { conditions: { type: string; reason: string }[] } }).status;
      assert.equal(status.conditions.find((c) => c.type === 'Ready')!.reason, 'LatticeNotAllowed', 'team-a is still not allowed');
    } finally {
      await service.stop();
    }
  });
});
