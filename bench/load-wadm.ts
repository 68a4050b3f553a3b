// For load only: an in-memory responder on wadm 0.21's API subjects, replying in wadm's wire shapes
// (reference wadm-api.md §1–§3; the list trimmed, see `summary`) so the benchmark can create and
// settle 10,000 applications in seconds; the real wadm handles requests one at a time and needs
// minutes for 1,000. It validates nothing and simulates no host: with `hosts`, a deploy is followed
// by `deployed`; without, no status is published, as by wadm in a lattice without hosts. The tests
// use the real wadm.
import { connect, type Msg, type NatsConnection } from 'nats';

interface App {
  manifests: Map<string, unknown>;
  deployed: string | null;
}

/** Long enough for the caller to record its deploy before the status arrives. */
const SETTLE_MS = 5;
const DEPLOYED = { status: { type: 'deployed' }, version: '', components: [] };
const UNDEPLOYED = { status: { type: 'undeployed' }, version: '', components: [] };
/** What wadm's list gives a model without any status (handlers.rs list_models). */
const NO_STATUS_YET = {
  status: { type: 'waiting', message: 'Waiting for status: Lattice contains no hosts, deployment not started.' },
  version: '',
  components: [],
};

export class LoadWadm {
  private readonly apps = new Map<string, App>();
  private requests = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly hosts: boolean,
  ) {}

  /** Requests answered so far. */
  count(): number {
    return this.requests;
  }

  listen(): void {
    this.nc.subscribe('wadm.api.>', { queue: 'wadm_server', callback: (_err, msg) => this.answer(msg) });
  }

  async stop(): Promise<void> {
    await this.nc.drain();
  }

  private answer(msg: Msg): void {
    this.requests++;
    const [, , lattice = '', , op = '', name] = msg.subject.split('.');
    const reply = name === undefined ? this.unnamed(lattice, op, msg) : this.named(lattice, name, op, msg);
    if (msg.reply) msg.respond(JSON.stringify(reply));
    // Shortly after the reply, as wadm's scalers report after its deploy answer: a status that arrived
    // before the caller took in the reply would count as one about the previous version.
    if (this.hosts && op === 'deploy' && name !== undefined && 'version' in reply)
      setTimeout(() => this.nc.publish(`wadm.status.${lattice}.${name}`, JSON.stringify(DEPLOYED)), SETTLE_MS);
  }

  private unnamed(lattice: string, op: string, msg: Msg): object {
    if (op === 'put') return this.put(lattice, msg.json());
    const models = [...this.apps]
      .filter(([key]) => key.startsWith(`${lattice}\u0000`))
      .map(([key, app]) => summary(key.split('\u0000')[1]!, app, this.hosts));
    return { result: 'success', message: 'Successfully fetched list of applications', models };
  }

  private named(lattice: string, name: string, op: string, msg: Msg): object {
    const app = this.apps.get(`${lattice}\u0000${name}`);
    if (op === 'history') return { result: 'error', message: 'Model deployment history is not currently supported' };
    if (op === 'status')
      return {
        result: 'ok',
        message: `Successfully fetched status for application ${name}`,
        status: this.hosts && app?.deployed ? DEPLOYED : UNDEPLOYED,
      };
    if (app === undefined)
      return { result: 'notfound', message: `Application with the name ${name} not found`, ...(op === 'versions' ? { versions: [] } : {}) };
    const versions = [...app.manifests.keys()];
    if (op === 'versions')
      return {
        result: 'success',
        message: `Successfully fetched versions for application ${name}`,
        versions: versions.map((version) => ({ version, deployed: version === app.deployed })),
      };
    if (op === 'get')
      return { result: 'success', message: `Successfully fetched application ${name}`, manifest: app.manifests.get(versions.at(-1)!) };
    if (op === 'deploy')
      return this.deploy(
        name,
        app,
        (msg.data.length > 0 ? msg.json<{ version?: string | null }>().version : undefined) ?? versions.at(-1)!,
      );
    if (op === 'undeploy') {
      app.deployed = null;
      return { result: 'acknowledged', message: `Successfully undeployed application ${name}`, name, version: null };
    }
    this.apps.delete(`${lattice}\u0000${name}`);
    return { result: 'deleted', message: `Successfully deleted application ${name}`, undeploy: true };
  }

  private put(lattice: string, manifest: { metadata: { name: string; annotations: Record<string, string> } }): object {
    const { name, annotations } = manifest.metadata;
    const key = `${lattice}\u0000${name}`;
    const app = this.apps.get(key) ?? { manifests: new Map(), deployed: null };
    const version = annotations['version']!;
    if (app.manifests.has(version)) return { result: 'error', message: `Manifest version ${version} already exists` };
    app.manifests.set(version, manifest);
    this.apps.set(key, app);
    const result = app.manifests.size === 1 ? 'created' : 'newversion';
    return { result, total_versions: app.manifests.size, current_version: version, message: `Successfully put manifest ${name}`, name };
  }

  private deploy(name: string, app: App, version: string): object {
    app.deployed = version;
    return { result: 'acknowledged', message: `Successfully deployed application ${name} ${version}`, name, version };
  }
}

/** Only the fields the service reads: the name, newest and deployed version, and the status (without scalers). */
function summary(name: string, app: App, hosts: boolean): object {
  const detailed_status = hosts && app.deployed ? DEPLOYED : NO_STATUS_YET;
  return { name, version: [...app.manifests.keys()].at(-1)!, deployed_version: app.deployed, detailed_status };
}

export async function startLoadWadm(options: { servers: string; hosts?: boolean }): Promise<LoadWadm> {
  const wadm = new LoadWadm(await connect({ servers: options.servers, name: 'load-wadm' }), options.hosts ?? false);
  wadm.listen();
  return wadm;
}
