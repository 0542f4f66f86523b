// The page size cap of list: INVALID_PARAMS over the wire and from store.list over every backend, the bound read from the schema.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SessionStore } from "../../src/index.js";
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "../../src/store/listing/list-limit.js";
import { catalogOf } from "../../src/store/listing/scan-catalog.js";
import { backendKinds } from "../helpers/backend-kinds.js";
import { expectCode, memoryServer } from "../helpers/rpc-fixtures.js";

const kinds = backendKinds();
const dirs: string[] = [];

afterAll(async () => {
  await kinds.cleanup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const SCHEMA = JSON.parse(
  readFileSync(
    join(
      import.meta.dirname,
      "..",
      "..",
      "schema",
      "rpc",
      "methods",
      "session-list.params.schema.json",
    ),
    "utf8",
  ),
) as { properties: { limit: { maximum: number; default: number } } };

describe("the list page size", () => {
  it("is the schema's default and maximum", () => {
    expect(MAX_LIST_LIMIT).toBe(SCHEMA.properties.limit.maximum);
    expect(DEFAULT_LIST_LIMIT).toBe(SCHEMA.properties.limit.default);
    expect(MAX_LIST_LIMIT).toBe(1000);
  });

  it("is refused past the maximum over the wire as INVALID_PARAMS at /limit", async () => {
    // Seen failing before the cap: `limit: 1001` (and 100000) were answered with a page.
    const { client, server } = memoryServer();
    await client.sessionCreate({ sessionId: "one" });
    expect((await client.sessionList({ limit: MAX_LIST_LIMIT })).sessions).toHaveLength(1);
    for (const limit of [MAX_LIST_LIMIT + 1, 100_000]) {
      const error = await expectCode(client.sessionList({ limit }), "INVALID_PARAMS");
      expect(error.data).toMatchObject({ errors: [{ instancePath: "/limit" }] });
    }
    await client.close();
    await server.closed;
  });

  for (const [kind, open] of Object.entries(kinds.open)) {
    it(`is refused past the maximum by store.list and by the ${kind} backend itself (StorageError INVALID_PARAMS)`, async () => {
      // Seen failing before the cap: every backend listed with `limit: 100000`.
      const dir = mkdtempSync(join(tmpdir(), `seedline-limit-${kind}-`));
      dirs.push(dir);
      const backend = await open(dir);
      const store = new SessionStore({ backend });
      await store.create({ id: "one" });
      expect((await store.list({ limit: MAX_LIST_LIMIT })).sessions).toHaveLength(1);
      expect((await store.list()).sessions).toHaveLength(1);
      for (const limit of [MAX_LIST_LIMIT + 1, 100_000, 0, 1.5]) {
        await expect(store.list({ limit })).rejects.toMatchObject({
          name: "StorageError",
          code: "INVALID_PARAMS",
          details: { errors: [{ instancePath: "/limit" }] },
        });
        await expect(catalogOf(backend).list({ limit })).rejects.toMatchObject({
          code: "INVALID_PARAMS",
        });
      }
      await store.close();
    });
  }
});
