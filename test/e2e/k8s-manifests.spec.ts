import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { Job } from 'kubernetes-models/batch/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { parseAllDocuments } from 'yaml';
import { envVarDocs, loadConfig, type ConfigClass } from '@matchplane/config';
import { AllocatorConfig } from '../../apps/allocator/src/allocator.config';
import { ApiConfig } from '../../apps/api/src/api.config';
import { DispatcherConfig } from '../../apps/dispatcher/src/dispatcher.config';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import { MatcherConfig } from '../../apps/matcher/src/matcher.config';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';
import { ProbeEdgeConfig } from '../../apps/probe-edge/src/probe-edge.config';
import { appSandbox, writeJoinKeys } from '../support/app-sandbox';
import { placeholderCaFile } from '../support/placeholder-ca';
import { freePort, REPO_ROOT, waitForHttp } from '../support/processes';

const K8S = path.join(REPO_ROOT, 'docker/k8s');
/**
 * A deployment is docker/k8s/*.yaml (the apps, the same everywhere) plus one topology's directory:
 * where PostgreSQL and Redis are, and what the topology runs of them (docs/SCALING.md).
 */
const TOPOLOGIES = ['single-node', 'ha'] as const;
type Topology = (typeof TOPOLOGIES)[number];

/** What each app's main.ts loads its configuration into: the variables it reads. */
const APP_CONFIGS = {
  api: ApiConfig,
  dispatcher: DispatcherConfig,
  matcher: MatcherConfig,
  allocator: AllocatorConfig,
  maintenance: MaintenanceConfig,
  migrate: MigrateConfig,
  'probe-edge': ProbeEdgeConfig,
} as const;
type ManifestApp = keyof typeof APP_CONFIGS;
const SERVICE_APPS = ['api', 'dispatcher', 'matcher', 'allocator', 'maintenance'] as const;

/** Secrets each app cannot run in production without (the config leaves them optional for development). */
const REQUIRED_SECRETS: Record<ManifestApp, string[]> = {
  api: ['DATABASE_PASSWORD', 'REDIS_PASSWORD', 'OPERATOR_TOKENS'],
  dispatcher: ['DATABASE_PASSWORD', 'REDIS_PASSWORD'],
  matcher: ['DATABASE_PASSWORD', 'REDIS_PASSWORD'],
  allocator: ['DATABASE_PASSWORD', 'REDIS_PASSWORD'],
  maintenance: ['DATABASE_PASSWORD', 'REDIS_PASSWORD'],
  migrate: ['DATABASE_PASSWORD'],
  'probe-edge': [],
};

/**
 * The schema of every kind we ship, from kubernetes-models (its classes validate with ajv against
 * the Kubernetes OpenAPI schemas). The Agones Fleet is a custom resource they do not model: it is
 * read but only its identity is checked.
 */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
};
const CUSTOM_KINDS = new Set(['agones.dev/v1/Fleet']);

/**
 * CloudNativePG's Cluster, validated against the operator's own CRD schema (vendored from its
 * release, test/fixtures/k8s; kubernetes-models has no package for it). The Kubernetes extensions
 * (`x-kubernetes-*`: CEL rules, list types) are not JSON Schema and are not checked. A field the
 * schema does not declare is refused: the API server would drop it without a word (pruning), so a
 * misspelt field would silently be a default.
 */
const cnpgCluster = JSON.parse(
  readFileSync(
    path.join(REPO_ROOT, 'test/fixtures/k8s/cloudnative-pg-cluster.schema.json'),
    'utf8',
  ),
) as { apiVersion: string; kind: string; schema: object };
const closed = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== 'object' || schema === null) return schema;
  const object = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, closed(value)]),
  ) as Record<string, unknown>;
  const open = 'additionalProperties' in object || object['x-kubernetes-preserve-unknown-fields'];
  return 'properties' in object && !open ? { ...object, additionalProperties: false } : object;
};
const validateCnpgCluster = new Ajv({
  strict: false,
  validateFormats: false,
  allErrors: true,
}).compile(closed(cnpgCluster.schema) as object);
const CNPG_CLUSTER = `${cnpgCluster.apiVersion}/${cnpgCluster.kind}`;
/** The Secrets the operator makes for a Cluster that the apps mount (its docs, "Certificates"). */
const cnpgGeneratedSecrets = (cluster: string) => ({ [`${cluster}-ca`]: ['ca.crt', 'ca.key'] });

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

