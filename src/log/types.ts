// Types of the session-model layer that the schema does not state (derived from generated ones).
import type { SessionEvent, SurfaceEligibleType } from "../generated.js";

/** The event of a given type. */
export type EventOf<T extends SessionEvent["type"]> = Extract<SessionEvent, { readonly type: T }>;

/** An event that carries `surfaceOp`: one of the five surface-eligible types. */
export type SurfaceEvent = EventOf<SurfaceEligibleType>;
