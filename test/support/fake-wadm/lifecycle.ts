// deploy, undeploy and del (`handlers.rs::deploy_model`, `undeploy_model`, `delete_model`).
// Note: some deploy errors are full `DeployModelResponse`s (with `name` and `version`), not the
// two-key `send_error` shape — wadm builds them that way.
import { error, reply, undeployRequest, versionRequest, type Deps, type Incoming, type Outcome } from './requests.js';
import { rustList, rustStr } from './serialize.js';
import { deployedSharedApps, missingSharedComponents } from './shared.js';
import type { StoredApp } from './store.js';
import { manifestVersion, type Manifest } from './types.js';

export function deploy(deps: Deps, req: Incoming): Outcome {
  const name = req.name ?? '';
  const parsed = versionRequest(req.body, 'deploy');
  if ('error' in parsed) return parsed.error;
  const { version } = parsed;
  const app = deps.store.get(req.lattice, name);
  if (app === undefined) {
    return reply({ result: 'notfound', message: `Application with the name ${name} not found`, name, version });
  }
  const staged = version === null || version === 'latest' ? app.current : app.manifests.get(version);
  if (staged === undefined) {
    const message = `Application with the name '${name}' does not have a version '${version}' to deploy`;
    return reply({ result: 'error', message, name, version });
  }
  const conflict = idConflict(deps, req.lattice, name, staged);
  if (conflict !== undefined) return error(conflict);
  const missing = missingSharedComponents(staged, deployedSharedApps(deps.store, req.lattice));
  if (missing.length > 0) {
    const names = rustList(missing.map((c) => rustStr(c.name)));
    return error(`Application contains shared components that are not deployed in other applications: ${names}`);
  }
  app.deploy(version);
  deps.store.save(req.lattice, app);
  const deployed = app.deployedManifest ?? staged;
  const deployedVersion = manifestVersion(deployed);
  return reply(
    { result: 'acknowledged', message: `Successfully deployed application ${name} ${deployedVersion}`, name, version: deployedVersion },
    () => deps.board.deployed(req.lattice, deployed),
  );
}

/** An explicit component `id` may be deployed by one app only. */
function idConflict(deps: Deps, lattice: string, name: string, staged: Manifest): string | undefined {
  const owners = new Map<string, string>();
  for (const other of deps.store.list(lattice)) {
    if (other.name === name) continue; // an upgrade may keep its own ids
    for (const c of other.deployedManifest?.spec.components ?? []) {
      if (c.properties.id !== undefined) owners.set(c.properties.id, other.name);
    }
  }
  for (const c of staged.spec.components) {
    const owner = c.properties.id === undefined ? undefined : owners.get(c.properties.id);
    if (owner !== undefined) {
      return `Component identifier '${c.properties.id}' is already deployed in a different application '${owner}'.`;
    }
  }
  return undefined;
}

/** Always acknowledged for a known app, and the undeploy is (re)announced either way. */
export function undeploy(deps: Deps, req: Incoming): Outcome {
  const name = req.name ?? '';
  const bad = undeployRequest(req.body);
  if (bad !== undefined) return bad;
  const app = deps.store.get(req.lattice, name);
  if (app === undefined) {
    return reply({ result: 'notfound', message: `Application with the name ${name} not found`, name, version: null });
  }
  const wasDeployed = app.deployed !== null;
  app.deployed = null;
  deps.store.save(req.lattice, app);
  const message = wasDeployed ? `Successfully undeployed application ${name}` : `Application ${name} was already undeployed`;
  return reply({ result: 'acknowledged', message, name, version: null }, () => deps.board.undeployed(req.lattice, name));
}

/** The five rows of reference §5's delete table. */
export function del(deps: Deps, req: Incoming): Outcome {
  const name = req.name ?? '';
  const parsed = versionRequest(req.body, 'delete');
  if ('error' in parsed) return parsed.error;
  const app = deps.store.get(req.lattice, name);
  const result = app === undefined
    ? { result: 'noop', message: `Application ${name} doesn't exist or was already deleted`, undeploy: false }
    : deleteFrom(deps, req.lattice, app, parsed.version);
  // wadm sends the undeploy notification on a noop too, "in case of notification failure".
  const notify = result.undeploy || result.result === 'noop';
  return reply(result, notify ? () => deps.board.undeployed(req.lattice, name) : undefined);
}

function deleteFrom(deps: Deps, lattice: string, app: StoredApp, version: string | null) {
  const name = app.name;
  if (version === null) {
    deps.store.delete(lattice, name);
    return { result: 'deleted', message: `Successfully deleted application ${name}`, undeploy: true };
  }
  if (!app.manifests.delete(version)) {
    return { result: 'noop', message: `Application version ${version} doesn't exist`, undeploy: false };
  }
  if (app.manifests.size === 0) {
    deps.store.delete(lattice, name);
    return { result: 'deleted', message: `Successfully deleted last version of application ${name}`, undeploy: true };
  }
  // Deleting the deployed version undeploys the app: no fallback to another version.
  const undeploy = app.deployed === version;
  if (undeploy) app.deployed = null;
  deps.store.save(lattice, app);
  return { result: 'deleted', message: `Successfully deleted version ${version} of application ${name}`, undeploy };
}
