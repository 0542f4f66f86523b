// The public entry of the seedline package.
export * from "./generated.js";
