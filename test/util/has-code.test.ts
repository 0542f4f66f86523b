// hasCode and errorCode read an SDK error and the typed client's error response alike.
import { afterAll, describe, expect, it } from "vitest";
import {
  errorCode,
  hasCode,
  RpcResponseError,
  SeedlineError,
  SessionStore,
  SqliteBackend,
} from "../../src/index.js";
import { spawnedClient, tempDir } from "../helpers/rpc-fixtures.js";
import { rejectionOf } from "../helpers/store-builders.js";

const temp = tempDir("seedline-has-code-");
afterAll(() => temp.remove());

describe("hasCode", () => {
  it("is true for the client's RpcResponseError when reading a missing session from a spawned server", async () => {
    // Seen failing before the change: hasCode(e, "SESSION_NOT_FOUND") was false here — it tested
    // `instanceof SeedlineError` only, so callers had to know to read `e.dataCode` instead.
    const { client } = spawnedClient(`sqlite:${temp.dir}/wire.db`, "ndjson");
    const error = await rejectionOf(client.sessionRead({ sessionId: "missing" }));
    expect(error).toBeInstanceOf(RpcResponseError);
    expect(hasCode(error, "SESSION_NOT_FOUND")).toBe(true);
    expect(hasCode(error, "SESSION_BUSY")).toBe(false);
    expect(errorCode(error)).toBe("SESSION_NOT_FOUND");
    if (!hasCode(error, "SESSION_NOT_FOUND")) throw error;
    // The narrowed error carries its details as an SDK error does.
    expect(error.details).toEqual({ sessionId: "missing" });
    await client.close();
    expect(await client.exited).toEqual({ code: 0, signal: null });
  });

  it("is true for the SDK's error when reading a missing session from a store", async () => {
    const store = new SessionStore({ backend: await SqliteBackend.open(`${temp.dir}/sdk.db`) });
    const error = await rejectionOf(store.read("missing"));
    expect(error).toBeInstanceOf(SeedlineError);
    expect(hasCode(error, "SESSION_NOT_FOUND")).toBe(true);
    expect(errorCode(error)).toBe("SESSION_NOT_FOUND");
    if (!hasCode(error, "SESSION_NOT_FOUND")) throw error;
    expect(error.details).toEqual({ sessionId: "missing" });
    await store.close();
  });

  it("is false for anything that carries no seedline code", () => {
    expect(hasCode(new Error("SESSION_NOT_FOUND"), "SESSION_NOT_FOUND")).toBe(false);
    expect(hasCode({ code: "SESSION_NOT_FOUND" }, "SESSION_NOT_FOUND")).toBe(false);
    // A protocol error response has no data.code.
    const protocol = new RpcResponseError(-32601, "no such method", { method: "x" });
    expect(errorCode(protocol)).toBeUndefined();
    expect(hasCode(protocol, "INVALID_PARAMS")).toBe(false);
    expect(errorCode(undefined)).toBeUndefined();
  });
});
