// What a release is made of: one SemVer version in package.json, reported by `--version`, the
// startup log line and the build_info metric, from the sources (tsx) and from the compiled dist/
// laid out as in the image; the LICENSE and the CHANGELOG that the release notes come from.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Metrics } from '../../src/plumbing/metrics.js';
import { startServiceProcess } from '../support/service-process.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
const VERSION = (JSON.parse(read('package.json')) as { version: string }).version;
// SemVer 2.0.0's own grammar, without build metadata (an image tag cannot carry "+").
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;

const scratch = mkdtempSync(join(tmpdir(), 'releases-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe('the version', () => {
  it('is SemVer, written once in package.json', () => {
    assert.match(VERSION, SEMVER);
  });

  it('is what `--version` and `-V` print, from the sources', () => {
    for (const flag of ['--version', '-V']) {
      // From another directory: package.json is found next to the code, not in the working directory.
      const run = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), resolve(ROOT, 'src/main.ts'), flag], {
        cwd: scratch,
        encoding: 'utf8',
      });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, `${VERSION}\n`);
    }
  });

  it('is what the built program prints with package.json next to dist/, as the image lays them out', () => {
    const app = join(scratch, 'app');
    const build = spawnSync(process.execPath, [resolve(ROOT, 'scripts/build.mjs'), join(app, 'dist/main.js')], { encoding: 'utf8' });
    assert.equal(build.status, 0, build.stdout + build.stderr);
    copyFileSync(resolve(ROOT, 'package.json'), join(app, 'package.json'));
    symlinkSync(resolve(ROOT, 'node_modules'), join(app, 'node_modules'));
    // A configuration the service would refuse: --version must not need a valid one.
    const run = spawnSync(process.execPath, ['dist/main.js', '--version'], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, LOG_LEVEL: 'nonsense' },
    });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, `${VERSION}\n`);
  });

  it('is found in the image as in the test above: package.json in /app next to dist/', () => {
    const dockerfile = read('Dockerfile');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    assert.match(runtime, /^WORKDIR \/app$/m);
    assert.match(runtime, /^COPY --from=build \/app\/dist \.\/dist$/m);
    assert.match(runtime, /^COPY package\.json package-lock\.json \.\/$/m);
  });

  it('is in the first log line of the service, with the Node.js version', async () => {
    // No NATS at this address: the service starts anyway (readiness stays off).
    const service = await startServiceProcess({ NATS_URL: 'nats://127.0.0.1:1' });
    try {
      const first = service.logs[0]!;
      assert.equal(first['version'], VERSION);
      assert.equal(first['node'], process.version);
      assert.match(String(first['msg']), new RegExp(`^starting wasmcloud-metacontroller ${VERSION.replaceAll('.', '\\.')}$`));
      assert.equal(await service.metric(`build_info{version="${VERSION}",node="${process.version}"}`), 1);
    } finally {
      await service.stop();
    }
  });

  it('labels the build_info gauge, whose only series is 1', async () => {
    const families = await new Metrics().registry.getMetricsAsJSON();
    const info = families.find((f) => f.name === 'wasmcloud_metacontroller_build_info')!;
    assert.deepEqual(info.values, [{ value: 1, labels: { version: VERSION, node: process.version } }]);
  });
});

describe('LICENSE and CHANGELOG.md', () => {
  it('license the project under Apache-2.0, in full, as package.json says', () => {
    assert.equal((JSON.parse(read('package.json')) as { license: string }).license, 'Apache-2.0');
    const license = read('LICENSE');
    assert.match(license, /^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\//);
    for (let section = 1; section <= 9; section++) assert.match(license, new RegExp(`\\n\\s*${section}\\. [A-Z]`), `section ${section}`);
    assert.match(license, /END OF TERMS AND CONDITIONS/);
  });

  it('keep a changelog: Unreleased first, then a section for the version in package.json, newest first', () => {
    const changelog = read('CHANGELOG.md');
    const sections = [...changelog.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((m) => m[1]!);
    assert.equal(sections[0], 'Unreleased');
    assert.ok(sections.includes(VERSION), `CHANGELOG.md has no section for ${VERSION}`);
    const released = sections.slice(1);
    for (const v of released) assert.match(v, SEMVER);
    const order = (v: string) => v.split(/[.-]/).slice(0, 3).map(Number);
    const sorted = [...released].sort((a, b) => {
      const [x, y] = [order(a), order(b)];
      return y[0]! - x[0]! || y[1]! - x[1]! || y[2]! - x[2]!;
    });
    assert.deepEqual(released, sorted);
    for (const v of sections)
      assert.match(changelog, new RegExp(`^\\[${v.replaceAll('.', '\\.')}\\]: https://`, 'm'), `no link for [${v}]`);
  });
});

describe("CHANGELOG.md's links", () => {
  it('name the commit of a version that was never tagged (its fixture says which), not a tag that does not exist', () => {
    const changelog = read('CHANGELOG.md');
    const link = (section: string) => new RegExp(`^\\[${section.replaceAll('.', '\\.')}\\]: (\\S+)$`, 'm').exec(changelog)?.[1];
    const fixture = JSON.parse(read('test/fixtures/releases/0.1.0/release.json')) as { commit: string; why: string };
    assert.match(fixture.why, /There is no tag v0\.1\.0/);
    const repository = 'https://github.com/wasmcloud-metacontroller/wasmcloud-metacontroller';
    assert.equal(link('0.1.0'), `${repository}/tree/${fixture.commit}`);
    assert.doesNotMatch(changelog, /\bv0\.1\.0\b/, 'no link to the tag v0.1.0 (compare/v0.1.0... or releases/tag/v0.1.0)');
  });
});

describe('scripts/release-notes.sh', () => {
  const notes = (version: string) => spawnSync('bash', [resolve(ROOT, 'scripts/release-notes.sh'), version], { encoding: 'utf8' });

  it('prints the section of one version, without its heading and up to the next one', () => {
    const run = notes(VERSION);
    assert.equal(run.status, 0, run.stderr);
    const section = read('CHANGELOG.md')
      .split(/^## /m)
      .find((s) => s.startsWith(`[${VERSION}]`))!;
    const body = section
      .slice(section.indexOf('\n') + 1)
      .replace(/^\[[^\]]+\]: .*$/gm, '')
      .trim();
    assert.equal(run.stdout, `${body}\n`);
    assert.doesNotMatch(run.stdout, /^## /m);
  });

  it('fails for a version without a section, including a prefix of one', () => {
    for (const version of ['9.9.9', VERSION.split('.').slice(0, 2).join('.')]) {
      const run = notes(version);
      assert.equal(run.status, 1);
      assert.equal(run.stdout, '');
      assert.match(run.stderr, new RegExp(`no notes for ${version.replaceAll('.', '\\.')}`));
    }
  });
});
