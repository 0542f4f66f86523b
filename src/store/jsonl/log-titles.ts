// The titles of a JSONL store's sessions: an explicit title in a file beside its log (the log never rewritten), else the one derived from its first user message.
import type { SessionHeader } from "../../generated.js";
import type { StoredTitles } from "../backend.js";
import { sessionNotFound } from "../errors/storage-errors.js";
import type { DerivedTitles } from "./derived-titles.js";
import type { DurableFiles } from "./durable-file.js";
import { readHeaderSync } from "./line-reader.js";
import type { LogFolder } from "./log-folder.js";
import { readExplicitTitle, removeTitleFile, writeExplicitTitle } from "./title-files.js";

/** The explicit and derived titles of a JSONL store's sessions. */
export class LogTitles {
  readonly #dir: string;
  readonly #files: DurableFiles;
  readonly #folder: LogFolder;
  readonly #derived: DerivedTitles;

  constructor(dir: string, files: DurableFiles, folder: LogFolder, derived: DerivedTitles) {
    this.#dir = dir;
    this.#files = files;
    this.#folder = folder;
    this.#derived = derived;
  }

  /**
   * Sets or clears the explicit title in the title file beside the log; run in the session's
   * order (see `JsonlBackend.setTitle`).
   * @throws StorageError SESSION_NOT_FOUND.
   */
  async set(id: string, title: string | null): Promise<void> {
    const header = this.#headerOf(id);
    if (header === undefined) throw sessionNotFound(id);
    await writeExplicitTitle(this.#files, this.#dir, header, title);
  }

  /** Both titles of a session; undefined when there is no such session. */
  async titles(id: string): Promise<StoredTitles | undefined> {
    const header = this.#headerOf(id);
    if (header === undefined) return undefined;
    const explicit = readExplicitTitle(this.#dir, id, header.createdAt);
    const derived = await this.#derivedOf(header);
    return {
      ...(explicit === undefined ? {} : { explicit }),
      ...(derived === undefined ? {} : { derived }),
    };
  }

  /** The explicit title of a session; undefined when it has none, or there is no such session. */
  explicit(id: string): string | undefined {
    const header = this.#headerOf(id);
    return header === undefined ? undefined : readExplicitTitle(this.#dir, id, header.createdAt);
  }

  /** The title a listing shows: the explicit one, else the derived one. */
  async titleOf(header: SessionHeader): Promise<string | undefined> {
    return (
      readExplicitTitle(this.#dir, header.id, header.createdAt) ?? (await this.#derivedOf(header))
    );
  }

  /** Forgets the titles of a deleted session (its title file removed). */
  async deleted(id: string): Promise<void> {
    this.#derived.delete(id);
    await removeTitleFile(this.#files, this.#dir, id);
  }

  /** The derived title (see {@link DerivedTitles}). */
  #derivedOf(header: SessionHeader): Promise<string | undefined> {
    return this.#derived.of(header, this.#folder.where(header.id));
  }

  /** The header of a stored session from its first line; undefined when there is none. */
  #headerOf(id: string): SessionHeader | undefined {
    const path = this.#folder.where(id);
    if (path === undefined) return undefined;
    return readHeaderSync(path, Buffer.allocUnsafe(4096))?.header;
  }
}
