// Keyboard: j/k move between turns of the timeline, / focuses the search box, Esc goes back one level.
import { navigate, type Route, routePath } from "./router.js";
import { LOAD_MORE_EVENT } from "./timeline.js";

/** The id of the header's search input. */
export const SEARCH_INPUT_ID = "search";

const CURRENT = "kbd-current";

/** Marks the next (`step` 1) or previous (-1) turn of the drawn timeline and scrolls it to the top. */
function moveTurn(step: 1 | -1): void {
  const turns = [...document.querySelectorAll<HTMLElement>('.timeline [data-testid="turn"]')];
  if (turns.length === 0) return;
  let index = turns.findIndex((el) => el.classList.contains(CURRENT));
  if (index < 0) {
    // Nothing marked yet: start from the first turn whose top is in or below the viewport.
    const below = turns.findIndex((el) => el.getBoundingClientRect().top >= -1);
    index = below < 0 ? turns.length - 1 : step === 1 ? below - 1 : below;
  }
  const next = index + step;
  if (next >= turns.length) {
    window.dispatchEvent(new Event(LOAD_MORE_EVENT));
    return;
  }
  if (next < 0) return;
  for (const el of turns) el.classList.remove(CURRENT);
  const target = turns[next] as HTMLElement;
  target.classList.add(CURRENT);
  target.scrollIntoView({ block: "start" });
}

/** Where Esc leads from `route`: a session's sub-view to its timeline, a session to the list. */
function upFrom(route: Route, isStatic: boolean): string | undefined {
  if (route.name === "list") {
    return route.q || route.cwd || route.prefix ? "/" : undefined;
  }
  if (route.tab !== "timeline" || route.seq !== undefined || route.turn !== undefined) {
    return routePath({ name: "session", id: route.id, tab: "timeline" });
  }
  return isStatic ? undefined : "/";
}

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** The app's keydown handler. */
export function onKeyDown(event: KeyboardEvent, route: Route, isStatic: boolean): void {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (isTyping(event.target)) {
    if (event.key === "Escape") (event.target as HTMLElement).blur();
    return;
  }
  if (event.key === "/") {
    const input = document.getElementById(SEARCH_INPUT_ID);
    if (input === null) return;
    event.preventDefault();
    input.focus();
  } else if (event.key === "j" || event.key === "k") {
    moveTurn(event.key === "j" ? 1 : -1);
  } else if (event.key === "Escape") {
    const up = upFrom(route, isStatic);
    if (up !== undefined) navigate(up);
  }
}
