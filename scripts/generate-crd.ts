// Prints manifests/crd.yaml: `npm run crd`.
import { renderCrdYaml } from '../src/schema/crd.js';

process.stdout.write(renderCrdYaml());
