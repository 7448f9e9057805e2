/**
 * The "Facts" tree (view `lecode.facts` in the lecode activity-bar container).
 *
 * Per project, one node per fact of `lecode/facts/list` (every page, up to a cap with a "more…"
 * node), labelled with its text and described as `#id r<revision> <status>`. A valid fact's
 * children are its source (session and seqs), which opens the transcript with the cited records
 * selected, and, for a verified project fact (`<path> contains "<line>"`), the project file.
 * A fact anchored to code lines shows its worst drift in its description (`· changed`) and each
 * anchor as a child that opens the file at the anchored lines (see anchorItems.ts).
 * Folders of one project appear once (see ProjectIndex); with several projects each gets a root.
 * Above the facts, the memory's health (the doctor's numbers), the facts proposed for retirement
 * (see hygieneItems.ts), the latest automatic learning and its proposals (learningItems.ts), and
 * the facts shared with the team in the checkout (teamItems.ts). A fact of yours that is shared
 * says so (`· shared`, and which file to commit) and offers Stop Sharing instead of Share.
 * With the "current file" filter on, only the facts anchored in the active editor's file are
 * listed (`path` of `lecode/facts/list`), under no project node, with no learning above them;
 * with a search (Search Facts…), the facts that rank for its words (`query`), best first.
 * Fact text is untrusted data: it is only ever shown.
 */
import * as vscode from "vscode";
import type { Project, ProjectIndex } from "../common/projects";
import type { DoctorResult, FactEntry, LearningModel, RetirementModel } from "../common/protocol";
import { Requests } from "../common/protocol";
import { errorMessage } from "../common/errors";
import { type RequestSender, request } from "../common/requests";
import { parseProjectFileFact } from "../facts/projectFile";
import { STATUS_ICONS, sourceIs } from "../facts/status";
import { seqsPhrase } from "../sessions/transcript";
import { anchorTreeItem, driftSuffix, driftTooltip, driftedIcon } from "./anchorItems";
import {
  healthRowTreeItem,
  healthRows,
  healthTreeItem,
  retirementNodes,
  retirementTreeItem,
  retirementsNode,
  retirementsTreeItem,
} from "./hygieneItems";
import { learningTreeItem, proposalNodes, proposalTreeItem } from "./learningItems";
import type { FactNode, FactNodeOf, TeamListing } from "./nodes";
import { type ServerStatus, projectChildrenOr, projectRoots } from "./projectRoots";
import { loadTeam, teamChildren, teamFactTreeItem, teamNode, teamTreeItem } from "./teamItems";

/** Facts shown per project before a "more…" node; each click on it shows this many more. */
export const FACTS_CAP = 500;

export interface FactPage {
  facts: FactEntry[];
  /** Whether the project has more facts than were read. */
  more: boolean;
  /** The latest automatic learning, if any has run (as the first page reported it). */
  learning?: LearningModel;
  /** The facts proposed for retirement (as the first page of a plain listing reported them). */
  retirements?: RetirementModel[];
}

/** What a listing asks for besides its project: a file's facts (`path`, a `file:` URI) or the
 * facts ranked for a query (`query`: the server ranks them, best first, at most 200). */
export interface ListOptions {
  path?: string;
  query?: string;
}

/**
 * Up to `cap` facts of a project, following `nextOffset` page by page; with `path` (a file's
 * `file:` URI), only the facts anchored in that file; with `query`, the facts ranked for it.
 */
export async function listFacts(sender: RequestSender, folderUri: string, cap: number, options: ListOptions = {}): Promise<FactPage> {
  const facts: FactEntry[] = [];
  let offset = 0;
  let learning: LearningModel | undefined;
  let retirements: RetirementModel[] | undefined;
  const { path, query } = options;
  for (;;) {
    const page = await request(sender, Requests.factsList, {
      workspaceUri: folderUri,
      offset,
      ...(path === undefined ? {} : { path }),
      ...(query === undefined ? {} : { query }),
    });
    if (offset === 0) {
      learning = page.learning ?? undefined; // every page reports it: the first one's is kept
      retirements = page.retirements ?? undefined; // only the first page of a plain listing has them
    }
    facts.push(...page.facts);
    const next = page.nextOffset;
    if (next === null || next === undefined) {
      return { facts: facts.slice(0, cap), more: facts.length > cap, learning, retirements };
    }
    if (facts.length >= cap) {
      return { facts: facts.slice(0, cap), more: true, learning, retirements };
    }
    if (next <= offset) {
      throw new Error("lecode-ls answered a page of facts that does not advance; refresh the Facts view");
    }
    offset = next;
  }
}

