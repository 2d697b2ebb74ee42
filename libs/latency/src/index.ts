export * from './latency.store';
export * from './probe-challenge.store';
export * from './probe-measurement.store';
export * from './latencies.module';
export * from './probe.retention';
