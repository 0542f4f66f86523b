// `npm run generate`: renders generated/ from schema/; `--check` fails on any difference instead of writing.
import { main } from "./pipeline.js";

process.exitCode = await main(process.argv.slice(2));
