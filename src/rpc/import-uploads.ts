// The session/import uploads one connection holds in parts: capped in bytes and count, expired when idle, dropped with it.
import { SeedlineError, show } from "../errors.js";
import type { SessionImportStaged } from "../generated.js";

/** How many bytes of log text one connection's uploads may hold together, unless told otherwise. */
export const DEFAULT_UPLOAD_BYTES = 512 * 1024 * 1024;

/** How many uploads one connection may hold at once, unless told otherwise. */
export const DEFAULT_MAX_UPLOADS = 16;

/** How long (ms) an upload may go without a part before it is dropped, unless told otherwise. */
export const DEFAULT_UPLOAD_IDLE_MS = 600_000;

/** What an upload holds so far. */
export type UploadState = SessionImportStaged;

interface Upload {
  readonly parts: string[];
  bytes: number;
  lastPart: number;
}

/**
 * The uploads of one connection, by the client's importId: each holds the parts of a log sent
 * with `more: true` until its last part takes them ({@link take}). Together they hold at most
 * `maxBytes` of UTF-8 text and at most `max` uploads; one without a part for `idleMs` is
 * dropped (swept every `idleMs / 2`); {@link close} drops them all, for the end of the connection.
 * Nothing held is stored: a session appears only when its last part is imported.
 */
export class ImportUploads {
  readonly #maxBytes: number;
  readonly #max: number;
  readonly #idleMs: number;
  readonly #now: () => number;
  readonly #uploads = new Map<string, Upload>();
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    options: { maxBytes?: number; max?: number; idleMs?: number; now?: () => number } = {},
  ) {
    this.#maxBytes = options.maxBytes ?? DEFAULT_UPLOAD_BYTES;
    this.#max = options.max ?? DEFAULT_MAX_UPLOADS;
    this.#idleMs = options.idleMs ?? DEFAULT_UPLOAD_IDLE_MS;
    this.#now = options.now ?? Date.now;
  }

  /** How many uploads are held. */
  get size(): number {
    return this.#uploads.size;
  }

  /** Starts sweeping idle uploads; an infinite or non-positive `idleMs` never drops any. */
  start(): void {
    if (!(this.#idleMs > 0 && Number.isFinite(this.#idleMs)) || this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.sweep(), Math.max(1, Math.floor(this.#idleMs / 2)));
    this.#timer.unref();
  }

  /** Drops the uploads that got no part for `idleMs`. */
  sweep(): void {
    const now = this.#now();
    for (const [id, upload] of this.#uploads) {
      if (now - upload.lastPart >= this.#idleMs) this.#drop(id);
    }
  }

  /**
   * Adds `text` as the next part of upload `importId` (a new upload when none is held under it).
   * @returns what the upload holds now.
   * @throws SeedlineError INVALID_PARAMS when the part would take the connection's uploads past
   *   their byte cap, or would open one upload too many; the upload is dropped.
   */
  add(importId: string, text: string): UploadState {
    const bytes = Buffer.byteLength(text, "utf8");
    let upload = this.#uploads.get(importId);
    if (upload === undefined) {
      if (this.#uploads.size >= this.#max) {
        throw capError(
          "/importId",
          `expected at most ${this.#max} uploads held at once on a connection, got a new one (${show(importId)}); finish or abandon the others first`,
        );
      }
      upload = { parts: [], bytes: 0, lastPart: this.#now() };
      this.#uploads.set(importId, upload);
    }
    if (this.#bytes + bytes > this.#maxBytes) {
      this.#drop(importId);
      throw capError(
        "/log",
        `expected the uploads held on a connection to total at most ${this.#maxBytes} bytes, got ${this.#bytes + bytes} with this part of ${show(importId)}; the upload was dropped`,
      );
    }
    upload.parts.push(text);
    upload.bytes += bytes;
    upload.lastPart = this.#now();
    this.#bytes += bytes;
    return { importId, parts: upload.parts.length, bytes: upload.bytes };
  }

  /**
   * The whole text of upload `importId`, its held parts then `last`; the upload is dropped.
   * @throws SeedlineError INVALID_PARAMS when no upload is held under `importId` (never started,
   *   expired, dropped past a cap, or already imported).
   */
  take(importId: string, last: string): string {
    const upload = this.#uploads.get(importId);
    if (upload === undefined) {
      throw capError(
        "/importId",
        `expected an importId whose parts this connection holds, got ${show(importId)} (never sent with more: true, idle for ${this.#idleMs} ms, dropped past a cap, or already imported)`,
      );
    }
    this.#drop(importId);
    upload.parts.push(last);
    return upload.parts.join("");
  }

  /** Drops every upload and stops sweeping (the connection closed). */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#uploads.clear();
    this.#bytes = 0;
  }

  #drop(importId: string): void {
    const upload = this.#uploads.get(importId);
    if (upload === undefined) return;
    this.#uploads.delete(importId);
    this.#bytes -= upload.bytes;
  }
}

function capError(instancePath: string, message: string): SeedlineError<"INVALID_PARAMS"> {
  return new SeedlineError("INVALID_PARAMS", message, { errors: [{ instancePath, message }] });
}
