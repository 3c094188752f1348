/** A request the dashboard refused before doing anything: the HTTP status and why, in words for the page. */
export class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
