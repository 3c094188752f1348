/**
 * The positions of the `?` value placeholders in `text`: every `?` outside a quoted string
 * ('...', "..."), a quoted identifier (`...`) and a comment. A backslash escapes the next character
 * inside a string, as MySQL reads it by default.
 */
export function placeholderPositions(text: string): number[] {
  const at: number[] = [];
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\' && quote !== '`') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"' || c === '`') {
      quote = c;
    } else if (c === '?') {
      at.push(i);
    } else if (c === '#' || (c === '-' && text[i + 1] === '-' && /\s/.test(text[i + 2] ?? ' '))) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
    }
  }
  return at;
}
