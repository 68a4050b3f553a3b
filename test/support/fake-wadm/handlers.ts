// put, get, list, versions, status and history, after `crates/wadm/src/server/handlers.rs`:
// same checks in the same order, same messages, same reply fields.
import { ManifestParseError, parseManifest } from './parse.js';
import { error, reply, versionRequest, type Deps, type Incoming, type Outcome } from './requests.js';
import { componentDebug, manifestToWire, rustList } from './serialize.js';
import { deployedSharedApps, missingSharedComponents } from './shared.js';
import { NO_STATUS, WAITING } from './status.js';
import type { StoredApp } from './store.js';
import { DESCRIPTION_ANNOTATION, manifestVersion, type Manifest, type Status } from './types.js';
import { firstValidationError, isValidManifestName } from './validate.js';

export function put(deps: Deps, req: Incoming): Outcome {
  let manifest: Manifest;
  try {
    manifest = parseManifest(req.body, req.contentType);
  } catch (e) {
    if (e instanceof ManifestParseError) return error(e.message);
    throw e;
  }
  if (manifestVersion(manifest) === 'latest') {
    return error('invalid manifest version, errors: "latest is not allowed in wadm"');
  }
  const name = manifest.metadata.name.trim();
  if (!isValidManifestName(name)) {
    return error(`Manifest name ${name} contains invalid characters. Manifest names can only contain alphanumeric characters, dashes, and underscores.`);
  }
  const app = deps.store.getOrNew(req.lattice, name);
  const invalid = firstValidationError(manifest);
  if (invalid !== undefined) return error(invalid);

  // Built before the new version is added, so it names the previous current version.
  const missing = missingSharedComponents(manifest, deployedSharedApps(deps.store, req.lattice));
  const suffix = missing.length === 0 ? '' : `, but some shared components are not deployed: ${rustList(missing.map(componentDebug))}`;
  const message = `Successfully put manifest ${name} ${app.currentVersion}${suffix}`;

  const incoming = manifestVersion(manifest);
  if (!app.addVersion(manifest)) return error(`Manifest version ${incoming} already exists`);
  deps.store.save(req.lattice, app);
  const total = app.manifests.size;
  return reply({
    result: total === 1 ? 'created' : 'newversion',
    total_versions: total,
    current_version: app.currentVersion,
    message,
    name,
  });
}

export function get(deps: Deps, req: Incoming): Outcome {
  if (req.name === undefined) return reply(listReply(deps, req.lattice));
  const name = req.name;
  const parsed = versionRequest(req.body, 'get');
  if ('error' in parsed) return parsed.error;
  const app = deps.store.get(req.lattice, name);
  if (app === undefined) return reply({ result: 'notfound', message: `Application with the name ${name} not found` });
  if (parsed.version === null) {
    return reply({ result: 'success', message: `Successfully fetched application ${name}`, manifest: manifestToWire(app.current) });
  }
  const manifest = app.manifests.get(parsed.version);
  if (manifest === undefined) {
    return reply({ result: 'notfound', message: `Application ${name} with version ${parsed.version} doesn't exist` });
  }
  return reply({
    result: 'success',
    message: `Successfully fetched application ${name} ${parsed.version}`,
    manifest: manifestToWire(manifest),
  });
}

function listReply(deps: Deps, lattice: string): object {
  return { result: 'success', message: 'Successfully fetched list of applications', models: summaries(deps, lattice) };
}

/** The deprecated `model.list`: the same summaries as a bare array. */
export function list(deps: Deps, req: Incoming): Outcome {
  return reply(summaries(deps, req.lattice));
}

function summaries(deps: Deps, lattice: string): object[] {
  return deps.store.list(lattice).map((app) => summary(app, deps.board.get(lattice, app.name) ?? WAITING));
}

function summary(app: StoredApp, status: Status): object {
  const deployed = app.deployedManifest;
  return {
    name: app.current.metadata.name,
    version: app.currentVersion,
    description: app.current.metadata.annotations.get(DESCRIPTION_ANNOTATION) ?? null,
    deployed_version: deployed === undefined ? null : manifestVersion(deployed),
    detailed_status: status,
    // Deprecated fields; old clients don't know `waiting`.
    status: status.status.type === 'waiting' ? 'undeployed' : status.status.type,
    status_message: status.status.message ?? '',
  };
}

export function versions(deps: Deps, req: Incoming): Outcome {
  const name = req.name ?? '';
  const app = deps.store.get(req.lattice, name);
  if (app === undefined) {
    return reply({ result: 'notfound', message: `Application with the name ${name} not found`, versions: [] });
  }
  return reply({
    result: 'success',
    message: `Successfully fetched versions for application ${name}`,
    versions: [...app.manifests.keys()].map((version) => ({ version, deployed: app.deployed === version })),
  });
}

/** Reads the last status message; never `notfound`. */
export function status(deps: Deps, req: Incoming): Outcome {
  const name = req.name ?? '';
  return reply({
    result: 'ok',
    message: `Successfully fetched status for application ${name}`,
    status: deps.board.get(req.lattice, name) ?? NO_STATUS,
  });
}

export function history(): Outcome {
  return error('Model deployment history is not currently supported. It may be added in a future version');
}
