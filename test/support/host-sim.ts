// A wasmCloud 1.x lattice host simulator for tests: hosts that a real wadm 0.21.1 can drive to
// `deployed` (lattice-host-protocol.md). Components and providers "start" instantly and nothing
// is pulled; what wadm asked for can be read back through the views and request log.
export { startLattice, SimulatedLattice, type LatticeOptions } from './host-sim/lattice.js';
export type {
  CtlRequest, HostInfo, HostSpec, Link, PublishedEvent, RunningComponent, RunningProvider, StringMap,
} from './host-sim/types.js';
export { untilWadmWatches, WADM_STALL_TOLERANT_MS } from './host-sim/wadm-ready.js';
