import { defineConfig } from "vitest/config";

// The reliability suite (test/reliability) is long: it runs only through `npm run test:reliability`.
const reliability = process.env.SEEDLINE_RELIABILITY === "1";

export default defineConfig({
  test: {
    include: reliability ? ["test/reliability/**/*.test.ts"] : ["test/**/*.test.ts"],
    exclude: reliability ? [] : ["test/reliability/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    globalSetup: ["test/global-setup.ts"],
  },
});
