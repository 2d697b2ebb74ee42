/**
 * Limits on the JSON the API accepts (request bodies, query strings, path parameters and
 * notification frames), checked once, right after parsing, before anything walks the value
 * recursively (class-transformer, class-validator, JSON.stringify overflow the stack a few
 * thousand levels down) and before any string reaches PostgreSQL (text and jsonb refuse U+0000).
 */

export type JsonProblem =
  { kind: 'too-deep'; path: string; maxDepth: number } | { kind: 'nul'; path: string };

/** `parent.key`, or `parent[3]` for an array index; the root is named by the caller. */
function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

/**
 * The first thing wrong with a parsed JSON value: nesting deeper than `maxDepth` (arrays and
 * objects; a scalar is depth 0, `{"a":[1]}` depth 2), or a string (value or key) holding U+0000.
 * Iterative, so no input can overflow the stack here.
 */
export function inspectJson(value: unknown, maxDepth: number, root = ''): JsonProblem | undefined {
  const pending: { value: unknown; path: string; depth: number }[] = [
    { value, path: root, depth: 0 },
  ];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, path, depth } = next;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return { kind: 'nul', path: path || 'value' };
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > maxDepth) return { kind: 'too-deep', path: path || 'value', maxDepth };
    if (Array.isArray(current)) {
      current.forEach((item: unknown, index) =>
        pending.push({ value: item, path: childPath(path, index), depth: depth + 1 }),
      );
      continue;
    }
    for (const [key, item] of Object.entries(current)) {
      const itemPath = childPath(path, key);
      if (key.includes('\u0000')) return { kind: 'nul', path: itemPath };
      pending.push({ value: item, path: itemPath, depth: depth + 1 });
    }
  }
  return undefined;
}

/** A message safe to show the caller (the path is theirs; U+0000 is shown escaped). */
export function describeJsonProblem(problem: JsonProblem): string {
  const path = problem.path.replaceAll('\u0000', '\\u0000');
  return problem.kind === 'too-deep'
    ? `${path} nests arrays and objects deeper than ${problem.maxDepth} levels`
    : `${path} must not contain the NUL character (U+0000)`;
}
