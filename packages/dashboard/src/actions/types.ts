import type { PageContext } from '../context.js';
import type { DashboardSettings } from '../options.js';

/** What an action is given: the page context (route params decoded), the settings and the checked form. */
export interface ActionInput {
  readonly ctx: PageContext;
  readonly settings: DashboardSettings;
  readonly form: URLSearchParams;
}

/** What an action did: the result page's title and sentence, where "Back" leads, and the log's details. */
export interface Outcome {
  readonly title: string;
  readonly what: string;
  readonly back: string;
  readonly details: Record<string, unknown>;
}

/** One POST action: its path (captures are the params), its confirmation question, and its run. */
export interface Action {
  readonly name: string;
  readonly pattern: RegExp;
  /**
   * The question a confirmation page asks before the action runs, or undefined to run at once.
   * MUST validate the form as `run` would, so a bad form is refused before the question.
   */
  confirm?(input: ActionInput): string | undefined;
  run(input: ActionInput): Promise<Outcome>;
}

/** A path segment of a route: one captured, non-empty segment. */
export const SEG = '([^/]+)';
