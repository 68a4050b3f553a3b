// `convert FILE --to v2`: WasmCloudApplications or wadm manifests in, wasmCloud v2 resources (YAML)
// on stdout, the loss report on stderr. The exit code gates CI: 0 when the output runs as converted
// (mapped or approximated), 3 when something was dropped or needs input, 1 when the input is
// invalid, 2 when a flag value is.
import yaml from 'js-yaml';
import { API_VERSION, convertManifest, KIND } from '../convert/oam.js';
import { v2Problems } from '../convert/check.js';
import { convertToV2 } from '../convert/to-v2.js';
import { EXIT_INVALID, exitCodeOf, formatReport, summarize, type Finding } from '../convert/report.js';
import { ALLOWED_HOST } from '../schema/v2.js';
import { check, readAll, type Options, type Outcome } from './commands.js';

const TARGETS = ['v2'] as const;
const WADM_API_VERSION = 'core.oam.dev/v1beta1';
const ALLOWED_HOST_PATTERN = new RegExp(ALLOWED_HOST);
/** NATS's rule for object store names; config.buckets is a comma-separated list of them. */
const BUCKET_NAME = /^[A-Za-z0-9_-]+$/;
const LABEL_KEY = /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;

export interface ConvertToOptions extends Options {
  to: string;
  /** --namespace as given, or undefined: then each resource keeps its own namespace, or none. */
  namespaceGiven: string | undefined;
  httpHost: string | undefined;
  allowHosts: string[];
  blobstoreBuckets: string[];
  hostgroupFromRequirement: string | undefined;
}

export function convertTo(file: string, options: ConvertToOptions): Outcome {
  if (!(TARGETS as readonly string[]).includes(options.to)) return usage(`--to ${JSON.stringify(options.to)}: the only target is v2`);
  if (options.httpHost !== undefined && !/^[^\s/]+$/.test(options.httpHost))
    return usage('--http-host: give a host name, without scheme or path');
  const badHost = options.allowHosts.find((host) => !ALLOWED_HOST_PATTERN.test(host));
  if (badHost !== undefined)
    return usage(`--allow-host ${JSON.stringify(badHost)}: use *, host[:port], scheme://host[:port] or *.suffix (no path)`);
  const badBucket = options.blobstoreBuckets.find((bucket) => !BUCKET_NAME.test(bucket));
  if (badBucket !== undefined)
    return usage(`--blobstore-bucket ${JSON.stringify(badBucket)}: a JetStream bucket name has only letters, digits, - and _`);
  const group = options.hostgroupFromRequirement;
  if (group !== undefined && !LABEL_KEY.test(group))
    return usage(`--hostgroup-from-requirement ${JSON.stringify(group)}: give the key of a spread requirement, e.g. region`);
  const resources: unknown[] = [];
  const reports: string[] = [];
  const problems: string[] = [];
  const all: Finding[] = [];
  for (const doc of readAll(file)) {
    const value = doc.value as { apiVersion?: unknown; kind?: unknown; metadata?: { namespace?: unknown } } | null;
    const fromWadm = value?.apiVersion === WADM_API_VERSION && value.kind === 'Application';
    const resource = fromWadm ? convertManifest(value as object) : value;
    const checked = check({ where: doc.where, value: resource }, options);
    if (!checked.ok) {
      const hint = value?.apiVersion !== API_VERSION && !fromWadm ? ` (expected a ${KIND} or a wadm ${WADM_API_VERSION} Application)` : '';
      problems.push(...checked.problems.map((p) => `${doc.where}: ${checked.id}: ${p}${hint}`));
      continue;
    }
    const own = typeof value?.metadata?.namespace === 'string' ? value.metadata.namespace : undefined;
    const namespace = own ?? options.namespaceGiven;
    const { httpHost, allowHosts, blobstoreBuckets, hostgroupFromRequirement } = options;
    const conversion = convertToV2(checked.validation.app, { namespace, httpHost, allowHosts, blobstoreBuckets, hostgroupFromRequirement });
    resources.push(...conversion.resources);
    all.push(...conversion.findings);
    const made = conversion.resources.map((r) => r.metadata.name).join(', ') || 'nothing';
    reports.push(
      formatReport(
        `${doc.where}: ${fromWadm ? 'wadm Application' : KIND} ${checked.validation.app.ref.name} → WorkloadDeployment ${made}`,
        conversion.findings,
      ),
    );
  }
  if (problems.length > 0) return { stdout: '', stderr: `invalid input:\n${problems.join('\n')}\n`, code: EXIT_INVALID };
  if (reports.length === 0) return { stdout: '', stderr: 'no documents found\n', code: EXIT_INVALID };
  const invalid = v2Problems(resources);
  if (invalid.length > 0)
    return { stdout: '', stderr: `the converted resources are not valid:\n${invalid.join('\n')}\n`, code: EXIT_INVALID };
  const stdout = resources.map((r) => yaml.dump(r, { lineWidth: -1, noRefs: true })).join('---\n');
  return { stdout, stderr: `${reports.join('')}${summarize(all)}\n`, code: exitCodeOf(all) };
}

function usage(message: string): Outcome {
  return { stdout: '', stderr: `${message}\n`, code: 2 };
}
