/** Full-page navigation (the console has no client-side router yet: each page is its own load). */
export function go(url: string): void {
  window.location.assign(url);
}

/** The current path and query, as a return_to for the login page. */
export function currentPath(): string {
  return window.location.pathname + window.location.search;
}
