/**
 * Deltas of one turn in `seq` order. The server numbers a turn's deltas 0, 1, 2...; a delta that
 * arrives early waits for the ones before it, and a repeated seq is dropped.
 */
export class SeqOrder<T extends { seq: number }> {
  private next = 0;
  private readonly waiting = new Map<number, T>();

  /** The deltas that can be applied now, in order (none while one before `item` is missing). */
  push(item: T): T[] {
    if (item.seq < this.next || this.waiting.has(item.seq)) {
      return [];
    }
    this.waiting.set(item.seq, item);
    const ready: T[] = [];
    for (let found = this.waiting.get(this.next); found !== undefined; found = this.waiting.get(this.next)) {
      this.waiting.delete(this.next);
      ready.push(found);
      this.next++;
    }
    return ready;
  }

  /** Every delta still waiting, in order: at the end of the turn a missing seq no longer holds them. */
  drain(): T[] {
    const rest = [...this.waiting.values()].sort((a, b) => a.seq - b.seq);
    this.waiting.clear();
    this.next = (rest.at(-1)?.seq ?? this.next - 1) + 1;
    return rest;
  }
}
