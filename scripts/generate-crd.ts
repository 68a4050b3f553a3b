// Prints a generated CRD: manifests/crd.yaml (WasmCloudApplication) by default,
// manifests/lattice-crd.yaml with `lattice` (`npm run crd` writes both).
import { renderCrdYaml } from '../src/schema/crd.js';
import { renderLatticeCrdYaml } from '../src/schema/lattice-crd.js';

process.stdout.write(process.argv[2] === 'lattice' ? renderLatticeCrdYaml() : renderCrdYaml());
