// A count with its noun in singular or plural, for messages and rendered text.

/** `count` with the noun in singular or plural: "1 event", "3 events". */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}
