// Type-level tests: checked by `npm run typecheck` (tsc over test/), and run as no-ops by vitest.
import { describe, expectTypeOf, it } from "vitest";
import type {
  AssistantChunkEvent,
  ContentBlock,
  SessionEvent,
  SessionHeader,
  StreamChunk,
  SURFACE_ELIGIBLE_TYPES,
  SurfaceEligibleType,
  SurfaceOp,
  ToolResultData,
  TurnEndReason,
  TurnStartData,
  TurnStartEvent,
  UserMessageEvent,
} from "../../src/generated.js";

type SurfaceCarrier = Extract<SessionEvent, { surfaceOp: unknown }>;

describe("generated types", () => {
  it("narrows data by the event type", () => {
    const narrow = (event: SessionEvent) => {
      if (event.type === "turn/start") {
        expectTypeOf(event.data).toEqualTypeOf<TurnStartData>();
        expectTypeOf(event.data.trigger.kind).toEqualTypeOf<"message" | "injection">();
      }
      if (event.type === "assistant/chunk") {
        expectTypeOf(event.data.chunk).toEqualTypeOf<StreamChunk>();
      }
      if (event.type === "tool/result") {
        expectTypeOf(event.data).toEqualTypeOf<ToolResultData>();
        expectTypeOf(event.surfaceOp).toEqualTypeOf<SurfaceOp>();
      }
      if (event.type === "turn/end") {
        expectTypeOf(event.data.reason).toEqualTypeOf<TurnEndReason>();
      }
    };
    expectTypeOf(narrow).toBeFunction();
  });

  it("puts surfaceOp on the surface variants only", () => {
    expectTypeOf<SurfaceCarrier["type"]>().toEqualTypeOf<SurfaceEligibleType>();
    expectTypeOf<(typeof SURFACE_ELIGIBLE_TYPES)[number]>().toEqualTypeOf<
      "user/message" | "context/message" | "assistant/message" | "tool/result" | "steering/message"
    >();
    expectTypeOf<UserMessageEvent["surfaceOp"]>().toEqualTypeOf<SurfaceOp>();
    expectTypeOf<TurnStartEvent>().not.toHaveProperty("surfaceOp");
    expectTypeOf<TurnStartEvent>().not.toHaveProperty("sourceEventSeqs");
    expectTypeOf<AssistantChunkEvent>().not.toHaveProperty("surfaceOp");
    expectTypeOf<SurfaceOp>().toEqualTypeOf<
      "append" | { readonly op: "replace"; readonly start: number; readonly end: number }
    >();
  });

  it("makes events and their arrays immutable", () => {
    const mutate = (
      event: UserMessageEvent,
      header: SessionHeader,
      blocks: readonly ContentBlock[],
    ) => {
      // @ts-expect-error seq is readonly
      event.seq = 1;
      // @ts-expect-error content is a readonly array
      event.data.content.push({ type: "text", text: "x" });
      // @ts-expect-error header members are readonly
      header.seedLength = 3;
      return blocks;
    };
    expectTypeOf(mutate).toBeFunction();
    expectTypeOf<UserMessageEvent["data"]["content"]>().toEqualTypeOf<readonly ContentBlock[]>();
  });

  it("keeps optional header members optional and the format version literal", () => {
    expectTypeOf<SessionHeader["version"]>().toEqualTypeOf<0>();
    expectTypeOf<SessionHeader>().toHaveProperty("seedLength").toEqualTypeOf<number | undefined>();
    expectTypeOf<Pick<SessionHeader, "id" | "createdAt">>().toEqualTypeOf<{
      readonly id: string;
      readonly createdAt: number;
    }>();
  });
});
