// The one module through which src/ reaches generated code: types, validators and tables from schema/.
export * from "../generated/event-catalogue.gen.js";
export * from "../generated/postgres-layout.gen.js";
export * from "../generated/postgres-queries.gen.js";
export * from "../generated/rpc-client.gen.js";
export * from "../generated/rpc-errors.gen.js";
export * from "../generated/rpc-methods.gen.js";
export * from "../generated/search-fields.gen.js";
export * from "../generated/sqlite-layout.gen.js";
export * from "../generated/sqlite-queries.gen.js";
export type * from "../generated/types.gen.js";
export * from "../generated/validators.gen.js";
