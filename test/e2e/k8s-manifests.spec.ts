import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Job } from 'kubernetes-models/batch/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { parseAllDocuments } from 'yaml';
import { envVarDocs } from '@matchplane/config';
import { AllocatorConfig } from '../../apps/allocator/src/allocator.config';
import { ApiConfig } from '../../apps/api/src/api.config';
import { DispatcherConfig } from '../../apps/dispatcher/src/dispatcher.config';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import { MatcherConfig } from '../../apps/matcher/src/matcher.config';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';
import { ProbeEdgeConfig } from '../../apps/probe-edge/src/probe-edge.config';
import { appSandbox, writeJoinKeys } from '../support/app-sandbox';
import { freePort, REPO_ROOT, waitForHttp } from '../support/processes';

const K8S = path.join(REPO_ROOT, 'docker/k8s');

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
  'batch/v1/Job': Job,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
};
const CUSTOM_KINDS = new Set(['agones.dev/v1/Fleet']);

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

function readManifests(): Manifest[] {
  return readdirSync(K8S)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(path.join(K8S, file), 'utf8')).map((document) => {
        if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
        return { ...(document.toJS() as Omit<Manifest, 'file'>), file } as Manifest;
      }),
    );
}

const manifests = readManifests();
const named = (kind: string, name: string) =>
  manifests.find((m) => m.kind === kind && m.metadata.name === name);
