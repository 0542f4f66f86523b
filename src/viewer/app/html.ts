// htm bound to Preact's h: the app's templates are tagged template literals, no JSX transform.
import htm from "htm";
import { h } from "preact";

/** Builds Preact elements from a tagged template; values are passed as props or text, never parsed as HTML. */
export const html = htm.bind(h);
