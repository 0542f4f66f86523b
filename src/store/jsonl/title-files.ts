// JSONL titles: the explicit title in a small file beside the log, and the derived one read from the log's first lines.
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { titleFromContent } from "../../log/session-title.js";
import { isErrno } from "../../util/errno.js";
import { encodeSessionId } from "../ids/id-encoding.js";
import type { DurableFiles } from "./durable-file.js";
import { readLines } from "./line-reader.js";

/** The suffix of a title file: not `.jsonl`, so listing never takes it for a log. */
export const TITLE_SUFFIX = ".title.json";

/** The title file of session `id` (the same encoded name as its log). */
export function titleFileName(id: string): string {
  return `${encodeSessionId(id)}${TITLE_SUFFIX}`;
}

/**
 * The explicit title stored for the session `id` created at `createdAt`; undefined when none, or
 * when the file belongs to an earlier session of that id (deleted before its title file went).
 */
export function readExplicitTitle(dir: string, id: string, createdAt: number): string | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, titleFileName(id)), "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  try {
    const value = JSON.parse(text) as { id?: unknown; createdAt?: unknown; title?: unknown };
    return value.id === id && value.createdAt === createdAt && typeof value.title === "string"
      ? value.title
      : undefined;
  } catch {
    return undefined; // a damaged title file is no title; the log is untouched
  }
}

/**
 * Stores (or, with null, removes) the explicit title of a session atomically: a temp file in the
 * folder, flushed, renamed over the title file, and the folder flushed.
 */
export async function writeExplicitTitle(
  files: DurableFiles,
  dir: string,
  header: { readonly id: string; readonly createdAt: number },
  title: string | null,
): Promise<void> {
  const path = join(dir, titleFileName(header.id));
  if (title === null) {
    await removeTitleFile(files, dir, header.id);
    return;
  }
  const temp = join(
    dir,
    `.${titleFileName(header.id)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`,
  );
  const handle = await open(temp, "wx");
  try {
    const text = `${JSON.stringify({ id: header.id, createdAt: header.createdAt, title })}\n`;
    await handle.writeFile(text, "utf8");
    await files.syncFile(handle);
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  await files.syncDir(dir);
}

/** Removes the title file of session `id`, if any (with the log, or when the title is cleared). */
export async function removeTitleFile(files: DurableFiles, dir: string, id: string): Promise<void> {
  try {
    await unlink(join(dir, titleFileName(id)));
  } catch (error) {
    if (isErrno(error, "ENOENT")) return;
    throw error;
  }
  await files.syncDir(dir);
}

/**
 * The title derived from the log at `path`: its lines are read from the top until the first
 * `user/message` (usually a few lines in); undefined when the log has none or is gone.
 */
export async function readDerivedTitle(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  let title: string | undefined;
  try {
    await readLines(
      handle,
      (line) => {
        if (line.number === 1 || !line.terminated || !line.text.includes('"user/message"')) {
          return undefined;
        }
        try {
          const event = JSON.parse(line.text) as { type?: unknown; data?: { content?: unknown } };
          if (event.type !== "user/message") return undefined;
          title = titleFromContent(event.data?.content);
        } catch {
          return undefined; // a bad line is the log reader's to judge
        }
        return "stop";
      },
      64 * 1024,
    );
  } finally {
    await handle.close();
  }
  return title;
}