export const NO_FACTS = 'No facts yet. "lecode: Remember From Session…" or "lecode: Remember Selection as Fact…" stores one.';

/**
 * The nodes of one project's facts: first its memory health (when the doctor was asked), the
 * facts proposed for retirement, its latest automatic learning and the facts shared with the
 * team (when there are any).
 */
export function factNodes(
  folderUri: string,
  page: FactPage,
  empty = NO_FACTS,
  doctor?: DoctorResult | { problem: string },
  team?: TeamListing,
): FactNode[] {
  const nodes: FactNode[] = doctor === undefined ? [] : [{ kind: "health", doctor, folderUri }];
  nodes.push(...retirementsNode(folderUri, page.retirements, page.facts));
  if (page.learning) {
    nodes.push({ kind: "learning", learning: page.learning, folderUri });
  }
  nodes.push(...teamNode(folderUri, team));
  if (page.facts.length === 0) {
    nodes.push({ kind: "message", text: empty, folderUri });
    return nodes;
  }
  nodes.push(...page.facts.map((fact): FactNode => ({ kind: "fact", fact, folderUri })));
  if (page.more) {
    nodes.push({ kind: "more", folderUri, shown: page.facts.length });
  }
  return nodes;
}

/**
 * A fact's children: its source, its code anchors, and the project file a verified project fact
 * names (unless an anchor already leads to that file, more precisely).
 */
export function factChildren(node: FactNodeOf<"fact">): FactNode[] {
  const { fact, folderUri } = node;
  const children: FactNode[] = [];
  if (fact.source) {
    children.push({ kind: "source", fact, source: fact.source, folderUri });
  }
  const anchors = fact.anchors ?? [];
  children.push(...anchors.map((anchor): FactNode => ({ kind: "anchor", fact, anchor, folderUri })));
  const claim = fact.text ? parseProjectFileFact(fact.text) : undefined;
  if (claim !== undefined && !anchors.some((anchor) => anchor.path === claim.path || anchor.currentPath === claim.path)) {
    children.push({ kind: "file", fact, claim, folderUri });
  }
  return children;
}

/** The label of a fact: its text on one line, or `(#id, status)` when the server sent none. */
export function factLabel(fact: FactEntry): string {
  const text = fact.text?.replace(/\s+/g, " ").trim();
  return text ? text : `(#${fact.factId}, ${fact.status})`;
}

function statusIcon(status: FactEntry["status"]): vscode.ThemeIcon {
  const icon = STATUS_ICONS[status] ?? { id: "circle-outline" };
  return icon.color === undefined ? new vscode.ThemeIcon(icon.id) : new vscode.ThemeIcon(icon.id, new vscode.ThemeColor(icon.color));
}

/** The command a click on a node runs (navigation), if any. */
function openCommand(node: FactNode): vscode.Command {
  return { command: "lecode.openFactSource", title: "Go to Source", arguments: [node] };
}

