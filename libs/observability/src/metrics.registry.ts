import { Registry, collectDefaultMetrics } from 'prom-client';

/** One prom-client registry per process, labelled with the app name. */
export class MetricsRegistry extends Registry {
  constructor(appName: string) {
    super();
    this.setDefaultLabels({ app: appName });
    collectDefaultMetrics({ register: this });
  }
}
