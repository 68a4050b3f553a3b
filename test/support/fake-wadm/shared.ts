// Shared applications (`experimental.wasmcloud.dev/shared: "true"`) and the components other
// apps borrow from them with `application: {name, component}` (wadm-types `missing_shared_components`).
import type { ManifestStore } from './store.js';
import { isShared, type Component, type Manifest } from './types.js';

/** Deployed shared apps as put and deploy see them: by their *current* manifest, not the deployed one. */
export function deployedSharedApps(store: ManifestStore, lattice: string): Manifest[] {
  return store.list(lattice)
    .filter((app) => app.deployed !== null && isShared(app.current))
    .map((app) => app.current);
}

/** Borrowed components that no deployed shared app provides with the same type. */
export function missingSharedComponents(m: Manifest, deployedApps: Manifest[]): Component[] {
  return m.spec.components.filter((c) => {
    const ref = c.properties.application;
    if (c.properties.image !== undefined || ref === undefined) return false;
    const provided = deployedApps.some((app) =>
      isShared(app) && app.metadata.name === ref.name &&
      app.spec.components.some((other) => other.name === ref.component && other.type === c.type));
    return !provided;
  });
}
