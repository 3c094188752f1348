import type { FlowEdge } from '@taskrow/core';

/** A node of the flow graph: a key or a job (the same text may be both, as two nodes). */
export interface GraphNode {
  readonly id: string;
  readonly name: string;
  readonly kind: 'key' | 'job';
  layer: number;
  order: number;
  x: number;
  y: number;
  width: number;
}

/** A laid-out graph: nodes with coordinates, edges by node id, and the drawing's size. */
export interface Layout {
  readonly nodes: GraphNode[];
  readonly edges: readonly { readonly from: string; readonly to: string }[];
  readonly width: number;
  readonly height: number;
}

export const ROW = 30;
const GAP = 70;
const MARGIN = 12;
/** Labels longer than this are cut (the full name is the node's tooltip). */
export const MAX_LABEL = 48;
const labelWidth = (name: string): number => Math.min(name.length, MAX_LABEL) * 6.8 + 18;

function nodesOf(edges: readonly FlowEdge[]): { nodes: Map<string, GraphNode>; links: { from: string; to: string }[] } {
  const nodes = new Map<string, GraphNode>();
  const add = (name: string, kind: 'key' | 'job'): string => {
    const id = `${kind}:${name}`;
    if (!nodes.has(id)) nodes.set(id, { id, name, kind, layer: 0, order: 0, x: 0, y: 0, width: labelWidth(name) });
    return id;
  };
  const links = edges.map((e) =>
    e.kind === 'input' ? { from: add(e.from, 'key'), to: add(e.to, 'job') } : { from: add(e.from, 'job'), to: add(e.to, 'key') },
  );
  return { nodes, links };
}

/** Longest-path layers from the sources; edges closing a cycle are ignored (iterative DFS, no recursion). */
function assignLayers(nodes: Map<string, GraphNode>, out: Map<string, string[]>): void {
  const state = new Map<string, 1 | 2>();
  const topo: string[] = [];
  const forward = new Map<string, string[]>();
  for (const start of [...nodes.keys()].sort()) {
    if (state.has(start)) continue;
    const stack: [string, number][] = [[start, 0]];
    state.set(start, 1);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const next = (out.get(top[0]) ?? [])[top[1]++];
      if (next === undefined) {
        state.set(top[0], 2);
        topo.push(top[0]);
        stack.pop();
      } else if (!state.has(next)) {
        (forward.get(top[0]) ?? forward.set(top[0], []).get(top[0])!).push(next);
        state.set(next, 1);
        stack.push([next, 0]);
      } else if (state.get(next) === 2) {
        (forward.get(top[0]) ?? forward.set(top[0], []).get(top[0])!).push(next);
      }
    }
  }
  for (const id of topo.reverse()) {
    const n = nodes.get(id)!;
    for (const m of forward.get(id) ?? []) nodes.get(m)!.layer = Math.max(nodes.get(m)!.layer, n.layer + 1);
  }
}

/** Orders each layer by the mean position of its neighbours (a few barycenter sweeps), names breaking ties. */
function orderLayers(layers: GraphNode[][], neighbours: Map<string, string[]>, nodes: Map<string, GraphNode>): void {
  for (const layer of layers) for (const [i, n] of layer.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).entries()) n.order = i;
  for (let sweep = 0; sweep < 6; sweep++) {
    const seq = sweep % 2 === 0 ? layers : [...layers].reverse();
    for (const layer of seq) {
      const score = new Map<string, number>();
      for (const n of layer) {
        const ns = (neighbours.get(n.id) ?? []).map((m) => nodes.get(m)!.order);
        score.set(n.id, ns.length === 0 ? n.order : ns.reduce((a, b) => a + b, 0) / ns.length);
      }
      for (const [i, n] of layer.sort((a, b) => score.get(a.id)! - score.get(b.id)! || a.order - b.order).entries()) n.order = i;
    }
  }
}

/**
 * A layered drawing of the flow graph, left to right: each node one layer right of its furthest
 * predecessor, layers ordered to keep parallel chains (one per day of a day-parameterised flow)
 * on one line, and each node placed level with its predecessors when there is room.
 */
export function layout(edges: readonly FlowEdge[]): Layout {
  const { nodes, links } = nodesOf(edges);
  const out = new Map<string, string[]>();
  const neighbours = new Map<string, string[]>();
  const push = (m: Map<string, string[]>, k: string, v: string): void => void (m.get(k) ?? m.set(k, []).get(k)!).push(v);
  for (const l of links) {
    push(out, l.from, l.to);
    push(neighbours, l.from, l.to);
    push(neighbours, l.to, l.from);
  }
  assignLayers(nodes, out);
  const layers: GraphNode[][] = [];
  for (const n of nodes.values()) (layers[n.layer] ??= []).push(n);
  const dense = layers.filter((l) => l !== undefined);
  orderLayers(dense, neighbours, nodes);
  let x = MARGIN;
  let height = 0;
  const preds = new Map<string, string[]>();
  for (const l of links) push(preds, l.to, l.from);
  for (const layer of dense) {
    const width = Math.max(...layer.map((n) => n.width));
    let floor = MARGIN;
    for (const n of layer) {
      const ys = (preds.get(n.id) ?? [])
        .map((p) => nodes.get(p)!)
        .filter((p) => p.layer < n.layer)
        .map((p) => p.y);
      const wanted = ys.length === 0 ? floor : ys.reduce((a, b) => a + b, 0) / ys.length;
      n.x = x;
      n.y = Math.max(floor, wanted);
      floor = n.y + ROW;
    }
    height = Math.max(height, floor);
    x += width + GAP;
  }
  return { nodes: [...nodes.values()], edges: links, width: Math.max(x - GAP + MARGIN, 200), height: height + MARGIN };
}
