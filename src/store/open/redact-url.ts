// A store URL fit to show: its password taken out (kept apart from the PostgreSQL backend so that showing a URL loads no driver).

/** The URL without its password, for messages and for what a viewer tells of its store. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1@");
}
