import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { parse as parseYaml } from 'yaml';
import { appSandbox, writeJoinKeys } from '../support/app-sandbox';
import { freePort, REPO_ROOT, waitForHttp, type AppName } from '../support/processes';
import { exportedMetricNames, metricNames } from '../support/promql';

const DOCKER = path.join(REPO_ROOT, 'docker');
const DASHBOARDS = path.join(DOCKER, 'grafana/dashboards');
const SERVICE_APPS = ['api', 'dispatcher', 'matcher', 'allocator', 'maintenance'] as const;
/** Series Prometheus writes itself, not an app (https://prometheus.io/docs/concepts/jobs_instances/). */
const PROMETHEUS_SERIES = new Set([
  'up',
  'scrape_duration_seconds',
  'scrape_samples_scraped',
  'ALERTS',
  'ALERTS_FOR_STATE',
]);

interface RuleFile {
  groups: { name: string; rules: { alert?: string; record?: string; expr: string }[] }[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: {
    title: string;
    datasource: { uid: string };
    targets: { expr: string; datasource: { uid: string } }[];
  }[];
}

const DURATION = '^(0|([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?)$';
const LABELS = {
  type: 'object',
  propertyNames: { pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' },
  additionalProperties: { type: 'string' },
};
/**
 * The rule file format Prometheus loads (its rulefmt package: promtool's own checks), as a JSON
 * schema: promtool cannot be installed here. The expressions are checked by the PromQL grammar.
 */
const RULE_FILE_SCHEMA = {
  type: 'object',
  required: ['groups'],
  additionalProperties: false,
  properties: {
    groups: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'rules'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1 },
          interval: { type: 'string', pattern: DURATION },
          query_offset: { type: 'string', pattern: DURATION },
          limit: { type: 'integer', minimum: 0 },
          labels: LABELS,
          rules: {
            type: 'array',
            minItems: 1,
            items: {
              type: 'object',
              required: ['expr'],
              additionalProperties: false,
              oneOf: [
                { required: ['alert'], not: { required: ['record'] } },
                {
                  required: ['record'],
                  not: {
                    anyOf: [
                      { required: ['alert'] },
                      { required: ['for'] },
                      { required: ['annotations'] },
                    ],
                  },
                },
              ],
              properties: {
                alert: { type: 'string', minLength: 1 },
                record: { type: 'string', pattern: '^[a-zA-Z_:][a-zA-Z0-9_:]*$' },
                expr: { type: 'string', minLength: 1 },
                for: { type: 'string', pattern: DURATION },
                keep_firing_for: { type: 'string', pattern: DURATION },
                labels: LABELS,
                annotations: LABELS,
              },
            },
          },
        },
      },
    },
  },
};

function readRules(): RuleFile {
  return parseYaml(readFileSync(path.join(DOCKER, 'prometheus/alerts.yml'), 'utf8')) as RuleFile;
}

function readDashboards(): Dashboard[] {
  return readdirSync(DASHBOARDS)
    .filter((file) => file.endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(path.join(DASHBOARDS, file), 'utf8')) as Dashboard);
}

/** Every expression of the rules and dashboards, with where it stands (for the failure message). */
function expressions(): { where: string; expr: string }[] {
  const rules = readRules().groups.flatMap((group) =>
    group.rules.map((rule) => ({
      where: `alerts.yml ${group.name}/${rule.alert ?? rule.record}`,
      expr: rule.expr,
    })),
  );
  const panels = readDashboards().flatMap((dashboard) =>
    dashboard.panels.flatMap((panel) =>
      panel.targets.map((target) => ({
        where: `${dashboard.uid}: ${panel.title}`,
        expr: target.expr,
      })),
    ),
  );
  return [...rules, ...panels];
}

describe('dashboards and alert rules (docker/grafana, docker/prometheus)', () => {
  it('the rule file has the shape Prometheus loads, unique alert names, and every expression parses', () => {
    const rules = readRules();
    const validate = new Ajv({ allErrors: true }).compile(RULE_FILE_SCHEMA);
    expect(validate(rules) ? [] : validate.errors).toEqual([]);
    const alerts = rules.groups.flatMap((group) => group.rules.map((rule) => rule.alert));
    expect(new Set(alerts).size).toBe(alerts.length);
    const groups = rules.groups.map((group) => group.name);
    expect(new Set(groups).size).toBe(groups.length);
    for (const { expr } of expressions()) expect(() => metricNames(expr)).not.toThrow();
  });

  it('alerts on each failure the operators asked for', () => {
    const watched = new Set(
      readRules().groups.flatMap((group) => group.rules.flatMap((rule) => metricNames(rule.expr))),
    );
    for (const metric of [
      'outbox_dead_lettered_total',
      'outbox_oldest_pending_age_seconds',
      'outbox_blocked_aggregates',
      'matcher_lease_losses_total',
      'allocation_run_seconds_count',
      'retention_deletion_lag_seconds',
    ])
      expect(watched).toContain(metric);
  });

  it('has a dashboard per service app, each on the provisioned data source, with unique uids', () => {
    const dashboards = readDashboards();
    const datasource = parseYaml(
      readFileSync(path.join(DOCKER, 'grafana/provisioning/datasources/prometheus.yml'), 'utf8'),
    ) as { datasources: { uid: string }[] };
    const uid = datasource.datasources[0]?.uid;
    expect(dashboards.map((d) => d.uid).sort()).toEqual(
      SERVICE_APPS.map((app) => `matchplane-${app}`).sort(),
    );
    for (const dashboard of dashboards)
      for (const panel of dashboard.panels) {
        expect(panel.targets.length).toBeGreaterThan(0);
        expect([panel.datasource.uid, ...panel.targets.map((t) => t.datasource.uid)]).toEqual(
          Array(panel.targets.length + 1).fill(uid),
        );
      }
  });

  describe('every metric a dashboard or rule names is exported by an app', () => {
    const sandbox = appSandbox();

    /** Starts an app as production runs it (dist/, its real modules) and reads its /metrics. */
    async function scrape(name: AppName): Promise<Set<string>> {
      const port = await freePort();
      const env: Record<string, string> = { ...sandbox.serviceEnv(), LOG_LEVEL: 'warn' };
      if (name === 'api') env.API_PORT = String(port);
      else env.HEALTH_PORT = String(port);
      if (name === 'allocator') {
        Object.assign(env, {
          JOIN_KEYS_FILE: writeJoinKeys('monitoring-1'),
          JOIN_ACTIVE_KEY_ID: 'monitoring-1',
        });
      }
      sandbox.start(name, env);
      await waitForHttp(`http://127.0.0.1:${port}/health`);
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(response.status).toBe(200);
      return exportedMetricNames(await response.text());
    }

    it('no dashboard panel or rule names a metric that no app exports', async () => {
      const exported = new Set(PROMETHEUS_SERIES);
      for (const app of SERVICE_APPS) for (const name of await scrape(app)) exported.add(name);

      const dangling = expressions().flatMap(({ where, expr }) =>
        metricNames(expr)
          .filter((name) => !exported.has(name))
          .map((name) => `${where}: ${name}`),
      );
      expect(dangling).toEqual([]);
    });
  });
});
