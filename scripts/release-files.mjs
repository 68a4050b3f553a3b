// The files scripts/release.sh writes that are easier to get right in JavaScript than in shell.
//   pin-chart-image VALUES REPOSITORY TAG DIGEST   points the chart's default image at the release,
//       editing the three lines of values.yaml's `image:` block in place (its comments are the
//       chart's documentation: `helm show values` prints them)
//   provenance FILE VERSION REVISION DIRTY STARTED IMAGE_REF CHART_REF   an SLSA v1 provenance
//       predicate (https://slsa.dev/spec/v1.0/provenance) for `cosign attest --type slsaprovenance1`
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SOURCE = 'https://github.com/wasmcloud-metacontroller/wasmcloud-metacontroller';

function pinChartImage(file, repository, tag, digest) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const block = lines.indexOf('image:');
  if (block < 0) throw new Error(`${file}: no top-level image: block`);
  const values = { repository, tag: JSON.stringify(tag), digest: JSON.stringify(digest) };
  for (const [key, value] of Object.entries(values)) {
    // The block's own keys are indented by two spaces; it ends at the next top-level line.
    let at = block + 1;
    while (at < lines.length && !lines[at].startsWith(`  ${key}:`) && !/^\S/.test(lines[at])) at++;
    if (!lines[at]?.startsWith(`  ${key}:`)) throw new Error(`${file}: image.${key} not found`);
    lines[at] = `  ${key}: ${value}`;
  }
  writeFileSync(file, lines.join('\n'));
}

const sha256 = (path) =>
  createHash('sha256')
    .update(readFileSync(resolve(ROOT, path)))
    .digest('hex');
const digestOf = (ref) => ({ sha256: ref.slice(ref.lastIndexOf('@sha256:') + '@sha256:'.length) });

/** Who ran the build: the GitHub Actions run when there is one, else this script on a machine. */
function builder() {
  const { GITHUB_SERVER_URL: server, GITHUB_REPOSITORY: repo, GITHUB_RUN_ID: run, GITHUB_WORKFLOW_REF: workflow } = process.env;
  if (server && repo && run) {
    return { builder: { id: `${server}/${workflow ?? repo}` }, invocationId: `${server}/${repo}/actions/runs/${run}` };
  }
  return { builder: { id: `${SOURCE}/blob/main/scripts/release.sh` } };
}

function provenance(file, version, revision, dirty, startedOn, imageRef, chartRef) {
  const { builder: who, invocationId } = builder();
  const predicate = {
    buildDefinition: {
      buildType: `${SOURCE}/blob/main/scripts/release.sh@v1`,
      externalParameters: { version, source: `git+${SOURCE}@${revision}`, uncommittedChanges: dirty === 'true' },
      internalParameters: { node: process.version, platform: `${process.platform}/${process.arch}` },
      resolvedDependencies: [
        { uri: `git+${SOURCE}@${revision}`, digest: { gitCommit: revision } },
        ...['package-lock.json', 'Dockerfile'].map((path) => ({ uri: path, digest: { sha256: sha256(path) } })),
      ],
    },
    runDetails: {
      builder: who,
      metadata: { ...(invocationId ? { invocationId } : {}), startedOn, finishedOn: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
      byproducts: [
        { name: 'image', uri: imageRef, digest: digestOf(imageRef) },
        { name: 'chart', uri: chartRef, digest: digestOf(chartRef) },
      ],
    },
  };
  writeFileSync(file, `${JSON.stringify(predicate, null, 2)}\n`);
}

const [command, ...args] = process.argv.slice(2);
const commands = { 'pin-chart-image': [pinChartImage, 4], provenance: [provenance, 7] };
const [run, arity] = commands[command] ?? [];
if (!run || args.length !== arity) {
  console.error(
    'usage: release-files.mjs pin-chart-image VALUES REPOSITORY TAG DIGEST | provenance FILE VERSION REVISION DIRTY STARTED IMAGE_REF CHART_REF',
  );
  process.exit(2);
}
run(...args);
