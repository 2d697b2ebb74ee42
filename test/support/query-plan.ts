import type { DataSource } from 'typeorm';

/** One node of `EXPLAIN (FORMAT JSON)`, with the fields the plan tests read. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** Every node of the plan PostgreSQL chooses for `sql`, flattened. */
export async function planOf(ds: DataSource, sql: string, params: unknown[]): Promise<PlanNode[]> {
  const [row] = await ds.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(
    `EXPLAIN (FORMAT JSON) ${sql}`,
    params,
  );
  const plan = row?.['QUERY PLAN'][0]?.Plan;
  if (!plan) throw new Error('EXPLAIN returned no plan');
  return nodesOf(plan);
}

/** The relations the plan reads by sequential scan. */
export const seqScans = (nodes: PlanNode[]) =>
  nodes.filter((node) => node['Node Type'] === 'Seq Scan').map((node) => node['Relation Name']);

/** The indexes the plan uses. */
export const indexesUsed = (nodes: PlanNode[]) =>
  nodes.map((node) => node['Index Name']).filter((name) => name !== undefined);