export function factTreeItem(node: FactNode): vscode.TreeItem {
  switch (node.kind) {
    case "project": {
      const name = node.project.projectRoot.split(/[\\/]/).filter(Boolean).pop() ?? node.project.projectRoot;
      const item = new vscode.TreeItem(name, vscode.TreeItemCollapsibleState.Expanded);
      item.description = node.project.projectRoot;
      item.tooltip = `Facts of ${node.project.projectRoot}`;
      item.iconPath = new vscode.ThemeIcon("repo");
      item.contextValue = "lecode.project";
      return item;
    }
    case "fact": {
      const { fact } = node;
      const children = factChildren(node);
      const item = new vscode.TreeItem(
        factLabel(fact),
        children.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
      );
      const { shared } = fact;
      item.description = `#${fact.factId} r${fact.revision} ${fact.status}${fact.pinned ? " · pinned" : ""}${shared ? " · shared" : ""}${driftSuffix(fact)}`;
      item.iconPath = driftedIcon(fact) ?? statusIcon(fact.status);
      const lines = [`Fact #${fact.factId}, revision ${fact.revision}: ${fact.status === "valid" ? "valid" : sourceIs(fact.status)}`];
      if (fact.text) {
        lines.push("", fact.text + (fact.factTextTruncated ? " …(cut at 512 characters)" : ""), "", "Untrusted data, not instructions.");
      }
      if (fact.source) {
        lines.push(`Evidence: session ${fact.source.sessionId}, ${seqsPhrase(fact.source.seqs)}`);
      }
      if (fact.matched && fact.matched.length > 0) {
        lines.push(`Matched: ${fact.matched.join(", ")}`);
      }
      if (fact.pinned) {
        lines.push("Pinned: every chat request's memory shows it first.");
      }
      if (shared) {
        lines.push(`Shared${shared.sharedBy ? ` by ${shared.sharedBy}` : ""} in ${shared.file} (commit it)`);
      }
      lines.push(...driftTooltip(fact));
      item.tooltip = lines.join("\n");
      // `.pinned`, then `.shared`, at the end: Pin or Unpin, and Share with Team or Stop Sharing,
      // are offered by them (package.json).
      item.contextValue = `lecode.fact.${fact.status}${fact.pinned ? ".pinned" : ""}${shared ? ".shared" : ""}`;
      if (children.length > 0) {
        item.command = openCommand(node);
      }
      return item;
    }
    case "source": {
      const item = new vscode.TreeItem(`session ${node.source.sessionId}`, vscode.TreeItemCollapsibleState.None);
      item.description = seqsPhrase(node.source.seqs);
      item.tooltip = `Open the transcript of session ${node.source.sessionId} with ${seqsPhrase(node.source.seqs)} selected`;
      item.iconPath = new vscode.ThemeIcon("comment-discussion");
      item.command = openCommand(node);
      item.contextValue = "lecode.factSource";
      return item;
    }
    case "file": {
      const item = new vscode.TreeItem(node.claim.path, vscode.TreeItemCollapsibleState.None);
      if (node.claim.ok) {
        item.description = JSON.stringify(node.claim.line);
        item.tooltip = `Open ${node.claim.path} at the first line equal to ${JSON.stringify(node.claim.line)}`;
        item.iconPath = new vscode.ThemeIcon("file");
        item.command = openCommand(node);
      } else {
        item.description = "refused";
        item.tooltip = node.claim.problem;
        item.iconPath = new vscode.ThemeIcon("circle-slash");
      }
      item.contextValue = "lecode.factFile";
      return item;
    }
    case "anchor":
      return anchorTreeItem(node);
    case "more": {
      const item = new vscode.TreeItem("more…", vscode.TreeItemCollapsibleState.None);
      item.description = `the first ${node.shown} facts are shown`;
      item.tooltip = `Show ${FACTS_CAP} more facts`;
      item.iconPath = new vscode.ThemeIcon("ellipsis");
      item.command = { command: "lecode.showMoreFacts", title: "Show More Facts", arguments: [node] };
      item.contextValue = "lecode.factsMore";
      return item;
    }
    case "learning":
      return learningTreeItem(node);
    case "proposal":
      return proposalTreeItem(node);
    case "health":
      return healthTreeItem(node);
    case "healthRow":
      return healthRowTreeItem(node);
    case "retirements":
      return retirementsTreeItem(node);
    case "retirement":
      return retirementTreeItem(node);
    case "team":
      return teamTreeItem(node);
    case "teamFact":
      return teamFactTreeItem(node);
    case "message": {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.iconPath = new vscode.ThemeIcon("info");
      item.tooltip = node.text;
      return item;
    }
  }
}

/** The file the "current file" filter lists the facts of: the active editor's, when local. */
export interface CurrentFile {
  /** Its `file:` URI, sent as `path`. */
  uri: string;
  /** Its name, for messages. */
  name: string;
  /** The workspace folder holding it, if any. */
  folderUri?: string;
}

/** What the tree lists: every fact, those anchored in the current file (none open: undefined),
 * or those that rank for a query (the Search Facts… box). */
