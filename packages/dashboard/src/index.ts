export { dashboardHandler } from './handler.js';
export type { DashboardOptions } from './options.js';
export { metricsHandler, registerTaskrowMetrics, type TaskrowMetricsOptions } from './metrics/collector.js';
export { workerMetrics, type WorkerMetrics, type WorkerMetricsOptions } from './metrics/worker.js';
export { escapeHtml } from './html/escape.js';
export { layout as flowLayout, type Layout as FlowLayout, type GraphNode as FlowNode } from './graph/layout.js';
