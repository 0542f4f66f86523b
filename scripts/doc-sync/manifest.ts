// What docs/persistence.md must document: the type-equiv blocks, the derived names it may declare, the generated regions.
import { DOC_REGION_NAMES, type DocRegionName } from "../render-docs.js";

/** The persistence document, relative to the docs folder's root. */
export const PERSISTENCE_DOC = "docs/persistence.md";

/**
 * The types docs/persistence.md must declare in ```ts type-equiv``` blocks, each type-equal to the
 * package's type of the same name: the header, the create options, the event envelope (the
 * derived `EventEnvelope`, a plain and a surface-eligible variant), the surface op and the fork
 * error codes.
 */
export const REQUIRED_TYPE_EQUIV: readonly string[] = [
  "SessionHeader",
  "CreateSessionOptions",
  "CreateSessionMeta",
  "EventEnvelope",
  "TurnStartEvent",
  "UserMessageEvent",
  "SurfaceOp",
  "ReplaceSurfaceOp",
  "ForkErrorCode",
];

/** A name the docs may declare that no module exports, defined here over the package's types. */
export interface DerivedType {
  /** A type expression over generated types and the SDK's exports. */
  readonly definition: string;
  /** Why the name exists. */
  readonly description: string;
}

/**
 * Names that exist for readers only. A block declaring one is compared with its definition here,
 * whose names resolve as a block's do (generated types first, then the SDK's exports).
 */
export const DERIVED_TYPES: Readonly<Record<string, DerivedType>> = {
  EventEnvelope: {
    definition: 'Pick<SessionEvent, "type" | "seq" | "time" | "data">',
    description:
      "The members every event has, whatever its type: the envelope without the surface members.",
  },
};

/** The generated regions docs/persistence.md must hold. */
export const REQUIRED_REGIONS: readonly DocRegionName[] = DOC_REGION_NAMES;
