// PostgreSQL refusals as storage conditions: a role without write privileges (42501) and a read-only role (25006) answer STORAGE_REFUSED.
//
// Seen failing before the fix (src/ at d7a1030): both writes rejected with the driver's
// DatabaseError (no `code` of seedline's), which the server answers INTERNAL.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hasCode, PostgresBackend } from "../../../src/index.js";
import { testHeader } from "../../helpers/builders.js";
import {
  describePostgres,
  freshSchemaName,
  POSTGRES_TEST_URL,
  sql,
} from "../../helpers/postgres-harness.js";

describePostgres("PostgreSQL refusals", () => {
  const schema = freshSchemaName();
  const role = `seedline_r_${randomBytes(4).toString("hex")}`;
  /** The test server's URL as `user`. */
  const as = (user: string) => {
    const url = new URL(POSTGRES_TEST_URL);
    url.username = user;
    url.password = "";
    return url.toString();
  };

  beforeAll(async () => {
    // The layout, made by the owner; then a role that may read it but not write it.
    const owner = await PostgresBackend.open(POSTGRES_TEST_URL, { schema });
    await owner.close();
    await sql(`CREATE ROLE ${role} LOGIN`);
    await sql(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
    await sql(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
  });
  afterAll(async () => {
    await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await sql(`DROP OWNED BY ${role}`).catch(() => undefined);
    await sql(`DROP ROLE IF EXISTS ${role}`);
  });

  it("insufficient_privilege (42501) is STORAGE_REFUSED no-permission at the store's location", async () => {
    const backend = await PostgresBackend.open(as(role), { schema });
    try {
      const error = await backend.create(testHeader("refused"), []).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(hasCode(error, "STORAGE_REFUSED"), String(error)).toBe(true);
      expect((error as { details: unknown }).details).toEqual({
        condition: "no-permission",
        location: backend.location,
      });
      // Reading goes on.
      expect(await backend.has("refused")).toBe(false);
    } finally {
      await backend.close();
    }
  });

  it("read_only_sql_transaction (25006) is STORAGE_REFUSED read-only", async () => {
    await sql(`GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
    await sql(`ALTER ROLE ${role} SET default_transaction_read_only = on`);
    const backend = await PostgresBackend.open(as(role), { schema });
    try {
      const error = await backend.create(testHeader("read-only"), []).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(hasCode(error, "STORAGE_REFUSED"), String(error)).toBe(true);
      expect((error as { details: unknown }).details).toMatchObject({ condition: "read-only" });
    } finally {
      await backend.close();
    }
  });
});
