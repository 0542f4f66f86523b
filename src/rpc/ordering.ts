// The queue key of a request: the params member its method orders by and that member's value.

/**
 * The queue key of a request: the params member its method orders by (the table's
 * `orderingKey`) and that member's value. Members are kept apart, so a replay id never queues
 * behind a session that happens to share its text.
 */
export function orderingKeyOf(member: string, value: string): string {
  return `${member}\u0000${value}`;
}
