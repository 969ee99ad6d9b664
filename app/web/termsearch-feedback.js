/**
 * Learning from use in the browser: tell the server (POST /feedback) which result a user chose,
 * at which rank, and which name they flagged as wrong. Nothing is in the user's way: a failure
 * (the feature off: 404) is silent.
 *
 * A query that found nothing is remembered for a few minutes in this tab: when the user then
 * finds the concept by other words and chooses it, the server hears that the first query meant it
 * too (shown 0: no label held it).
 */

const UNANSWERED = "termsearch-unanswered";
const REMEMBER_MS = 10 * 60 * 1000;

export function report(event) {
  return fetch("/feedback", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ surface: "browser", ...event }),
    keepalive: true,
  }).then((response) => response.ok, () => false);
}

/** The query found nothing: report it, and remember it for the next choice in this tab. */
export function unanswered(query, system) {
  sessionStorage.setItem(UNANSWERED, JSON.stringify({ query, system, at: Date.now() }));
  report({ query, system, action: "abandoned", shown: 0 });
}

/** The user chose ``code`` for ``query`` at ``rank`` of ``shown`` (and for an earlier unanswered query). */
export function chose(query, system, code, rank, shown) {
  report({ query, system, code, rank, shown, action: "chose" });
  meant(query, system, code);
}

/** A concept was chosen (for ``query``, by a result or a suggestion): an earlier query of the same
 * system that found nothing meant it too. */
export function meant(query, system, code) {
  const earlier = JSON.parse(sessionStorage.getItem(UNANSWERED) || "null");
  sessionStorage.removeItem(UNANSWERED);
  if (earlier && earlier.system === system && earlier.query !== query && Date.now() - earlier.at < REMEMBER_MS) {
    report({ query: earlier.query, system, code, shown: 0, action: "chose" });
  }
}