function readManifests(dir: string): Manifest[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((name) => {
      const file = path.relative(K8S, path.join(dir, name));
      return parseAllDocuments(readFileSync(path.join(dir, name), 'utf8')).map((document) => {
        if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
        return { ...(document.toJS() as Omit<Manifest, 'file'>), file } as Manifest;
      });
    });
}

const sharedManifests = readManifests(K8S);
const topologyManifests = Object.fromEntries(
  TOPOLOGIES.map((topology) => [topology, readManifests(path.join(K8S, topology))]),
) as Record<Topology, Manifest[]>;
const everyManifest = [...sharedManifests, ...TOPOLOGIES.flatMap((t) => topologyManifests[t])];

interface Workload {
  app: ManifestApp;
  manifest: Manifest;
  pod: IPodSpec;
  container: IContainer;
}

/** A variable naming a file, in the container that gets it. */
type FileVariable = Workload & { file: string };

interface ResolvedVariable {
  value?: string;
  /** The Secret it comes from, if it does. */
  secret?: string;
}

interface PodTemplate {
  manifest: Manifest;
  labels: Record<string, string>;
  pod: IPodSpec;
}

/** One deployment: the shared manifests and one topology's, and what can be read from them. */
function deployment(topology: Topology) {
  const manifests = [...sharedManifests, ...topologyManifests[topology]];
  const named = (kind: string, name: string) =>
    manifests.find((m) => m.kind === kind && m.metadata.name === name);
  const stringData = (
    kind: 'ConfigMap' | 'Secret',
    name: string | undefined,
  ): Record<string, string> => {
    if (name === undefined) throw new Error(`a ${kind} reference without a name`);
    const object = named(kind, name) as
      { data?: Record<string, string>; stringData?: Record<string, string> } | undefined;
    if (!object) throw new Error(`no ${kind} ${name} in docker/k8s (topology ${topology})`);
    return kind === 'Secret'
      ? {
          ...object.stringData,
          ...Object.fromEntries(
            Object.entries(object.data ?? {}).map(([k, v]) => [
              k,
              Buffer.from(v, 'base64').toString(),
            ]),
          ),
        }
      : (object.data ?? {});
  };
  /** A reference marked optional may name an object this topology does not have. */
  const optionalData = (
    kind: 'ConfigMap' | 'Secret',
    ref: { name?: string; optional?: boolean },
  ): Record<string, string> =>
    ref.optional && ref.name !== undefined && !named(kind, ref.name)
      ? {}
      : stringData(kind, ref.name);

  /** Every pod a Deployment, StatefulSet or Job runs. */
  const podTemplates = (): PodTemplate[] =>
    manifests.flatMap((manifest) => {
      if (!['Deployment', 'StatefulSet', 'Job'].includes(manifest.kind)) return [];
      const template = (
        manifest as unknown as {
          spec: { template: { metadata: { labels: Record<string, string> }; spec: IPodSpec } };
        }
      ).spec.template;
      return [{ manifest, labels: template.metadata.labels, pod: template.spec }];
    });

  /** Every container that runs a Matchplane app, known by the entrypoint its command runs. */
  const workloads = (): Workload[] =>
    podTemplates().flatMap(({ manifest, pod }) => {
      if (manifest.kind === 'StatefulSet') return [];
      return pod.containers.map((container) => {
        const entry = container.command?.find((part) =>
          /^dist\/apps\/[a-z-]+\/src\/main\.js$/.test(part),
        );
        const app = entry?.split('/')[2] as ManifestApp | undefined;
        if (!app || !(app in APP_CONFIGS))
          throw new Error(`${manifest.file}: ${container.name} runs no known app`);
        return { app, manifest, pod, container };
      });
    });

  /** Every variable a container's environment gets, with where its value comes from. */
  const environment = ({
    container,
    manifest,
  }: Pick<Workload, 'container' | 'manifest'>): Map<string, ResolvedVariable> => {
    const variables = new Map<string, ResolvedVariable>();
    for (const source of container.envFrom ?? []) {
      if (source.configMapRef)
        for (const [name, value] of Object.entries(optionalData('ConfigMap', source.configMapRef)))
          variables.set(name, { value });
      if (source.secretRef)
        for (const [name, value] of Object.entries(optionalData('Secret', source.secretRef)))
          variables.set(name, { value, secret: source.secretRef.name });
    }
    for (const variable of container.env ?? []) {
      const secretKey = variable.valueFrom?.secretKeyRef;
      const configKey = variable.valueFrom?.configMapKeyRef;
      if (secretKey) {
        const value = stringData('Secret', secretKey.name)[secretKey.key];
        if (value === undefined)
          throw new Error(`${manifest.file}: Secret ${secretKey.name} has no key ${secretKey.key}`);
        variables.set(variable.name, { value, secret: secretKey.name });
      } else if (configKey) {
        variables.set(variable.name, {
          value: stringData('ConfigMap', configKey.name)[configKey.key],
        });
      } else {
        variables.set(variable.name, { value: variable.value });
      }
    }
    return variables;
  };

  /** The keys of a Secret this topology declares or an operator it declares makes. */
  const secretKeys = (name: string): string[] | undefined => {
    if (named('Secret', name)) return Object.keys(stringData('Secret', name));
    for (const cluster of manifests.filter((m) => `${m.apiVersion}/${m.kind}` === CNPG_CLUSTER)) {
      const generated = cnpgGeneratedSecrets(cluster.metadata.name)[name];
      if (generated) return generated;
    }
    return undefined;
  };

  return {
    topology,
    manifests,
    named,
    stringData,
    podTemplates,
    workloads,
    environment,
    secretKeys,
  };
}
type Deployed = ReturnType<typeof deployment>;
const deployments = TOPOLOGIES.map(deployment);
const singleNode = deployments[0]!;
const ha = deployments[1]!;

