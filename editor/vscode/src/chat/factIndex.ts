/**
 * What the chat knows of the facts its "memory used" lines name: their text, status and drift,
 * from `lecode/facts/list` (the Facts view's source), read a page at a time from the first fact
 * until every asked-for ID is seen, at most MAX_PAGES pages, and kept until facts or anchors
 * change (the extension calls `clear`).
 */
import { serverErrorCode } from "../common/errors";
import type { FactEntry } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import { placeOf } from "./memoryUsed";
import type { FactView } from "./messages";

/** 50 pages of 20: the first 1,000 facts of a project. */
export const MAX_PAGES = 50;

/** A fact as the chat shows it: the worst drift of its anchors named with its place. */
export function factView(fact: FactEntry): FactView {
  const drifted = (fact.anchors ?? []).filter((a) => a.status === "changed" || a.status === "deleted");
  const worst = drifted.find((a) => a.status === "deleted") ?? drifted[0];
  return {
    factId: fact.factId,
    revision: fact.revision,
    status: fact.status,
    ...(fact.text ? { text: fact.text } : {}),
    ...(worst ? { drift: `${worst.status}: ${placeOf(worst)}` } : {}),
  };
}

interface Loaded {
  facts: Map<number, FactView>;
  /** Where the next page starts; null once the list was read to its end. */
  next: number | null;
  pages: number;
}

export class FactIndex {
  private readonly loaded = new Map<string, Loaded>();

  constructor(private readonly sender: RequestSender) {}

  /** Forget what was read (facts or their anchors changed). */
  clear(): void {
    this.loaded.clear();
  }

  /** The facts of `ids` that the project's list has, as views (memory off: none). */
  async lookup(folderUri: string | undefined, ids: readonly number[]): Promise<FactView[]> {
    const key = folderUri ?? "";
    const known = this.loaded.get(key) ?? { facts: new Map(), next: 0, pages: 0 };
    this.loaded.set(key, known);
    const wanted = Math.max(0, ...ids);
    const highest = (): number => Math.max(0, ...known.facts.keys());
    while (known.next !== null && known.pages < MAX_PAGES && highest() < wanted) {
      let page;
      try {
        page = await request(this.sender, Requests.factsList, { workspaceUri: folderUri, offset: known.next });
      } catch (error) {
        if (serverErrorCode(error) === "memory_disabled") {
          known.next = null;
          break;
        }
        throw error;
      }
      for (const fact of page.facts) {
        known.facts.set(fact.factId, factView(fact));
      }
      known.next = page.nextOffset;
      known.pages++;
    }
    return ids.map((id) => known.facts.get(id)).filter((view): view is FactView => view !== undefined);
  }
}
