/**
 * The nodes of the Facts tree, a union on `kind`. They live apart from the tree so that the
 * modules that build and show parts of it (learningItems.ts, the fact and proposal commands)
 * can name them without importing the tree itself, which imports them back for their values.
 */
import type { Project } from "../common/projects";
import type { FactEntry, LearningModel, ProposalModel, SourceRefModel } from "../common/protocol";
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
  | { kind: "message"; text: string; folderUri?: string };

export type FactNodeOf<K extends FactNode["kind"]> = Extract<FactNode, { kind: K }>;
