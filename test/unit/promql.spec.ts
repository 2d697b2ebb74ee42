import { exportedMetricNames, metricNames, PromqlSyntaxError } from '../support/promql';

describe('metricNames', () => {
  it('finds the metric of every selector, not the functions, aggregations or labels around it', () => {
    expect(
      metricNames(
        'sum by (le, mode) (rate(matcher_time_to_match_seconds_bucket{mode="duel"}[5m])) / on (mode) group_left max(matcher_queue_depth) > bool 0',
      ),
    ).toEqual(['matcher_queue_depth', 'matcher_time_to_match_seconds_bucket']);
  });

  it('reads a selector written as a __name__ matcher, and a metric named like a function or keyword', () => {
    expect(
      metricNames('{__name__="outbox_pending_events", app="dispatcher"} + rate[1m:] + sum'),
    ).toEqual(['outbox_pending_events', 'rate', 'sum']);
  });

  it("replaces Grafana's interval variables and refuses any other template variable", () => {
    expect(metricNames('rate(outbox_delivered_total[$__rate_interval])')).toEqual([
      'outbox_delivered_total',
    ]);
    expect(() => metricNames('rate(outbox_delivered_total{app="$app"}[5m]) * $factor')).toThrow(
      PromqlSyntaxError,
    );
  });

  it('throws on a syntax error instead of reading a partial tree', () => {
    expect(() => metricNames('sum(rate(outbox_delivered_total[5m])')).toThrow(PromqlSyntaxError);
    expect(() => metricNames('outbox_pending_events >')).toThrow(/offset/);
  });
});

describe('exportedMetricNames', () => {
  it("exports a histogram's series and a labelled counter that has recorded nothing yet", () => {
    const names = exportedMetricNames(
      [
        '# HELP a_seconds x',
        '# TYPE a_seconds histogram',
        'a_seconds_bucket{le="1",app="api"} 0',
        '# HELP b_total y',
        '# TYPE b_total counter',
        'process_cpu_seconds_total{app="api"} 1.5',
      ].join('\n'),
    );
    expect([...names].sort()).toEqual([
      'a_seconds',
      'a_seconds_bucket',
      'a_seconds_count',
      'a_seconds_sum',
      'b_total',
      'process_cpu_seconds_total',
    ]);
  });
});
