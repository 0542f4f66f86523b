// Durable file writes: publish a new file atomically (temp + fsync + link), append with truncate-back on failure.
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  fsync,
  fsyncSync,
  linkSync,
  openSync,
  readSync,
  rmSync,
  writeSync,
} from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

import type { Durability } from "../backend.js";
import type { OpenFile } from "./file-state.js";

export type { Durability };

/**
 * The operations whose failure a write must survive. The backend takes them as an internal
 * option, so tests can make a real write or fsync fail (say, half the bytes written, then EIO)
 * and check what is left on disk.
 */
export interface FileOps {
  /** Writes all of `data` at `position`. */
  write(file: OpenFile, data: Uint8Array, position: number): Promise<void>;
  /**
   * Flushes a file's (or a directory's) data and metadata to the disk. `alone`: no other write of
   * the backend is going on, so the flush may hold the calling thread.
   */
  sync(file: OpenFile, alone: boolean): Promise<void>;
}

const fsyncInPool = promisify(fsync);

/**
 * The file operations of `node:fs`. A write only copies bytes into the page cache, so it is done
 * synchronously (a round trip through the thread pool costs more than the copy). The flush waits
 * for the disk: while other writes are going on it runs in the thread pool, so that their work
 * goes on meanwhile (and the file system can commit their flushes together); a write going on
 * alone flushes on the calling thread, since the round trip to the pool and back (two wake-ups
 * of another thread) cost a lone append more than the flush it saves the thread from waiting for.
 */
export const NODE_FILE_OPS: FileOps = {
  async write(file, data, position) {
    let done = 0;
    while (done < data.length) {
      done += writeSync(file.fd, data, done, data.length - done, position + done);
    }
  },
  async sync(file, alone) {
    if (alone) fsyncSync(file.fd);
    else await fsyncInPool(file.fd);
  },
};

/** Where a published file landed: its identity (to recognise it later) and size. */
export interface FileIdentity {
  /** Device and inode, as one string. */
  readonly key: string;
  readonly size: number;
}

/** Writes files so that an acknowledged write is durable and a failed one leaves nothing behind. */
export class DurableFiles {
  readonly mode: Durability;
  readonly ops: FileOps;
  /** The writes going on through {@link writing}: a flush is `alone` while there is one. */
  #writes = 0;

  constructor(mode: Durability, ops: FileOps) {
    this.mode = mode;
    this.ops = ops;
  }

  /** Runs one write (its reads, writes and flushes), counted while it goes on (see {@link FileOps.sync}). */
  async writing<T>(task: () => Promise<T>): Promise<T> {
    this.#writes++;
    try {
      return await task();
    } finally {
      this.#writes--;
    }
  }

  /** Whether no write but the caller's is going on (see {@link FileOps.sync}). */
  get #alone(): boolean {
    return this.#writes <= 1;
  }

  /** Flushes a file, in mode "fsync". */
  async syncFile(file: OpenFile): Promise<void> {
    if (this.mode === "fsync") await this.ops.sync(file, this.#alone);
  }

  /**
   * Flushes a directory's entries (a link, an unlink), in mode "fsync". The directory is opened
   * and closed synchronously, as the temp file of {@link publish} is: each takes a few
   * microseconds, a round trip through the thread pool far longer.
   */
  async syncDir(dir: string): Promise<void> {
    if (this.mode !== "fsync") return;
    const fd = openSync(dir, "r");
    try {
      await this.ops.sync({ fd }, this.#alone);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Writes `data` at `position` (the end of what the file should keep) and flushes it. When the
   * write or the flush fails, cuts the file back to `position` (flushed too) and rethrows, so
   * nothing of an unacknowledged write stays to be duplicated by a retry.
   */
  async writeAt(handle: FileHandle, data: Uint8Array, position: number): Promise<void> {
    try {
      await this.ops.write(handle, data, position);
      await this.syncFile(handle);
    } catch (error) {
      try {
        await this.cut(handle, position);
      } catch {
        // The original failure is what the caller must see; a reader re-derives the length.
      }
      throw error;
    }
  }

  /** Truncates a file to `size` and flushes the cut. */
  async cut(handle: FileHandle, size: number): Promise<void> {
    await handle.truncate(size);
    await this.syncFile(handle);
  }

  /**
   * Creates `dir/name` with the bytes `fill` writes, atomically: they go to a temp file in the
   * same folder, which is flushed, then linked under `name` (`link` fails with EEXIST when the
   * name is taken, so two creators cannot overwrite each other); the folder is flushed and the
   * temp name removed. On any failure the temp file is removed and nothing appears under `name`.
   * @throws the file system's error (EEXIST when `name` exists).
   */
  async publish(
    dir: string,
    name: string,
    fill: (write: (bytes: Uint8Array) => Promise<void>) => Promise<void>,
  ): Promise<FileIdentity> {
    const temp = join(dir, `.${name}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
    const file = { fd: openSync(temp, "wx") };
    try {
      let position = 0;
      await fill(async (bytes) => {
        await this.ops.write(file, bytes, position);
        position += bytes.length;
      });
      await this.syncFile(file);
      const stat = fstatSync(file.fd, { bigint: true });
      // A link is a change to the folder's entries in memory (flushed next): a call through the
      // thread pool would cost more than it.
      linkSync(temp, join(dir, name));
      await this.syncDir(dir);
      return { key: `${stat.dev}:${stat.ino}`, size: Number(stat.size) };
    } finally {
      closeSync(file.fd);
      // A leftover temp name after a crash is harmless: readers only look at `.jsonl` names.
      rmSync(temp, { force: true });
    }
  }
}

/**
 * Copies bytes [from, to) of a file to `write`, a chunk at a time. The reads are synchronous: the
 * bytes were just written or are about to be copied from the page cache, and a round trip through
 * the thread pool per chunk costs more than the read.
 */
export async function copyRange(
  handle: OpenFile,
  from: number,
  to: number,
  write: (bytes: Uint8Array) => Promise<void>,
  chunkBytes: number,
): Promise<void> {
  const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(chunkBytes, to - from)));
  for (let position = from; position < to; ) {
    const length = Math.min(buffer.length, to - position);
    const bytesRead = readSync(handle.fd, buffer, 0, length, position);
    if (bytesRead === 0)
      throw new Error(`expected bytes up to ${to} of a file, got its end at ${position}`);
    await write(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
}
