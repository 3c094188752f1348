import type { Action } from './types.js';

const locks = (form: URLSearchParams) => {
  const key = form.get('key') ?? '';
  return { key, inputs: form.get('inputs') === '1' ? [key] : [], outputs: form.get('outputs') === '1' ? [key] : [] };
};

/** Force-release of a resource key's locks, after a confirmation. */
export const RESOURCE_ACTIONS: readonly Action[] = [
  {
    name: 'force-release',
    pattern: /^\/resources\/force-release$/,
    confirm: ({ form }) => `Force-release the locks on key ${JSON.stringify(locks(form).key)}? Their holders see them lost.`,
    async run({ ctx, settings, form }) {
      const { key, inputs, outputs } = locks(form);
      const n = await settings.resources(ctx.taskrow).forceRelease({ inputs, outputs });
      return {
        title: 'Force-release',
        what: `Removed ${n} lock(s) on key ${JSON.stringify(key)}.`,
        back: '/resources',
        details: { key, inputs: inputs.length > 0, outputs: outputs.length > 0, count: n },
      };
    },
  },
];
