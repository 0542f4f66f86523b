// Lets the app import its style sheet: esbuild bundles the CSS into app.css.
declare module "*.css";