/** Every (topology, x) pair, labelled for it.each. */
const perTopology = <T>(each: (d: Deployed) => [string, T][]) =>
  deployments.flatMap((d) =>
    each(d).map(([label, x]) => [`${d.topology}: ${label}`, d, x] as const),
  );

describe('docker/k8s manifests', () => {
  it.each(everyManifest.map((m) => [`${m.file} ${m.kind}/${m.metadata.name}`, m] as const))(
    '%s matches the schema of its kind',
    (_, manifest) => {
      const kind = `${manifest.apiVersion}/${manifest.kind}`;
      expect(
        manifest.metadata.namespace ?? (kind === 'v1/Namespace' ? 'matchplane' : undefined),
      ).toBe('matchplane');
      if (CUSTOM_KINDS.has(kind)) return;
      const { file: _file, ...object } = manifest;
      if (kind === CNPG_CLUSTER) {
        validateCnpgCluster(object);
        expect(validateCnpgCluster.errors ?? []).toEqual([]);
        return;
      }
      const Model = MODELS[kind];
      if (!Model) throw new Error(`${manifest.file}: no schema for ${kind}`);
      expect(() => new Model(object as never).validate()).not.toThrow();
    },
  );

  it('the schema checks refuse a malformed manifest (they are not vacuous)', () => {
    const api = singleNode.named('Deployment', 'matchplane-api') as unknown as Record<
      string,
      unknown
    >;
    const { file: _file, ...object } = structuredClone(api) as {
      file: string;
      spec: { replicas: unknown };
    };
    object.spec.replicas = 'two';
    expect(() => new Deployment(object as never).validate()).toThrow(/replicas/);

    const cluster = structuredClone(
      ha.manifests.find((m) => `${m.apiVersion}/${m.kind}` === CNPG_CLUSTER),
    ) as unknown as { spec: Record<string, unknown> };
    cluster.spec.instances = 'two';
    cluster.spec.walStorag = { size: '1Gi' };
    expect(validateCnpgCluster(cluster)).toBe(false);
    expect(validateCnpgCluster.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ instancePath: '/spec/instances' }),
        expect.objectContaining({ params: { additionalProperty: 'walStorag' } }),
      ]),
    );
  });

  it.each(deployments.map((d) => [d.topology, d] as const))(
    '%s: no object is declared twice (a topology adds to the shared manifests, it does not override them)',
    (_, { manifests }) => {
      const keys = manifests.map((m) => `${m.kind}/${m.metadata.name}`);
      expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
    },
  );

  it.each(deployments.map((d) => [d.topology, d] as const))(
    '%s: runs every app: api, dispatcher, matcher, allocator, maintenance and the probe edge as Deployments, migrate as a Job',
    (_, { workloads }) => {
      const byApp = new Map(workloads().map((w) => [w.app, w.manifest.kind]));
      expect(Object.fromEntries(byApp)).toEqual({
        api: 'Deployment',
        dispatcher: 'Deployment',
        matcher: 'Deployment',
        allocator: 'Deployment',
        maintenance: 'Deployment',
        migrate: 'Job',
        'probe-edge': 'Deployment',
      });
    },
  );

  it.each(perTopology((d) => d.workloads().map((w) => [w.app, w])))(
    '%s: every variable it is given is one its configuration reads, secrets come from Secrets, the required ones are there',
    (_, d, workload) => {
      const configClass = APP_CONFIGS[workload.app];
      const reads = new Set(Object.keys(new configClass()));
      const docs = envVarDocs(configClass);
      const env = d.environment(workload);

      expect([...env.keys()].filter((name) => !reads.has(name))).toEqual([]);
      const secretFromElsewhere = [...env].filter(
        ([name, v]) => docs.get(name)?.secret && !v.secret,
      );
      expect(secretFromElsewhere.map(([name]) => name)).toEqual([]);
      expect(REQUIRED_SECRETS[workload.app].filter((name) => !env.get(name)?.secret)).toEqual([]);
    },
  );

  const localCaFile = placeholderCaFile();
  it.each(perTopology((d) => d.workloads().map((w) => [w.app, w])))(
    '%s: its configuration accepts the manifest environment as a whole (a CA file read from a local copy)',
    (_, d, workload) => {
      // The boots below replace the connection Secrets with this machine's PostgreSQL and Redis;
      // here the topology's own values meet the checks across variables (a sentinel list and its
      // master name, TLS and its CA file, no host beside sentinels).
      const env = Object.fromEntries(
        [...d.environment(workload)].map(([name, v]) => [
          name,
          name.endsWith('_CA_FILE') ? localCaFile : (v.value ?? ''),
        ]),
      );
      const configClass: ConfigClass<object> = APP_CONFIGS[workload.app];
      expect(() => loadConfig(configClass, env)).not.toThrow();
    },
  );

  it.each(
    perTopology((d) =>
      d
        .workloads()
        .flatMap((w) =>
          [...d.environment(w)]
            .filter(([name]) => name.endsWith('_FILE'))
            .map(
              ([name, v]) =>
                [`${w.app} ${name}`, { ...w, file: v.value ?? '' }] as [string, FileVariable],
            ),
        ),
    ),
  )(
    '%s is a key of a Secret mounted into the container, which the topology holds or an operator of it makes',
    (_, d, { container, pod, file }) => {
      const mount = container.volumeMounts?.find((m) => path.dirname(file) === m.mountPath);
      expect(mount).toBeDefined();
      const volume = pod.volumes?.find((v) => v.name === mount?.name);
      expect(volume?.secret?.secretName).toEqual(expect.any(String));
      expect(d.secretKeys(volume!.secret!.secretName!)).toContain(path.basename(file));
    },
  );

  it.each(perTopology((d) => d.podTemplates().map((t) => [t.manifest.metadata.name, t])))(
    '%s: every container requests CPU and memory, and caps memory',
    (_, _d, { pod }) => {
      for (const container of pod.containers) {
        expect(container.resources?.requests).toEqual({
          cpu: expect.any(String),
          memory: expect.any(String),
        });
        expect(container.resources?.limits?.memory).toEqual(expect.any(String));
      }
    },
  );

  it('the allocator signs with a key set mounted from the join-keys Secret, which holds its active key', () => {
    const workload = singleNode.workloads().find((w) => w.app === 'allocator')!;
    const env = singleNode.environment(workload);
    const keysFile = env.get('JOIN_KEYS_FILE')?.value ?? '';
    const mount = workload.container.volumeMounts?.find((m) =>
      keysFile.startsWith(`${m.mountPath}/`),
    );
    const volume = workload.pod.volumes?.find((v) => v.name === mount?.name);
    expect(volume?.secret?.secretName).toBe('matchplane-join-keys');
    const keySet = JSON.parse(
      singleNode.stringData('Secret', 'matchplane-join-keys')[path.basename(keysFile)] ?? '{}',
    ) as object;
    expect(Object.keys(keySet)).toContain(env.get('JOIN_ACTIVE_KEY_ID')?.value);
  });

  it.each(
    perTopology((d) =>
      d.manifests.filter((m) => m.kind === 'Service').map((s) => [s.metadata.name, s]),
    ),
  )(
    '%s selects one Deployment or StatefulSet and targets one of its named ports',
    (_, d, service) => {
      const spec = service.spec as {
        selector: Record<string, string>;
        ports: { targetPort: string }[];
      };
      const targets = d
        .podTemplates()
        .filter(({ labels }) => Object.entries(spec.selector).every(([k, v]) => labels[k] === v));
      expect(targets).toHaveLength(1);
      const ports = targets[0]!.pod.containers.flatMap((c) => c.ports ?? []).map((p) => p.name);
      for (const port of spec.ports) expect(ports).toContain(port.targetPort);
    },
  );

  it.each(
    everyManifest
      .filter((m) => m.kind === 'ConfigMap')
      .flatMap((m) =>
        Object.entries((m as { data?: Record<string, string> }).data ?? {})
          .filter(([key]) => key.endsWith('.sh'))
          .map(([key, script]) => [`${m.file} ${m.metadata.name} ${key}`, script] as const),
      ),
  )('%s parses as a POSIX shell script', (_, script) => {
    const check = spawnSync('sh', ['-n'], { input: script, encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  describe('ha: the apps reach the PostgreSQL cluster and the Redis Sentinel group it runs', () => {
    const appEnv = () => new Map(ha.workloads().map((w) => [w.app, ha.environment(w)] as const));

    it('DATABASE_HOST is the read-write Service of the CloudNativePG Cluster, a name its certificate carries, as the owner and database its bootstrap creates', () => {
      const cluster = ha.manifests.find((m) => `${m.apiVersion}/${m.kind}` === CNPG_CLUSTER)!;
      const initdb = (
        cluster.spec as {
          bootstrap: { initdb: { database: string; owner: string; secret: { name: string } } };
        }
      ).bootstrap.initdb;
      const owner = ha.stringData('Secret', initdb.secret.name);
      const rw = `${cluster.metadata.name}-rw`;
      // The server certificate's names (CloudNativePG docs, "Certificates"): the Service, with
      // its namespace, and with `.svc`.
      const certificateNames = [rw, `${rw}.matchplane`, `${rw}.matchplane.svc`];
      for (const [app, env] of appEnv()) {
        if (app === 'probe-edge') continue;
        const value = (name: string) => env.get(name)?.value;
        expect({ app, host: value('DATABASE_HOST') }).toEqual({
          app,
          host: expect.stringMatching(new RegExp(`^(${certificateNames.join('|')})$`)),
        });
        expect(value('DATABASE_TARGET_SESSION_ATTRS')).toBe('read-write');
        expect(value('DATABASE_SSL_MODE')).toBe('verify-full');
        expect(value('DATABASE_USER')).toBe(initdb.owner);
        expect(owner.username).toBe(initdb.owner);
        expect(value('DATABASE_PASSWORD')).toBe(owner.password);
        expect(value('DATABASE_NAME')).toBe(initdb.database);
      }
    });

    it('REDIS_SENTINELS lists every pod of the sentinel StatefulSet by its headless Service, on the port it listens on; the Redis and sentinel pods read the master name and passwords from the apps’ Secret', () => {
      const env = appEnv().get('api')!;
      const sentinels = (env.get('REDIS_SENTINELS')?.value ?? '').split(',');
      const pods = sentinels.map((entry) => {
        const [host = '', port = ''] = entry.split(':');
        const [pod = '', service = '', namespace, ...rest] = host.split('.');
        expect({ namespace, rest }).toEqual({
          namespace: 'matchplane',
          rest: ['svc', 'cluster', 'local'],
        });
        return { pod, service, port: Number(port) };
      });
      const service = ha.named('Service', pods[0]!.service)!;
      const serviceSpec = service.spec as {
        clusterIP?: string;
        selector: Record<string, string>;
        ports: { port: number; targetPort: string }[];
      };
      expect(serviceSpec.clusterIP).toBe('None');
      const statefulSet = ha.manifests.find(
        (m) =>
          m.kind === 'StatefulSet' &&
          (m.spec as { serviceName: string }).serviceName === service.metadata.name,
      )!;
      const { replicas, template } = statefulSet.spec as {
        replicas: number;
        template: { spec: IPodSpec };
      };
      expect(replicas % 2).toBe(1);
      expect(replicas).toBeGreaterThanOrEqual(3);
      expect(pods).toEqual(
        Array.from({ length: replicas }, (_, i) => ({
          pod: `${statefulSet.metadata.name}-${i}`,
          service: service.metadata.name,
          port: serviceSpec.ports[0]!.port,
        })),
      );
      const sentinel = template.spec.containers[0]!;
      expect(
        sentinel.ports?.find((p) => p.name === serviceSpec.ports[0]!.targetPort)?.containerPort,
      ).toBe(pods[0]!.port);

      // The group's own pods take the master name and passwords from the Secret the apps read.
      const fromAppsSecret = (name: string) => ({
        name,
        valueFrom: { secretKeyRef: { name: 'matchplane-redis', key: name } },
      });
      const redis = ha.podTemplates().filter((t) => t.manifest.kind === 'StatefulSet');
      expect(redis.map((t) => t.manifest.metadata.name).sort()).toEqual([
        'matchplane-redis',
        'matchplane-redis-sentinel',
      ]);
      for (const { pod } of redis)
        expect(pod.containers[0]!.env).toEqual(
          expect.arrayContaining(
            ['REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD', 'REDIS_SENTINEL_MASTER'].map(
              fromAppsSecret,
            ),
          ),
        );
      expect(env.get('REDIS_SENTINEL_MASTER')?.secret).toBe('matchplane-redis');
    });
  });

  it("ha: every service app gets the matcher's MATCHER_SHARDS: the writers of tickets index candidates by the same shards", () => {
    const shardsOf = (workload: Workload) => ha.environment(workload).get('MATCHER_SHARDS')?.value;
    const matcher = shardsOf(ha.workloads().find((w) => w.app === 'matcher')!);
    expect(matcher).toBeDefined();
    const services = ['api', 'maintenance', 'allocator', 'dispatcher'];
    const apps = ha.workloads().filter((w) => services.includes(w.app));
    expect(new Set(apps.map((w) => w.app))).toEqual(new Set(services));
    for (const workload of apps)
      expect([workload.app, shardsOf(workload)]).toEqual([workload.app, matcher]);
  });

  it('ha: the matcher shards each mode by region groups that together list PROBE_REGIONS, each region once', () => {
    // The matcher does not hold region groups against PROBE_REGIONS (a region no group lists goes
    // to the first group), so a misspelt region would quietly move tickets between shards.
    const env = ha.environment(ha.workloads().find((w) => w.app === 'matcher')!);
    const regions = (env.get('PROBE_REGIONS')?.value ?? '').split(',').sort();
    const shards = JSON.parse(env.get('MATCHER_SHARDS')?.value ?? '{}') as Record<
      string,
      { regions: Record<string, string[]> }
    >;
    const modes = (env.get('QUEUE_MODES')?.value ?? '').split(',').map((m) => m.split(':')[0]);
    expect(Object.keys(shards).sort()).toEqual(modes.sort());
    for (const { regions: groups } of Object.values(shards))
      expect(Object.values(groups).flat().sort()).toEqual(regions);
  });

  describe('probes hit the routes each app serves', () => {
    const sandbox = appSandbox();

    it('the probe edge answers its probes, booted with its manifest environment and a key file holding its active key', async () => {
      const workload = singleNode.workloads().find((w) => w.app === 'probe-edge')!;
      const { container } = workload;
      const env = Object.fromEntries(
        [...singleNode.environment(workload)].map(([name, v]) => [name, v.value ?? '']),
      );
      const probes = [container.readinessProbe, container.livenessProbe, container.startupProbe];
      expect(probes.map((probe) => probe?.httpGet?.path)).toEqual(['/health', '/live', '/live']);
      const http = container.ports?.find((p) => p.name === 'http');
      expect(String(http?.containerPort)).toBe(env.PROBE_EDGE_PORT);
      const listen = await freePort();
      sandbox.start('probe-edge', {
        ...env,
        PROBE_EDGE_HOST: '127.0.0.1',
        PROBE_EDGE_PORT: String(listen),
        PROBE_EDGE_UDP_PORT: String(await freePort()),
        PROBE_KEYS_FILE: writeJoinKeys(env.PROBE_ACTIVE_KEY_ID ?? ''),
      });
      for (const probe of probes)
        await waitForHttp(`http://127.0.0.1:${listen}${probe?.httpGet?.path}`);
    });

    it.each(perTopology(() => SERVICE_APPS.map((app) => [app, app])))(
      '%s answers 200 on its readiness, liveness and startup probes, booted with its manifest environment',
      async (_, d, app) => {
        const workload = d.workloads().find((w) => w.app === app)!;
        const { container } = workload;
        const portVariable = app === 'api' ? 'API_PORT' : 'HEALTH_PORT';
        const env = Object.fromEntries(
          [...d.environment(workload)].map(([name, v]) => [name, v.value ?? '']),
        );

        const probes = [container.readinessProbe, container.livenessProbe, container.startupProbe];
        expect(probes.map((probe) => probe?.httpGet?.path)).toEqual(['/health', '/live', '/live']);
        for (const probe of probes) {
          const port = container.ports?.find(
            (p) => p.name === probe?.httpGet?.port || p.containerPort === probe?.httpGet?.port,
          );
          // The probed port is the one the app listens on, by the variable its configuration reads.
          expect(String(port?.containerPort)).toBe(env[portVariable]);
        }

        // Everything the manifest says, except where this machine differs from a cluster: the
        // database, Redis, the listening port, and the key file the Secret volume would hold.
        const listen = await freePort();
        const cluster = Object.keys({
          ...d.stringData('Secret', 'matchplane-database'),
          ...d.stringData('Secret', 'matchplane-redis'),
        });
        const local: Record<string, string> = {
          ...Object.fromEntries(Object.entries(env).filter(([name]) => !cluster.includes(name))),
          ...sandbox.serviceEnv(),
          [portVariable]: String(listen),
        };
        if (app === 'allocator') local.JOIN_KEYS_FILE = writeJoinKeys(env.JOIN_ACTIVE_KEY_ID ?? '');
        sandbox.start(app, local);
        for (const probe of probes)
          await waitForHttp(`http://127.0.0.1:${listen}${probe?.httpGet?.path}`);
      },
    );
  });
});
