/**
 * `url` with its password replaced by `***`, for messages and logs, whether or not it parses as a
 * URL: everything between the first `:` after `//` and the last `@` is hidden. A password holding
 * `@`, `:`, `/`, `#` or `%`, encoded or not, therefore never shows, and neither does any part of
 * it. A URL without `@`, or with a user and no password, has nothing to hide and is returned as is.
 */
export function redactUrl(url: string): string {
  const slashes = url.indexOf('//');
  const from = slashes < 0 ? 0 : slashes + 2;
  const at = url.lastIndexOf('@');
  if (at < from) return url;
  const colon = url.indexOf(':', from);
  if (colon < 0 || colon > at) return url;
  return `${url.slice(0, colon + 1)}***${url.slice(at)}`;
}
