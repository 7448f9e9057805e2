/**
 * The nodes of the Facts tree, a union on `kind`. They live apart from the tree so that the
 * modules that build and show parts of it (learningItems.ts, the fact and proposal commands)
 * can name them without importing the tree itself, which imports them back for their values.
 */
import type { Project } from "../common/projects";
import type { DoctorResult, FactEntry, LearningModel, ProposalModel, RetirementModel, SourceRefModel, TeamFactEntry, TeamListResult } from "../common/protocol";
import type { ProjectFileClaim } from "../facts/projectFile";
import type { AnchorNode } from "./anchorItems";

export type FactNode =
  | { kind: "project"; project: Project }
  | { kind: "fact"; fact: FactEntry; folderUri: string }
  | { kind: "source"; fact: FactEntry; source: SourceRefModel; folderUri: string }
  | { kind: "file"; fact: FactEntry; claim: ProjectFileClaim; folderUri: string }
  | AnchorNode
  | { kind: "more"; folderUri: string; shown: number }
  | { kind: "learning"; learning: LearningModel; folderUri: string }
  | { kind: "proposal"; learning: LearningModel; proposal: ProposalModel; folderUri: string }
  | { kind: "retirements"; retirements: RetirementModel[]; facts: FactEntry[]; folderUri: string }
  | { kind: "retirement"; retirement: RetirementModel; fact?: FactEntry; folderUri: string }
  | { kind: "health"; doctor: DoctorResult | { problem: string }; folderUri: string }
  | { kind: "healthRow"; row: HealthRow; folderUri: string }
  | { kind: "team"; team: TeamListing; folderUri: string }
  | { kind: "teamFact"; entry: TeamFactEntry; folderUri: string }
  | { kind: "message"; text: string; folderUri?: string };

/** One number of the memory doctor, with the facts behind it. */
export interface HealthRow {
  label: string;
  /** Absent on the "All clear" line, which counts nothing. */
  count?: number;
  /** The fact IDs behind it (at most the doctor's first 50), when it counts facts. */
  ids?: number[];
  /** A sentence for the tooltip: what it counts. */
  meaning: string;
  /** The IDs in words (`#1, #4`, duplicate groups `#1 = #4`), or other detail such as bytes. */
  detail: string;
}

/** The shared facts of a checkout (`lecode/facts/team`, every page up to a cap; see teamItems.ts). */
export interface TeamPage {
  facts: TeamFactEntry[];
  /** Whether the checkout has more shared facts than were read. */
  more: boolean;
  /** The first page's counts: files in the checkout, files not read and why, files still loading. */
  total: number;
  skipped: TeamListResult["skipped"];
  pending: number;
}

/** What the Team node shows: the listing, or the server's sentence when it failed. */
export type TeamListing = TeamPage | { problem: string };

export type FactNodeOf<K extends FactNode["kind"]> = Extract<FactNode, { kind: K }>;
