// Recognises Node's system errors by their errno code (ENOENT, EEXIST…), the one check every file-system caller needs.

/** Whether `error` is a Node system error with errno code `code`. */
export function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