export type FactsFilter = { kind: "all" } | { kind: "file"; file?: CurrentFile } | { kind: "query"; query: string };

function sameFilter(a: FactsFilter, b: FactsFilter): boolean {
  if (a.kind === "file" && b.kind === "file") {
    return a.file?.uri === b.file?.uri;
  }
  if (a.kind === "query" && b.kind === "query") {
    return a.query === b.query;
  }
  return a.kind === b.kind;
}

export class FactsTreeProvider implements vscode.TreeDataProvider<FactNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<FactNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** How many facts each project shows, by its folder URI, once "more…" was used. */
  private readonly caps = new Map<string, number>();
  private current: FactsFilter = { kind: "all" };

  constructor(
    private readonly sender: RequestSender,
    private readonly projects: Pick<ProjectIndex, "projects" | "problems">,
    private readonly status: ServerStatus,
  ) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  /** Show FACTS_CAP more facts of the project of `folderUri`. */
  showMore(folderUri: string): void {
    this.caps.set(folderUri, (this.caps.get(folderUri) ?? FACTS_CAP) + FACTS_CAP);
    this.refresh();
  }

  get filter(): FactsFilter {
    return this.current;
  }

  /** List every fact, or those of a file; the tree redraws when this changes what it lists. */
  setFilter(filter: FactsFilter): void {
    const same = sameFilter(filter, this.current);
    this.current = filter;
    if (!same) {
      this.refresh();
    }
  }

  getTreeItem(node: FactNode): vscode.TreeItem {
    return factTreeItem(node);
  }

  async getChildren(node?: FactNode): Promise<FactNode[]> {
    if (node === undefined) {
      return this.roots();
    }
    switch (node.kind) {
      case "project":
        return this.factsOf(node.project);
      case "fact":
        return factChildren(node);
      case "learning":
        return proposalNodes(node);
      case "health":
        return healthRows(node);
      case "retirements":
        return retirementNodes(node);
      case "team":
        return teamChildren(node);
      default:
        return [];
    }
  }

  private async roots(): Promise<FactNode[]> {
    const filter = this.current;
    if (filter.kind === "all" || this.status.notRunning !== undefined) {
      return projectRoots(this.status, this.projects, (project) => this.factsOf(project));
    }
    if (filter.kind === "query") {
      const empty = `No fact matches "${filter.query}".`;
      return projectRoots(this.status, this.projects, (project) =>
        projectChildrenOr(project, async (folderUri) => {
          const page = await listFacts(this.sender, folderUri, FACTS_CAP, { query: filter.query });
          return factNodes(folderUri, { ...page, learning: undefined, retirements: undefined }, empty);
        }),
      );
    }
    const file = filter.file;
    if (file === undefined) {
      return [{ kind: "message", text: "Open a file to see the facts anchored in it." }];
    }
    const project = this.projects.projects.find((p) => p.folders.some((folder) => folder.uri === file.folderUri));
    if (project === undefined) {
      return [{ kind: "message", text: `${file.name} is not in a workspace folder, so no facts are anchored in it.` }];
    }
    const empty = `No facts are anchored in ${file.name}. Select lines and run "lecode: Remember Selection as Fact…".`;
    return projectChildrenOr(project, async (folderUri) => {
      const page = await listFacts(this.sender, folderUri, this.caps.get(folderUri) ?? FACTS_CAP, { path: file.uri });
      // The latest learning is about the project, not this file.
      return factNodes(folderUri, { ...page, learning: undefined, retirements: undefined }, empty);
    });
  }

  /**
   * A project's facts, with its health and its team's shared facts: the doctor and the team
   * listing run beside the listing, on every redraw.
   */
  private factsOf(project: Project): Promise<FactNode[]> {
    return projectChildrenOr(project, async (folderUri) => {
      const [page, doctor, team] = await Promise.all([
        listFacts(this.sender, folderUri, this.caps.get(folderUri) ?? FACTS_CAP),
        request(this.sender, Requests.memoryDoctor, { workspaceUri: folderUri }).catch((error: unknown) => ({ problem: errorMessage(error) })),
        loadTeam(this.sender, folderUri),
      ]);
      return factNodes(folderUri, page, NO_FACTS, doctor, team);
    });
  }

  dispose(): void {
    this.changed.dispose();
  }
}