const stringData = (
  kind: 'ConfigMap' | 'Secret',
  name: string | undefined,
): Record<string, string> => {
  if (name === undefined) throw new Error(`a ${kind} reference without a name`);
  const object = named(kind, name) as
    { data?: Record<string, string>; stringData?: Record<string, string> } | undefined;
  if (!object) throw new Error(`no ${kind} ${name} in docker/k8s`);
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

interface Workload {
  app: ManifestApp;
  manifest: Manifest;
  pod: IPodSpec;
  container: IContainer;
}

/** Every container that runs a Matchplane app, known by the entrypoint its command runs. */
function workloads(): Workload[] {
  return manifests.flatMap((manifest) => {
    if (manifest.kind !== 'Deployment' && manifest.kind !== 'Job') return [];
    const pod = (manifest as unknown as { spec: { template: { spec: IPodSpec } } }).spec.template
      .spec;
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
}

interface ResolvedVariable {
  value?: string;
  /** The Secret it comes from, if it does. */
  secret?: string;
}

/** Every variable a container's environment gets, with where its value comes from. */
function environment({ container, manifest }: Workload): Map<string, ResolvedVariable> {
  const variables = new Map<string, ResolvedVariable>();
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef)
      for (const [name, value] of Object.entries(stringData('ConfigMap', source.configMapRef.name)))
        variables.set(name, { value });
    if (source.secretRef)
      for (const [name, value] of Object.entries(stringData('Secret', source.secretRef.name)))
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
}

describe('docker/k8s manifests', () => {
  it.each(manifests.map((m) => [`${m.file} ${m.kind}/${m.metadata.name}`, m] as const))(
    '%s matches the Kubernetes schema of its kind',
    (_, manifest) => {
      const kind = `${manifest.apiVersion}/${manifest.kind}`;
      expect(
        manifest.metadata.namespace ?? (kind === 'v1/Namespace' ? 'matchplane' : undefined),
      ).toBe('matchplane');
      if (CUSTOM_KINDS.has(kind)) return;
      const Model = MODELS[kind];
      if (!Model) throw new Error(`${manifest.file}: no schema for ${kind}`);
      const { file: _file, ...object } = manifest;
      expect(() => new Model(object as never).validate()).not.toThrow();
    },
  );

  it('the schema check refuses a malformed manifest (it is not vacuous)', () => {
    const api = named('Deployment', 'matchplane-api') as unknown as Record<string, unknown>;
    const { file: _file, ...object } = structuredClone(api) as {
      file: string;
      spec: { replicas: unknown };
    };
    object.spec.replicas = 'two';
    expect(() => new Deployment(object as never).validate()).toThrow(/replicas/);
  });

  it('runs every app: api, dispatcher, matcher, allocator, maintenance and the probe edge as Deployments, migrate as a Job', () => {
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
  });

  it.each(workloads().map((w) => [w.app, w] as const))(
    '%s: every variable it is given is one its configuration reads, secrets come from Secrets, the required ones are there',
    (app, workload) => {
      const configClass = APP_CONFIGS[app];
      const reads = new Set(Object.keys(new configClass()));
      const docs = envVarDocs(configClass);
      const env = environment(workload);

      expect([...env.keys()].filter((name) => !reads.has(name))).toEqual([]);
      const secretFromElsewhere = [...env].filter(
        ([name, v]) => docs.get(name)?.secret && !v.secret,
      );
      expect(secretFromElsewhere.map(([name]) => name)).toEqual([]);
      expect(REQUIRED_SECRETS[app].filter((name) => !env.get(name)?.secret)).toEqual([]);
    },
  );

  it.each(workloads().map((w) => [w.app, w] as const))(
    '%s: requests CPU and memory, and caps memory',
    (_, { container }) => {
      expect(container.resources?.requests).toEqual({
        cpu: expect.any(String),
        memory: expect.any(String),
      });
      expect(container.resources?.limits?.memory).toEqual(expect.any(String));
    },
  );

  it('the allocator signs with a key set mounted from the join-keys Secret, which holds its active key', () => {
    const workload = workloads().find((w) => w.app === 'allocator')!;
    const env = environment(workload);
    const keysFile = env.get('JOIN_KEYS_FILE')?.value ?? '';
    const mount = workload.container.volumeMounts?.find((m) =>
      keysFile.startsWith(`${m.mountPath}/`),
    );
    const volume = workload.pod.volumes?.find((v) => v.name === mount?.name);
    expect(volume?.secret?.secretName).toBe('matchplane-join-keys');
    const keySet = JSON.parse(
      stringData('Secret', 'matchplane-join-keys')[path.basename(keysFile)] ?? '{}',
    ) as object;
    expect(Object.keys(keySet)).toContain(env.get('JOIN_ACTIVE_KEY_ID')?.value);
  });

  it('every Service selects a Deployment and targets one of its named ports', () => {
    for (const service of manifests.filter((m) => m.kind === 'Service')) {
      const spec = service.spec as {
        selector: Record<string, string>;
        ports: { targetPort: string }[];
      };
      const targets = workloads().filter(({ manifest }) => {
        const labels = (
          manifest as unknown as {
            spec: { template: { metadata: { labels: Record<string, string> } } };
          }
        ).spec.template.metadata.labels;
        return Object.entries(spec.selector).every(([k, v]) => labels[k] === v);
      });
      expect(targets).toHaveLength(1);
      const ports = targets[0]!.container.ports?.map((p) => p.name);
      for (const port of spec.ports) expect(ports).toContain(port.targetPort);
    }
  });

  describe('probes hit the routes each app serves', () => {
    const sandbox = appSandbox();

    it('the probe edge answers its probes, booted with its manifest environment and a key file holding its active key', async () => {
      const workload = workloads().find((w) => w.app === 'probe-edge')!;
      const { container } = workload;
      const env = Object.fromEntries(
        [...environment(workload)].map(([name, v]) => [name, v.value ?? '']),
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

    it.each(SERVICE_APPS)(
      '%s answers 200 on its readiness, liveness and startup probes, booted with its manifest environment',
      async (app) => {
        const workload = workloads().find((w) => w.app === app)!;
        const { container } = workload;
        const portVariable = app === 'api' ? 'API_PORT' : 'HEALTH_PORT';
        const env = Object.fromEntries(
          [...environment(workload)].map(([name, v]) => [name, v.value ?? '']),
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
          ...stringData('Secret', 'matchplane-database'),
          ...stringData('Secret', 'matchplane-redis'),
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
