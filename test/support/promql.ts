import { parser } from '@prometheus-io/lezer-promql';

type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

/**
 * Grafana's built-in interval variables, replaced by a duration before parsing (PromQL itself has
 * no variables). Any other `$variable` is refused: the dashboards define no template variables.
 */
const GRAFANA_INTERVALS =
  /\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}/g;

export class PromqlSyntaxError extends Error {
  override name = 'PromqlSyntaxError';
}

/**
 * The metric names a PromQL expression selects, read from the syntax tree of Prometheus's own
 * grammar (@prometheus-io/lezer-promql): the identifier of every vector selector, and the
 * `__name__="..."` matcher of a selector written without one. Function, aggregation and label
 * names are other node types, so they never count as metrics. Throws on a syntax error.
 */
export function metricNames(expression: string): string[] {
  const source = expression.replace(GRAFANA_INTERVALS, '5m');
  if (/\$/.test(source.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ''))) {
    throw new PromqlSyntaxError(`template variable in ${JSON.stringify(expression)}`);
  }
  const tree = parser.parse(source);
  const names = new Set<string>();
  const text = (node: SyntaxNode) => source.slice(node.from, node.to);
  let error: SyntaxNode | undefined;
  tree.iterate({
    enter: (ref) => {
      if (ref.type.isError) error ??= ref.node;
      if (ref.name !== 'VectorSelector') return;
      const identifier = ref.node.getChild('Identifier');
      if (identifier) {
        names.add(text(identifier));
        return;
      }
      for (const matcher of ref.node
        .getChild('LabelMatchers')
        ?.getChildren('UnquotedLabelMatcher') ?? []) {
        const label = matcher.getChild('LabelName');
        const op = matcher.getChild('MatchOp')?.firstChild;
        const value = matcher.getChild('StringLiteral');
        if (label && value && op?.name === 'EqlSingle' && text(label) === '__name__') {
          names.add(JSON.parse(text(value).replace(/^'|'$/g, '"')) as string);
        }
      }
    },
  });
  if (error) {
    throw new PromqlSyntaxError(
      `PromQL syntax error at offset ${error.from} of ${JSON.stringify(expression)}: near ${JSON.stringify(source.slice(error.from, error.from + 20))}`,
    );
  }
  return [...names].sort();
}

/**
 * The metric names a Prometheus text exposition (an app's GET /metrics) exports: every `# TYPE`
 * line's family with the series a histogram or summary adds (`_bucket`, `_sum`, `_count`), plus
 * every sample's name. A labelled metric that has recorded nothing yet has a TYPE line but no
 * sample, and is still exported.
 */
export function exportedMetricNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) {
      const [, family = '', kind] = type;
      names.add(family);
      if (kind === 'histogram')
        ['_bucket', '_sum', '_count'].forEach((suffix) => names.add(family + suffix));
      if (kind === 'summary') ['_sum', '_count'].forEach((suffix) => names.add(family + suffix));
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (sample?.[1]) names.add(sample[1]);
  }
  return names;
}
