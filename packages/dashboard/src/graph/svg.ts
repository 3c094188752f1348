import { html, type Html } from '../html/escape.js';
import { MAX_LABEL, ROW, type Layout } from './layout.js';

const H = ROW - 8;

/**
 * The laid-out flow graph as inline SVG: keys and jobs as labelled boxes (each a link made by
 * `href`, its full name as tooltip), edges as curves from the right of a node to the left of the
 * next. Every name is escaped.
 */
export function flowSvg(g: Layout, href: (name: string) => string, focus: string | undefined): Html {
  const at = new Map(g.nodes.map((n) => [n.id, n]));
  const paths = g.edges.map((e) => {
    const a = at.get(e.from)!;
    const b = at.get(e.to)!;
    const x1 = a.x + a.width;
    const y1 = a.y + H / 2;
    const x2 = b.x;
    const y2 = b.y + H / 2;
    const dx = Math.max(30, Math.abs(x2 - x1) / 2);
    return html`<path d="M${x1.toFixed(1)},${y1.toFixed(1)} C${(x1 + dx).toFixed(1)},${y1.toFixed(1)} ${(x2 - dx).toFixed(1)},${y2.toFixed(1)} ${x2.toFixed(1)},${y2.toFixed(1)}" marker-end="url(#arrow)"/>`;
  });
  const boxes = g.nodes.map((n) => {
    const label = n.name.length > MAX_LABEL ? `${n.name.slice(0, MAX_LABEL - 1)}…` : n.name;
    const cls = `node ${n.kind}${n.name === focus ? ' focus' : ''}`;
    return html`<a href="${href(n.name)}"><g class="${cls}" data-name="${n.name}" data-kind="${n.kind}"><title>${n.kind} ${n.name}</title>
<rect x="${n.x.toFixed(1)}" y="${n.y.toFixed(1)}" width="${n.width.toFixed(1)}" height="${H}" rx="${n.kind === 'job' ? 3 : 10}"/>
<text x="${(n.x + 9).toFixed(1)}" y="${(n.y + H / 2 + 4).toFixed(1)}">${label}</text></g></a>`;
  });
  return html`<svg class="flow" xmlns="http://www.w3.org/2000/svg" width="${Math.ceil(g.width)}" height="${Math.ceil(g.height)}" viewBox="0 0 ${Math.ceil(g.width)} ${Math.ceil(g.height)}" role="img" aria-label="Resources flow graph">
<defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#9aa6b5"/></marker></defs>
<g class="edges">${paths}</g><g class="nodes">${boxes}</g></svg>`;
}
